#pragma once
// DeviceMonitorPanel: a MemoryGauge per device seen in DeviceSample events — the process's RAM
// always, and each CUDA device (allocated/reserved/peak vs total) once its samples arrive. The
// gauges scroll when more of them (many GPUs, many ranks) than the panel's height hold.

#include "engine/events/Events.h"

#include <QGroupBox>

#include <map>

class QVBoxLayout;

namespace hearth::ui {

class MemoryGauge;

// "rank 1 of 2 (cpu, pid 4242): 583 samples/s, gradient communication 1.1 ms/step, data wait
// 0.10 %, peak memory 325.6 MiB, log …": the log line and the gauges' tooltip of a rank.
QString describeRank(const hearth::RankSummary& rank);
// The driver's view of a device from its NVML fields; "" when it has none.
QString deviceDetails(const hearth::DeviceSample& sample);

class DeviceMonitorPanel final : public QGroupBox {
    Q_OBJECT

public:
    explicit DeviceMonitorPanel(QWidget* parent = nullptr);

    void clear();
    // The run's training device ("cpu", "cuda:0"): on a CPU run, GPU samples are the driver's
    // view of GPUs the run does not use.
    void setRunDevice(const QString& device);
    // One gauge per rank and device: rank 0's arrive live, the other ranks' when fit ends.
    void addSample(const hearth::DeviceSample& sample);
    // A rank's throughput on its gauges' titles, its communication in their tooltips.
    void addRank(const hearth::RankSummary& rank);
    // device -1: the process on the host; >= 0: CUDA device index. Null when not seen yet.
    MemoryGauge* gauge(int64_t device, int64_t rank = 0) const;

private:
    using Key = std::pair<int64_t, int64_t>;   // rank, device
    MemoryGauge* gaugeFor(Key key, const QString& title);
    QString titleOf(const hearth::DeviceSample& sample) const;

    QVBoxLayout* m_layout;
    std::map<Key, MemoryGauge*> m_gauges;
    std::map<int64_t, QString> m_rankNotes;   // rank -> " · 583 samples/s"
    std::map<Key, hearth::DeviceSample> m_last;
    bool m_cpuRun = false;
};

}  // namespace hearth::ui
