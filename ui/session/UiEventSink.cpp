#include "ui/session/UiEventSink.h"

#include <utility>

namespace hearth::ui {

UiEventSink::UiEventSink(std::size_t soft_limit) : m_softLimit(soft_limit)
{
    m_queue.reserve(256);
}

void UiEventSink::onEvent(const hearth::Event& event)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_queue.size() >= m_softLimit && std::holds_alternative<hearth::StepMetrics>(event)
        && !m_queue.empty() && std::holds_alternative<hearth::StepMetrics>(m_queue.back())) {
        // Keep the newest step: its counters (step, elapsed, ETA) supersede the older one.
        m_queue.back() = event;
        m_coalesced.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    m_queue.push_back(event);
}

std::vector<hearth::Event> UiEventSink::takeAll()
{
    // Allocate the replacement outside the lock so the engine thread waits only for a swap.
    std::vector<hearth::Event> batch;
    batch.reserve(256);
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        batch.swap(m_queue);
    }
    return batch;
}

std::size_t UiEventSink::pending() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_queue.size();
}

}  // namespace hearth::ui
