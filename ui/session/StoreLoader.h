#pragma once
// StoreLoader: a view's own RunStore connection on its own thread, so that reading the store
// never holds up the window. A view asks for a load (a function of the store); the value, or
// the store's error message, comes back on the GUI thread. Only the newest load matters: one
// asked for earlier is skipped if it has not started, and its result is dropped if it has.

#include "storage/RunStore.h"

#include <QObject>
#include <QString>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>

namespace hearth::ui {

class StoreLoader final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(StoreLoader)

public:
    // The store at `dbPath` is opened on the loader's thread, at the first load.
    explicit StoreLoader(QString dbPath, QObject* parent = nullptr);
    ~StoreLoader() override;   // skips what has not started, waits for the running load

    // Runs `load(const hearth::RunStore&)` on the loader's thread, then `onLoaded(value)` or
    // `onError(message)` on this object's thread, unless a newer load was asked for meanwhile.
    template <class Load, class OnLoaded, class OnError>
    void load(Load load, OnLoaded onLoaded, OnError onError);

    // A load asked for and not yet delivered (or dropped by a newer one).
    bool isLoading() const { return m_delivered != m_generation; }
    const QString& dbPath() const { return m_dbPath; }

private:
    // Runs on the loader's thread with the store (null when it cannot be opened, `openError`
    // says why) and returns what to do on this object's thread.
    using Task = std::function<std::function<void()>(const hearth::RunStore* store, const QString& openError)>;

    void schedule(Task task);
    void run();

    QString m_dbPath;
    quint64 m_generation = 0;   // GUI thread: the newest load asked for
    quint64 m_delivered = 0;    // GUI thread: the newest load whose result arrived

    std::mutex m_mutex;         // guards the fields below, shared with the loader thread
    std::condition_variable m_wake;
    Task m_pending;
    quint64 m_pendingGeneration = 0;
    bool m_stopping = false;
    std::thread m_thread;
};

template <class Load, class OnLoaded, class OnError>
void StoreLoader::load(Load load, OnLoaded onLoaded, OnError onError)
{
    using Value = std::invoke_result_t<Load&, const hearth::RunStore&>;
    schedule([load = std::move(load), onLoaded = std::move(onLoaded), onError = std::move(onError)](
                 const hearth::RunStore* store, const QString& openError) mutable -> std::function<void()> {
        if (!store)
            return [onError, openError]() mutable { onError(openError); };
        try {
            // Shared, so that a large value (a million-step curve) is never copied on its way.
            auto value = std::make_shared<Value>(load(*store));
            return [onLoaded, value]() mutable { onLoaded(std::move(*value)); };
        } catch (const std::exception& e) {
            return [onError, message = QString::fromStdString(e.what())]() mutable { onError(message); };
        } catch (...) {
            return [onError]() mutable { onError(QStringLiteral("Reading the run store failed.")); };
        }
    });
}

}  // namespace hearth::ui
