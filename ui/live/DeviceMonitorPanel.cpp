#include "ui/live/DeviceMonitorPanel.h"

#include "ui/live/MemoryGauge.h"
#include "ui/widgets/Format.h"

#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>

namespace hearth::ui {

QString describeRank(const hearth::RankSummary& r)
{
    QString text = QObject::tr("rank %1 of %2 (%3, pid %4): %5 samples/s")
                       .arg(r.rank)
                       .arg(r.world_size)
                       .arg(qstr(r.device))
                       .arg(r.pid)
                       .arg(r.samples_per_sec, 0, 'f', 0);
    if (r.comm_steps > 0)
        text += QObject::tr(", gradient communication %1 ms/step").arg(r.comm_ms, 0, 'f', 1);
    if (r.train_time_s > 0.0)
        text += QObject::tr(", data wait %1").arg(formatPercent(r.data_wait_s / r.train_time_s));
    text += QObject::tr(", peak memory %1").arg(formatBytes(r.peak_memory_bytes));
    if (!r.log_path.empty())
        text += QObject::tr(", log %1").arg(qstr(r.log_path));
    return text;
}

// The driver's view of a GPU (NVML): "61 °C · 312 W of 700 W · 1980 MHz · driver: 6.2 GiB used".
QString deviceDetails(const hearth::DeviceSample& s)
{
    QStringList parts;
    if (s.temperature_c >= 0)
        parts << QObject::tr("%1 °C").arg(s.temperature_c, 0, 'f', 0);
    if (s.power_w >= 0)
        parts << (s.power_limit_w > 0 ? QObject::tr("%1 W of %2 W").arg(s.power_w, 0, 'f', 0).arg(s.power_limit_w, 0, 'f', 0)
                                      : QObject::tr("%1 W").arg(s.power_w, 0, 'f', 0));
    if (s.sm_clock_mhz >= 0)
        parts << QObject::tr("%1 MHz").arg(s.sm_clock_mhz, 0, 'f', 0);
    if (s.driver_used_bytes >= 0 && s.device >= 0)
        parts << QObject::tr("driver: %1 used").arg(formatBytes(s.driver_used_bytes));
    return parts.join(QStringLiteral(" · "));
}

DeviceMonitorPanel::DeviceMonitorPanel(QWidget* parent) : QGroupBox(tr("Devices"), parent), m_layout(nullptr)
{
    auto* scroll = new QScrollArea;
    scroll->setObjectName(QStringLiteral("deviceGauges"));
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setWidgetResizable(true);   // the gauges take the width, each its height for it
    auto* gauges = new QWidget;
    m_layout = new QVBoxLayout(gauges);
    m_layout->setContentsMargins(0, 0, 0, 0);
    m_layout->addStretch(1);
    scroll->setWidget(gauges);
    scroll->viewport()->setAutoFillBackground(false);
    auto* outer = new QVBoxLayout(this);
    outer->addWidget(scroll);
    clear();
}

void DeviceMonitorPanel::clear()
{
    for (auto& [key, gauge] : m_gauges)
        delete gauge;
    m_gauges.clear();
    m_rankNotes.clear();
    m_cpuRun = false;
    m_last.clear();
    // The process gauge is always there, so the panel does not jump when the first sample lands.
    gaugeFor({0, -1}, tr("Process RAM"));
}

MemoryGauge* DeviceMonitorPanel::gaugeFor(Key key, const QString& title)
{
    auto it = m_gauges.find(key);
    if (it != m_gauges.end())
        return it->second;
    auto* gauge = new MemoryGauge(title, this);
    gauge->setObjectName(QStringLiteral("%1%2%3")
                             .arg(key.second < 0 ? QStringLiteral("hostGauge") : QStringLiteral("cudaGauge"))
                             .arg(key.second < 0 ? QString() : QString::number(key.second))
                             .arg(key.first == 0 ? QString() : QStringLiteral("_rank%1").arg(key.first)));
    // Rank by rank, and within a rank host first, then cuda:0, cuda:1, ... above the stretch.
    int position = 0;
    for (const auto& [k, g] : m_gauges)
        position += k < key ? 1 : 0;
    m_layout->insertWidget(position, gauge);
    m_gauges[key] = gauge;
    return gauge;
}

QString DeviceMonitorPanel::titleOf(const hearth::DeviceSample& s) const
{
    // Rank names matter only in a data-parallel run (another rank's gauges, or rank notes).
    const bool several = std::any_of(m_gauges.begin(), m_gauges.end(), [](const auto& g) { return g.first.first > 0; }) ||
                         s.rank > 0 || m_rankNotes.count(s.rank) > 0;
    QString title = s.device < 0 ? (several ? tr("RAM") : tr("Process RAM"))
                                 : QStringLiteral("cuda:%1  %2").arg(s.device).arg(qstr(s.name));
    // A CPU run on a machine with GPUs shows them as the driver sees them (every process's use).
    if (s.device >= 0 && m_cpuRun)
        title = tr("GPU %1  %2 (not used by this run)").arg(s.device).arg(qstr(s.name));
    if (several)
        title = tr("rank %1 · %2").arg(s.rank).arg(title);
    if (const auto note = m_rankNotes.find(s.rank); note != m_rankNotes.end())
        title += note->second;
    return title;
}

void DeviceMonitorPanel::setRunDevice(const QString& device)
{
    m_cpuRun = device == QStringLiteral("cpu");
}

void DeviceMonitorPanel::addSample(const hearth::DeviceSample& s)
{
    m_last[{s.rank, s.device}] = s;
    MemoryGauge* gauge = gaugeFor({s.rank, s.device}, titleOf(s));
    gauge->setTitle(titleOf(s));
    gauge->setUsage(s.allocated_bytes, s.device < 0 ? 0 : s.reserved_bytes, s.peak_bytes, s.total_bytes,
                    s.utilization);
    gauge->setDetails(deviceDetails(s));
}

void DeviceMonitorPanel::addRank(const hearth::RankSummary& r)
{
    m_rankNotes[r.rank] = tr(" · %1 samples/s").arg(r.samples_per_sec, 0, 'f', 0);
    for (const auto& [key, sample] : m_last) {
        if (key.first != r.rank)
            continue;
        m_gauges.at(key)->setTitle(titleOf(sample));
        if (r.final)   // live updates carry only the interval's samples/s
            m_gauges.at(key)->setToolTip(describeRank(r));
    }
}

MemoryGauge* DeviceMonitorPanel::gauge(int64_t device, int64_t rank) const
{
    const auto it = m_gauges.find({rank, device});
    return it == m_gauges.end() ? nullptr : it->second;
}

}  // namespace hearth::ui
