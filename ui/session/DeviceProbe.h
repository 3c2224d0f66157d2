#pragma once
// DeviceProbe: what this machine offers for training, asked once per process on a pool thread.
// hearth::queryDeviceCapabilities reads /proc/cpuinfo and initialises the CUDA driver, which can
// take seconds: the GUI thread never calls it. Until the answer comes, the views assume a
// CPU-only machine and say that the devices are being probed; `ready` tells them it came.

#include "engine/config/ExperimentConfig.h"

#include <QObject>

#include <functional>

namespace hearth::ui {

class DeviceProbe final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DeviceProbe)

public:
    using Probe = std::function<hearth::DeviceCapabilities()>;

    // The process's probe: the first call (on the GUI thread, with a QApplication) starts it.
    static DeviceProbe& instance();
    // Probes with `probe` instead of hearth::queryDeviceCapabilities (tests: to see where and how
    // often it runs). Takes effect only before the first instance().
    static void setProbe(Probe probe);

    bool isReady() const { return m_ready; }
    // This machine's capabilities; a CPU-only machine's until isReady().
    const hearth::DeviceCapabilities& capabilities() const { return m_caps; }

Q_SIGNALS:
    void ready();   // once, on the GUI thread

private:
    explicit DeviceProbe(QObject* parent);

    hearth::DeviceCapabilities m_caps;
    bool m_ready = false;
};

}  // namespace hearth::ui
