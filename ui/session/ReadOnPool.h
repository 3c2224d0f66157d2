#pragma once
// readOnPool: runs `read` on a pool thread and hands its value, or the message of what it threw, to
// `deliver` on the GUI thread while `owner` lives (qApp outlives every view; the QPointer is read
// on the GUI thread). `deliver(value, error)` decides whether a newer read made the result stale.
// For files a view reads (images, CSVs) that could freeze the window when they are large.

#include <QCoreApplication>
#include <QMetaObject>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QThreadPool>

#include <exception>

namespace hearth::ui {

template <typename T, typename Read, typename Deliver>
void readOnPool(QObject* owner, Read read, Deliver deliver)
{
    QThreadPool::globalInstance()->start([owner = QPointer<QObject>(owner), read, deliver] {
        T value{};
        QString error;
        try {
            value = read();
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        QMetaObject::invokeMethod(
            qApp, [owner, deliver, value, error] {
                if (owner)
                    deliver(value, error);
            },
            Qt::QueuedConnection);
    });
}

}  // namespace hearth::ui
