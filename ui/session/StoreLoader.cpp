#include "ui/session/StoreLoader.h"

#include <QMetaObject>

namespace hearth::ui {

StoreLoader::StoreLoader(QString dbPath, QObject* parent) : QObject(parent), m_dbPath(std::move(dbPath))
{
    m_thread = std::thread([this] { run(); });
}

StoreLoader::~StoreLoader()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        m_pending = nullptr;
    }
    m_wake.notify_one();
    m_thread.join();
    // Deliveries already posted to this object are discarded with it (~QObject).
}

void StoreLoader::schedule(Task task)
{
    const quint64 generation = ++m_generation;
    {
        std::lock_guard lock(m_mutex);
        m_pending = std::move(task);   // a load that has not started is replaced
        m_pendingGeneration = generation;
    }
    m_wake.notify_one();
}

void StoreLoader::run()
{
    std::unique_ptr<hearth::RunStore> store;
    for (;;) {
        Task task;
        quint64 generation = 0;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [this] { return m_stopping || m_pending; });
            if (m_stopping)
                return;
            task = std::move(m_pending);
            m_pending = nullptr;
            generation = m_pendingGeneration;
        }
        QString openError;
        if (!store) {
            try {
                store = std::make_unique<hearth::RunStore>(m_dbPath.toStdString());
            } catch (const std::exception& e) {
                openError = QString::fromStdString(e.what());   // tried again at the next load
            }
        }
        std::function<void()> deliver = task(store.get(), openError);
        task = nullptr;   // what the load captured is released here, not on the GUI thread
        QMetaObject::invokeMethod(
            this,
            [this, generation, deliver = std::move(deliver)] {
                if (generation != m_generation)
                    return;   // a newer load was asked for: this result is stale
                m_delivered = generation;
                deliver();
            },
            Qt::QueuedConnection);
    }
}

}  // namespace hearth::ui
