#pragma once
// UiEventSink: the engine-thread side of the live view. onEvent() copies the event into a
// mutex-protected queue and returns; the GUI thread takes the whole batch on a timer.

#include "engine/events/Events.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace hearth::ui {

class UiEventSink final : public hearth::EventSink {
public:
    // Beyond `soft_limit` queued events, a StepMetrics replaces a StepMetrics at the back of
    // the queue instead of growing it (the UI is behind; the store keeps every step).
    explicit UiEventSink(std::size_t soft_limit = 4096);

    void onEvent(const hearth::Event& event) override;

    // Moves everything queued out under the lock; the caller draws without holding it.
    std::vector<hearth::Event> takeAll();
    std::size_t pending() const;
    int64_t coalescedSteps() const { return m_coalesced.load(); }

private:
    const std::size_t m_softLimit;
    mutable std::mutex m_mutex;
    std::vector<hearth::Event> m_queue;
    std::atomic<int64_t> m_coalesced{0};
};

}  // namespace hearth::ui
