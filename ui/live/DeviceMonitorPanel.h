#pragma once
// DeviceMonitorPanel: a MemoryGauge per device seen in DeviceSample events — the process's RAM
// always, and each CUDA device (allocated/reserved/peak vs total) once its samples arrive.

#include "engine/events/Events.h"

#include <QGroupBox>

#include <map>

class QVBoxLayout;

namespace hearth::ui {

class MemoryGauge;

class DeviceMonitorPanel final : public QGroupBox {
    Q_OBJECT

public:
    explicit DeviceMonitorPanel(QWidget* parent = nullptr);

    void clear();
    void addSample(const hearth::DeviceSample& sample);
    // -1: the process on the host; >= 0: CUDA device index. Null when not seen yet.
    MemoryGauge* gauge(int64_t device) const;

private:
    MemoryGauge* gaugeFor(int64_t device, const QString& title);

    QVBoxLayout* m_layout;
    std::map<int64_t, MemoryGauge*> m_gauges;
};

}  // namespace hearth::ui
