#include "ui/session/DeviceProbe.h"

#include "engine/config/DeviceInfo.h"

#include <QCoreApplication>
#include <QPointer>
#include <QThreadPool>

namespace hearth::ui {

namespace {

DeviceProbe::Probe& probeFunction()
{
    static DeviceProbe::Probe probe = [] { return hearth::queryDeviceCapabilities(); };
    return probe;
}

}  // namespace

void DeviceProbe::setProbe(Probe probe)
{
    probeFunction() = std::move(probe);
}

DeviceProbe& DeviceProbe::instance()
{
    // Owned by the application: it goes with it.
    static DeviceProbe* probe = new DeviceProbe(QCoreApplication::instance());
    return *probe;
}

DeviceProbe::DeviceProbe(QObject* parent) : QObject(parent)
{
    QPointer<DeviceProbe> self(this);
    QThreadPool::globalInstance()->start([self, probe = probeFunction()] {
        hearth::DeviceCapabilities caps;   // a probe that fails leaves the CPU-only assumptions
        try {
            caps = probe();
        } catch (...) {
        }
        // qApp outlives the probe's delivery; the QPointer is read on the GUI thread.
        QMetaObject::invokeMethod(
            qApp,
            [self, caps] {
                if (!self)
                    return;
                self->m_caps = caps;
                self->m_ready = true;
                Q_EMIT self->ready();
            },
            Qt::QueuedConnection);
    });
}

}  // namespace hearth::ui
