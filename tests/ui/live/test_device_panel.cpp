// The Devices panel of the live view: a gauge per rank and device, their text wrapped to the
// panel's width, and a scroll bar only when the gauges need more height than the panel has.
#include "UiTestSupport.h"

#include "ui/live/DeviceMonitorPanel.h"
#include "ui/live/MemoryGauge.h"

#include <QScrollArea>
#include <QScrollBar>
#include <QStyle>
#include <QTest>

using namespace hearth;
using namespace hearth::ui;

namespace {

DeviceSample hostSample(int64_t rank)
{
    DeviceSample s;
    s.rank = rank;
    s.device = -1;
    s.name = "host";
    s.allocated_bytes = (int64_t{334} << 20) + rank * (int64_t{11} << 20);
    s.peak_bytes = s.allocated_bytes;
    s.total_bytes = int64_t{24} << 30;
    s.utilization = 0.45;
    return s;
}

RankSummary liveRank(int64_t rank, int64_t world)
{
    RankSummary r;
    r.rank = rank;
    r.world_size = world;
    r.samples_per_sec = 503;
    r.final = false;
    return r;
}

// The gauges' own heights at the scrolled area's width, with the layout's spacing between them.
int gaugesHeight(const DeviceMonitorPanel& panel, int width)
{
    const auto gauges = panel.findChildren<MemoryGauge*>();
    int height = 0;
    for (const MemoryGauge* g : gauges) height += g->heightForWidth(width);
    return height + (static_cast<int>(gauges.size()) - 1) * panel.style()->pixelMetric(QStyle::PM_LayoutVerticalSpacing);
}

}  // namespace

class TestDevicePanel : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // The size the live view gives the panel at 1280x800 (its bottom row's last quarter): two
    // ranks' gauges fit there with room to spare, so no scroll bar; with six ranks they do not,
    // and the panel scrolls rather than squeezing them.
    void twoRanksFitWithoutAScrollBarAndSixScroll()
    {
        DeviceMonitorPanel panel;
        panel.setRunDevice(QStringLiteral("cpu"));
        panel.resize(255, 222);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto* scroll = panel.findChild<QScrollArea*>(QStringLiteral("deviceGauges"));
        QVERIFY(scroll);
        for (int64_t rank = 0; rank < 2; ++rank) {
            panel.addSample(hostSample(rank));
            panel.addRank(liveRank(rank, 2));
        }
        const int width = scroll->maximumViewportSize().width();
        QVERIFY2(gaugesHeight(panel, width) < scroll->maximumViewportSize().height(),
                 qPrintable(QString("%1 px of gauges in %2 px").arg(gaugesHeight(panel, width))
                                .arg(scroll->maximumViewportSize().height())));
        // Every pending layout done (the scroll area decides its scroll bar in one), and each gauge
        // as high as its text needs.
        for (const MemoryGauge* g : panel.findChildren<MemoryGauge*>())
            QTRY_VERIFY2(g->isVisible() && g->height() >= g->heightForWidth(g->width()), qPrintable(g->objectName()));
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
        QCoreApplication::processEvents();
        QVERIFY2(!scroll->verticalScrollBar()->isVisible(),
                 qPrintable(QString("a scroll bar for %1 px of gauges in a %2 px viewport")
                                .arg(gaugesHeight(panel, width)).arg(scroll->maximumViewportSize().height())));

        for (int64_t rank = 0; rank < 6; ++rank) {
            panel.addSample(hostSample(rank));
            panel.addRank(liveRank(rank, 6));
        }
        QTRY_VERIFY(scroll->verticalScrollBar()->isVisible());
        QVERIFY(scroll->verticalScrollBar()->maximum() > 0);
        for (const MemoryGauge* g : panel.findChildren<MemoryGauge*>())   // scrolled, not squeezed
            QTRY_VERIFY2(g->height() >= g->heightForWidth(g->width()), qPrintable(g->objectName()));
    }

    // Before a run's first sample the process gauge says what it will show, not "0 B of ? · peak
    // 0 B"; the first sample gives its figures, and clearing for the next run says it again.
    void gaugesWaitForTheirFirstSample()
    {
        DeviceMonitorPanel panel;
        const MemoryGauge* host = panel.gauge(-1, 0);
        QVERIFY(host);
        QCOMPARE(host->summary(), QStringLiteral("measured while a run trains"));
        panel.addSample(hostSample(0));
        QCOMPARE(host->summary(), QStringLiteral("334.0 MiB of 24.00 GiB · peak 334.0 MiB · busy 45 %"));
        panel.clear();
        QCOMPARE(panel.gauge(-1, 0)->summary(), QStringLiteral("measured while a run trains"));
    }
};

QTEST_MAIN(TestDevicePanel)
#include "test_device_panel.moc"
