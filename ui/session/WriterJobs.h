#pragma once
// Database writes for the GUI thread, which never waits on the database: the process's one
// RunWriter per store, and writer jobs whose value or error message comes back on the GUI
// thread (dropped when the object that asked is gone by then).

#include "storage/RunWriter.h"

#include <QCoreApplication>
#include <QMetaObject>
#include <QObject>
#include <QPointer>
#include <QString>

#include <memory>
#include <type_traits>

namespace hearth::ui {

// The process's one RunWriter for `dbPath`: created (opening the store) on first use, shared
// while anyone holds it. Throws hearth::StoreError when the store cannot be opened.
std::shared_ptr<hearth::RunWriter> sharedRunWriter(const QString& dbPath);

// Runs `job(hearth::sqlite::Connection&)` on the writer thread (see RunWriter::submit) and
// returns at once; then, on the GUI thread and only while `receiver` lives, calls
// `onDone(value)` (`onDone()` for a void job) or `onError(message)` with the store's message.
template <class Job, class OnDone, class OnError>
void submitToWriter(hearth::RunWriter& writer, QObject* receiver, Job job, OnDone onDone, OnError onError)
{
    using Value = std::invoke_result_t<Job&, hearth::sqlite::Connection&>;
    const QPointer<QObject> guard(receiver);   // copied on the writer thread, read on the GUI thread only
    writer.submit(std::move(job), [guard, onDone = std::move(onDone),
                                   onError = std::move(onError)](hearth::JobResult<Value> result) mutable {
        auto shared = std::make_shared<hearth::JobResult<Value>>(std::move(result));
        QCoreApplication* app = QCoreApplication::instance();
        if (!app)
            return;   // the application is gone: nobody is left to tell
        QMetaObject::invokeMethod(
            app,
            [guard, onDone, onError, shared]() mutable {
                if (!guard)
                    return;
                if (!shared->ok())
                    onError(QString::fromStdString(shared->error));
                else if constexpr (std::is_void_v<Value>)
                    onDone();
                else
                    onDone(std::move(*shared->value));
            },
            Qt::QueuedConnection);
    });
}

}  // namespace hearth::ui
