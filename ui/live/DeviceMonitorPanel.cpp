#include "ui/live/DeviceMonitorPanel.h"

#include "ui/live/MemoryGauge.h"
#include "ui/widgets/Format.h"

#include <QVBoxLayout>

namespace hearth::ui {

DeviceMonitorPanel::DeviceMonitorPanel(QWidget* parent) : QGroupBox(tr("Memory"), parent), m_layout(new QVBoxLayout(this))
{
    m_layout->addStretch(1);
    clear();
}

void DeviceMonitorPanel::clear()
{
    for (auto& [device, gauge] : m_gauges)
        delete gauge;
    m_gauges.clear();
    // The process gauge is always there, so the panel does not jump when the first sample lands.
    gaugeFor(-1, tr("Process RAM"));
}

MemoryGauge* DeviceMonitorPanel::gaugeFor(int64_t device, const QString& title)
{
    auto it = m_gauges.find(device);
    if (it != m_gauges.end())
        return it->second;
    auto* gauge = new MemoryGauge(title, this);
    gauge->setObjectName(device < 0 ? QStringLiteral("hostGauge") : QStringLiteral("cudaGauge%1").arg(device));
    // Keep devices in index order above the stretch: host first, then cuda:0, cuda:1, ...
    int position = 0;
    for (const auto& [d, g] : m_gauges)
        position += d < device ? 1 : 0;
    m_layout->insertWidget(position, gauge);
    m_gauges[device] = gauge;
    return gauge;
}

void DeviceMonitorPanel::addSample(const hearth::DeviceSample& s)
{
    const QString title = s.device < 0 ? tr("Process RAM")
                                       : QStringLiteral("cuda:%1  %2").arg(s.device).arg(qstr(s.name));
    MemoryGauge* gauge = gaugeFor(s.device, title);
    gauge->setTitle(title);
    gauge->setUsage(s.allocated_bytes, s.device < 0 ? 0 : s.reserved_bytes, s.peak_bytes, s.total_bytes,
                    s.utilization);
}

MemoryGauge* DeviceMonitorPanel::gauge(int64_t device) const
{
    const auto it = m_gauges.find(device);
    return it == m_gauges.end() ? nullptr : it->second;
}

}  // namespace hearth::ui
