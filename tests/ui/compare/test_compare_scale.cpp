// CompareView at the scale of a sweep, over runs written straight to the store
// (SyntheticRuns.h): the legend beside the plot, highlighting from the legend and the curves,
// colouring by a setting or a sweep, log-scale losses, sorted bars that fit their width or a
// sortable table past forty runs, the sweep scatter, and curves decimated to the cap.
#include "CompareTestSupport.h"
#include "SyntheticRuns.h"
#include "UiTestSupport.h"

#include "ui/compare/CompareBars.h"
#include "ui/compare/CompareCurves.h"
#include "ui/compare/CompareLegend.h"
#include "ui/compare/CompareTables.h"
#include "ui/compare/CompareView.h"
#include "ui/compare/SweepScatter.h"
#include "ui/widgets/StackedBars.h"

#include <QMouseEvent>
#include <QRegularExpression>
#include <QScrollBar>
#include <QTableWidget>
#include <QTest>
#include <QToolButton>
#include <QTreeWidget>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <numeric>

#include <qcustomplot.h>

using namespace hearth::ui;
using hearth::test::load;

class TestCompareScale : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_scaleDb;   // 50 synthetic runs
    std::vector<hearth::test::SyntheticRun> m_synthetic;

    // 20 of the 50 synthetic runs, their lr spanning 1e-4 .. 1e-1, in a scrambled order.
    static std::vector<int> spread20()
    {
        std::vector<int> runs;
        for (int j : {5, 17, 0, 12, 3, 19, 8, 1, 14, 10, 6, 18, 2, 15, 9, 11, 4, 16, 7, 13})
            runs.push_back((j * 49 + 9) / 19);
        return runs;
    }

    QList<qint64> idsOf(const std::vector<int>& runs) const
    {
        QList<qint64> ids;
        for (int i : runs)
            ids << m_synthetic[size_t(i)].id;
        return ids;
    }

    QList<qint64> syntheticIds(int n) const
    {
        QList<qint64> ids;
        for (int i = 0; i < n; ++i)
            ids << m_synthetic[size_t(i)].id;
        return ids;
    }

    // Run `run` (or none, -1) is drawn thick above a veil over the others, every graph unchanged.
    static void verifyHighlighted(const CompareView& view, int run)
    {
        const QCPCurve* top = view.curvesView()->highlightCurve();
        QCOMPARE(top->visible(), run >= 0);
        QCOMPARE(view.curvesView()->othersFaded(), run >= 0);
        for (int i = 0; i < view.curves()->graphCount(); ++i) {
            QCOMPARE(view.curves()->graph(i)->pen().widthF(), 1.0);
            QCOMPARE(view.curves()->graph(i)->pen().color().alpha(), 255);
        }
        if (run < 0)
            return;
        const QCPGraph* g = view.curves()->graph(run);
        QCOMPARE(top->pen().widthF(), 2.5);
        QCOMPARE(top->pen().color(), g->pen().color());
        QCOMPARE(top->layer()->name(), QStringLiteral("highlight"));
        QVERIFY(top->layer()->index() > g->layer()->index());
        QCOMPARE(top->dataCount(), g->dataCount());
        QCOMPARE(top->data()->at(5)->key, g->data()->at(5)->key);
        QCOMPARE(top->data()->at(5)->value, g->data()->at(5)->value);
    }

    // A laid-out, painted view, so that pixel positions mean something.
    static void showAndLayOut(CompareView& view)
    {
        view.resize(1500, 950);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.curves()->replot();
        view.bars()->replot();
    }

private Q_SLOTS:
    void initTestCase()
    {
        hearth::test::isolateSettings(m_dir);
        m_scaleDb = m_dir.filePath(QStringLiteral("scale.sqlite"));
        m_synthetic = hearth::test::writeSyntheticRuns(m_scaleDb.toStdString(), 50, 1200);
    }


    void legendListsEveryRunBesideThePlot()
    {
        CompareView view(m_scaleDb);
        load(view, syntheticIds(20));
        showAndLayOut(view);
        CompareLegend* legend = view.legend();
        QCOMPARE(legend->runCount(), 20);
        QCOMPARE(legend->tree()->topLevelItemCount(), 20);
        QVERIFY(!view.curves()->legend->visible());
        QCOMPARE(view.curves()->legend->itemCount(), 0);
        QVERIFY(!view.curves()->isAncestorOf(legend));
        const QRect legendRect(legend->mapTo(&view, QPoint()), legend->size());
        const QRect plotRect(view.curves()->mapTo(&view, QPoint()), view.curves()->size());
        QVERIFY(legend->isVisible());
        QVERIFY2(!legendRect.intersects(plotRect), "the legend must not cover the curves");
        QSet<QRgb> colours;
        for (int i = 0; i < 20; ++i) {
            QTreeWidgetItem* item = legend->itemForRun(i);
            QVERIFY(item);
            QVERIFY(item->text(0).startsWith(QStringLiteral("#%1 synthetic-%2").arg(m_synthetic[size_t(i)].id).arg(i)));
            const QColor pen = view.curves()->graph(i)->pen().color();
            QCOMPARE(item->icon(0).pixmap(QSize(14, 10)).toImage().pixelColor(7, 5).rgba(), pen.rgba());
            colours.insert(pen.rgb());
        }
        QCOMPARE(colours.size(), 20);   // by run: every run its own colour

        legend->setFilterText(QStringLiteral("synthetic-1"));   // 1 and 10..19
        QCOMPARE(legend->visibleRunCount(), 11);
        legend->setFilterText(QString());
        QCOMPARE(legend->visibleRunCount(), 20);
    }

    void tablesShowSeveralRows()
    {
        CompareView view(m_scaleDb);
        load(view, syntheticIds(20));
        showAndLayOut(view);
        for (QTableWidget* t : {view.metricsTable(), view.diffTable()}) {
            QCOMPARE(t->rowCount(), 20);
            const int rowHeight = t->verticalHeader()->defaultSectionSize();
            QVERIFY2(t->viewport()->height() >= 4 * rowHeight,
                     qPrintable(QStringLiteral("%1: %2 px for rows of %3 px").arg(t->objectName()).arg(t->viewport()->height()).arg(rowHeight)));
            QVERIFY(t->isSortingEnabled());
        }
        // Rows start in run order, and sort by number, not by text.
        QCOMPARE(view.metricsTable()->item(0, 0)->text().section(QLatin1Char(' '), 0, 0),
                 QStringLiteral("#%1").arg(m_synthetic[0].id));
        int lrColumn = -1;
        for (int c = 0; c < view.diffTable()->columnCount(); ++c) {
            if (view.diffTable()->horizontalHeaderItem(c)->text() == QStringLiteral("optimizer.lr"))
                lrColumn = c;
        }
        QVERIFY(lrColumn > 0);
        view.diffTable()->sortItems(lrColumn, Qt::DescendingOrder);
        QCOMPARE(view.diffTable()->item(0, 0)->text().section(QLatin1Char(' '), 0, 0),
                 QStringLiteral("#%1").arg(m_synthetic[19].id));
    }

    void legendEntryHighlightsExactlyThatCurve()
    {
        CompareView view(m_scaleDb);
        load(view, syntheticIds(20));
        showAndLayOut(view);
        QTreeWidget* tree = view.legend()->tree();
        QTreeWidgetItem* item = view.legend()->itemForRun(7);
        tree->scrollToItem(item);
        QTest::mouseClick(tree->viewport(), Qt::LeftButton, {}, tree->visualItemRect(item).center());
        QCOMPARE(view.legend()->pinnedRun(), 7);
        QCOMPARE(view.highlightedRun(), 7);
        verifyHighlighted(view, 7);
        QTest::mouseClick(tree->viewport(), Qt::LeftButton, {}, tree->visualItemRect(item).center());
        QCOMPARE(view.legend()->pinnedRun(), -1);
        QEvent leave(QEvent::Leave);
        QCoreApplication::sendEvent(tree->viewport(), &leave);
        QCOMPARE(view.highlightedRun(), -1);
        verifyHighlighted(view, -1);
    }

    void pointingAtALegendEntryHighlightsItsCurve()
    {
        CompareView view(m_scaleDb);
        load(view, syntheticIds(20));
        showAndLayOut(view);
        QTreeWidget* tree = view.legend()->tree();
        const QPointF at = tree->visualItemRect(view.legend()->itemForRun(5)).center();
        QMouseEvent move(QEvent::MouseMove, at, tree->viewport()->mapToGlobal(at), Qt::NoButton, Qt::NoButton,
                         Qt::NoModifier);
        QCoreApplication::sendEvent(tree->viewport(), &move);
        QCOMPARE(view.highlightedRun(), 5);
        verifyHighlighted(view, 5);
        QCOMPARE(view.legend()->pinnedRun(), -1);   // pointing does not pin
        QEvent leave(QEvent::Leave);
        QCoreApplication::sendEvent(tree->viewport(), &leave);
        QCOMPARE(view.highlightedRun(), -1);
        verifyHighlighted(view, -1);
    }

    void hoveringACurveNamesItsRun()
    {
        CompareView view(m_scaleDb);
        load(view, syntheticIds(20));
        showAndLayOut(view);
        QCustomPlot* plot = view.curves();
        const int k = 12;
        // Run k's loss at global step 101 is (1 + k) / 2; its neighbours are 0.5 away.
        const QPointF at(plot->xAxis->coordToPixel(101), plot->yAxis->coordToPixel((1.0 + k) / 2.0));
        QMouseEvent move(QEvent::MouseMove, at, plot->mapToGlobal(at), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
        QCoreApplication::sendEvent(plot, &move);
        QCOMPARE(view.highlightedRun(), k);
        verifyHighlighted(view, k);
        const QString text = view.curvesView()->hoverText();
        QVERIFY2(text.contains(QStringLiteral("#%1 synthetic-12").arg(m_synthetic[k].id)), qPrintable(text));
        // The value there (the pointer's pixel is a few steps wide: about 6.5).
        const auto match = QRegularExpression(QStringLiteral("Training loss ([0-9.]+)")).match(text);
        QVERIFY2(match.hasMatch() && std::abs(match.captured(1).toDouble() - 6.5) < 0.1, qPrintable(text));

        // Far from every curve: nothing named, nothing highlighted.
        const QPointF empty(plot->xAxis->coordToPixel(1100), plot->yAxis->coordToPixel(18.0));
        QMouseEvent away(QEvent::MouseMove, empty, plot->mapToGlobal(empty), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
        QCoreApplication::sendEvent(plot, &away);
        QCOMPARE(view.highlightedRun(), -1);
    }

    void logYKeepsLossCurvesDecadesApartReadable()
    {
        CompareView view(m_scaleDb);
        load(view, syntheticIds(20));
        auto* logY = view.findChild<QToolButton*>(QStringLiteral("compareLogY"));
        QVERIFY(logY);
        logY->click();
        QVERIFY(view.curvesView()->logarithmic());
        QCOMPARE(view.curves()->yAxis->scaleType(), QCPAxis::stLogarithmic);
        QVERIFY(view.curves()->yAxis->range().lower > 0.0);
        view.setMetric(CompareView::Metric::ValLoss);   // a new metric keeps the log axis
        QCOMPARE(view.curves()->yAxis->scaleType(), QCPAxis::stLogarithmic);
        logY->click();
        QCOMPARE(view.curves()->yAxis->scaleType(), QCPAxis::stLinear);
    }

    void colourByNumericSettingOrdersColoursByValue()
    {
        CompareView view(m_scaleDb);
        load(view, idsOf(spread20()));   // not in lr order
        QVERIFY(view.differingKeys().contains(QStringLiteral("optimizer.lr")));
        view.setColorBy(ColorBy::Setting, QStringLiteral("optimizer.lr"));
        const RunColors& colors = view.runColors();
        QVERIFY(colors.numeric);
        QVERIFY(colors.logarithmic);   // 1e-4 .. 1e-1
        QCOMPARE(int(colors.colors.size()), 20);
        std::vector<int> byLr(20);
        std::iota(byLr.begin(), byLr.end(), 0);
        const auto lrOf = [&](int run) { return *hearth::ui::settingNumber(colors.groups[run]); };
        std::sort(byLr.begin(), byLr.end(), [&](int a, int b) { return lrOf(a) < lrOf(b); });
        // Along the gradient (dark violet to amber) luminance rises: colours follow lr.
        const auto luminance = [](const QColor& c) { return 0.299 * c.red() + 0.587 * c.green() + 0.114 * c.blue(); };
        for (int j = 1; j < 20; ++j) {
            QVERIFY2(luminance(colors.colors[size_t(byLr[size_t(j)])]) > luminance(colors.colors[size_t(byLr[size_t(j - 1)])]),
                     qPrintable(QStringLiteral("lr %1 not brighter than lr %2").arg(lrOf(byLr[size_t(j)])).arg(lrOf(byLr[size_t(j - 1)]))));
        }
        for (int i = 0; i < 20; ++i)
            QCOMPARE(view.curves()->graph(i)->pen().color(), colors.colors[size_t(i)]);
        // A colour scale beside the curves, and the legend listed by value.
        QCPColorScale* scale = nullptr;
        for (QCPLayoutElement* e : view.curves()->plotLayout()->elements(false))
            scale = scale ? scale : qobject_cast<QCPColorScale*>(e);
        QVERIFY(scale);
        QCOMPARE(scale->dataScaleType(), QCPAxis::stLogarithmic);
        QCOMPARE(view.legend()->tree()->topLevelItem(0)->data(0, CompareLegend::RunRole).toInt(), byLr.front());
        QCOMPARE(view.legend()->tree()->topLevelItem(19)->data(0, CompareLegend::RunRole).toInt(), byLr.back());

        view.setColorBy(ColorBy::Run);
        QVERIFY(!view.runColors().numeric);
        scale = nullptr;
        for (QCPLayoutElement* e : view.curves()->plotLayout()->elements(false))
            scale = scale ? scale : qobject_cast<QCPColorScale*>(e);
        QVERIFY(!scale);
    }

    void colourByCategoricalSettingGroupsTheLegend()
    {
        CompareView view(m_scaleDb);
        load(view, syntheticIds(20));
        view.setColorBy(ColorBy::Setting, QStringLiteral("optimizer.name"));
        const RunColors& colors = view.runColors();
        QVERIFY(!colors.numeric);
        QCOMPARE(colors.groupOrder, (QStringList{"adam", "sgd"}));
        QTreeWidget* tree = view.legend()->tree();
        QCOMPARE(tree->topLevelItemCount(), 2);
        QVERIFY(tree->topLevelItem(0)->text(0).startsWith(QStringLiteral("optimizer.name = adam (10)")));
        QCOMPARE(tree->topLevelItem(0)->childCount(), 10);
        QCOMPARE(tree->topLevelItem(1)->childCount(), 10);
        for (int i = 0; i < 20; ++i)
            QCOMPARE(colors.colors[size_t(i)], colors.colors[size_t(i % 2)]);
        QVERIFY(colors.colors[0] != colors.colors[1]);
        QCOMPARE(view.curves()->graph(4)->pen().color(), colors.colors[0]);
    }

    void colourBySweepGroupsRuns()
    {
        CompareView view(m_scaleDb);
        QList<qint64> ids;
        for (int i = 20; i < 30; ++i)   // 20..24 in sweep lr-a, 25..29 in lr-b
            ids << m_synthetic[size_t(i)].id;
        load(view, ids);
        view.setColorBy(ColorBy::Sweep);
        QCOMPARE(view.runColors().groupOrder, (QStringList{"lr-a", "lr-b"}));
        QCOMPARE(view.legend()->tree()->topLevelItemCount(), 2);
        QVERIFY(view.runColors().colors[0] == view.runColors().colors[4]);
        QVERIFY(view.runColors().colors[4] != view.runColors().colors[5]);
    }

    void barsAreSortedAndTheirLabelsDoNotOverlap()
    {
        CompareView view(m_scaleDb);
        load(view, syntheticIds(20));
        showAndLayOut(view);
        CompareBars* bars = view.barsPanel();
        QVERIFY(!bars->showsTable());
        bars->setQuantity(CompareBars::Quantity::TestAccuracy);
        QCustomPlot* plot = view.bars();
        plot->replot();
        QCOMPARE(plot->plottableCount(), 20);
        double previous = 1e9;
        for (int row = 0; row < 20; ++row) {
            const int run = bars->order()[size_t(row)];
            const auto* bar = qobject_cast<QCPBars*>(plot->plottable(row));
            QCOMPARE(bar->data()->at(0)->key, double(row + 1));
            QCOMPARE(bar->data()->at(0)->value, m_synthetic[size_t(run)].testAccuracy * 100.0);
            QVERIFY(bar->data()->at(0)->value <= previous);   // largest first
            previous = bar->data()->at(0)->value;
        }
        // Horizontal bars, largest on top; names elided to the label width; rows apart.
        QCOMPARE(qobject_cast<QCPBars*>(plot->plottable(0))->keyAxis(), plot->yAxis);
        QVERIFY(plot->yAxis->coordToPixel(1) < plot->yAxis->coordToPixel(2));
        const QFontMetrics metrics(plot->yAxis->tickLabelFont());
        const double rowPixels = plot->yAxis->coordToPixel(2) - plot->yAxis->coordToPixel(1);
        QVERIFY2(rowPixels >= metrics.height(), qPrintable(QStringLiteral("rows %1 px apart").arg(rowPixels)));
        auto ticker = plot->yAxis->ticker().dynamicCast<QCPAxisTickerText>();
        QVERIFY(ticker);
        QCOMPARE(ticker->ticks().size(), 20);
        bool elided = false;
        for (const QString& label : ticker->ticks()) {
            QVERIFY2(metrics.horizontalAdvance(label) <= CompareBars::kLabelWidth, qPrintable(label));
            elided = elided || label.contains(QChar(0x2026));
        }
        QVERIFY(elided);   // run 3's name
    }

    // A bar chart's value axis at any width: tick labels (numbers, none blank) apart from each
    // other, and the total written after the longest bar inside the plot. Narrow, the old fixed
    // tick count wrote "02.557.510.512.5517.5"; wide, ticks set after the layout came out blank.
    void barChartsFitTheirValueAxisToTheirWidth()
    {
        StackedBars bars(QStringLiteral("ms per micro-batch"));
        bars.setParts({QStringLiteral("Forward"), QStringLiteral("Backward")},
                      [](double v) { return QStringLiteral("%1 ms").arg(v, 0, 'f', 1); });
        bars.show();
        QVERIFY(QTest::qWaitForWindowExposed(&bars));
        double scale = 1.0;
        for (const int width : {280, 1200}) {
            bars.resize(width, 300);
            QTRY_COMPARE(bars.width(), width);
            // New rows: one rebuild, one replot, with a range the last layout did not have.
            scale *= 3.0;
            bars.setRows({{QStringLiteral("#1 fashion-cnn · baseline"), {35.1 * scale, 39.6 * scale}},
                          {QStringLiteral("#2 fashion-cnn · bf16-mixed"), {20.2 * scale, 20.6 * scale}}});
            QCustomPlot* plot = bars.plot();
            QCPAxis* axis = plot->xAxis;
            const QVector<double> ticks = axis->tickVector();
            const QVector<QString> labels = axis->tickVectorLabels();
            QVERIFY2(ticks.size() >= 2, qPrintable(QString::number(ticks.size())));
            const QFontMetrics metrics(axis->tickLabelFont());
            for (int i = 0; i < labels.size(); ++i) {
                QVERIFY2(!labels[i].isEmpty(), qPrintable(QStringLiteral("tick %1 at %2 px wide").arg(i).arg(width)));
                if (i == 0)
                    continue;
                const double apart = axis->coordToPixel(ticks[i]) - axis->coordToPixel(ticks[i - 1]);
                const int half = (metrics.horizontalAdvance(labels[i]) + metrics.horizontalAdvance(labels[i - 1])) / 2;
                QVERIFY2(apart > half + 4, qPrintable(QStringLiteral("'%1' and '%2' %3 px apart at %4 px wide")
                                                          .arg(labels[i - 1], labels[i]).arg(apart).arg(width)));
            }
            const double end = axis->coordToPixel(bars.total(0)) + 4 +
                               metrics.horizontalAdvance(QStringLiteral("%1 ms").arg(bars.total(0), 0, 'f', 1));
            QVERIFY2(end <= axis->axisRect()->right() + 1,
                     qPrintable(QStringLiteral("the total ends at %1 px, the plot at %2 px")
                                    .arg(end).arg(axis->axisRect()->right())));
        }
    }

    void theWheelScrollsTheBars()
    {
        CompareView view(m_scaleDb);
        load(view, syntheticIds(40));
        view.resize(1200, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QScrollBar* bar = view.barsPanel()->scrollArea()->verticalScrollBar();
        QTRY_VERIFY(bar->maximum() > 0);   // 40 bars do not fit: they scroll
        QCOMPARE(bar->value(), 0);
        const QPointF at(view.bars()->width() / 2.0, 50);
        QWheelEvent wheel(at, view.bars()->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
        QCoreApplication::sendEvent(view.bars(), &wheel);
        QVERIFY(bar->value() > 0);
    }

    void moreThanFortyRunsShowASortableTable()
    {
        CompareView view(m_scaleDb);
        load(view, syntheticIds(40));
        QVERIFY(!view.barsPanel()->showsTable());
        QCOMPARE(view.bars()->plottableCount(), 40);
        load(view, syntheticIds(50));
        CompareBars* bars = view.barsPanel();
        QVERIFY(bars->showsTable());
        bars->setQuantity(CompareBars::Quantity::TrainTime);
        QTableWidget* t = bars->table();
        QCOMPARE(t->rowCount(), 50);
        QVERIFY(t->isSortingEnabled());
        for (int row = 1; row < 50; ++row)
            QVERIFY(t->item(row, 1)->data(SortedCell::SortRole).toDouble() <= t->item(row - 1, 1)->data(SortedCell::SortRole).toDouble());
        t->sortItems(1, Qt::AscendingOrder);
        QCOMPARE(t->item(0, 1)->data(SortedCell::SortRole).toDouble(), 10.0);   // the shortest synthetic run
    }

    void scatterHasOnePointPerRunAtItsSetting()
    {
        CompareView view(m_scaleDb);
        const std::vector<int> runs = spread20();
        load(view, idsOf(runs));
        SweepScatter* scatter = view.scatter();
        scatter->setResult(SweepScatter::Result::TestAccuracy);
        scatter->setSetting(QStringLiteral("optimizer.lr"));
        QCOMPARE(scatter->setting(), QStringLiteral("optimizer.lr"));
        QVERIFY(!scatter->categorical());
        QCOMPARE(scatter->plot()->graphCount(), 20);
        QCOMPARE(scatter->plot()->xAxis->scaleType(), QCPAxis::stLogarithmic);
        for (int i = 0; i < 20; ++i) {
            const QCPGraph* g = scatter->plot()->graph(scatter->graphOfRun(i));
            QCOMPARE(g->dataCount(), 1);
            const auto& point = *g->data()->constBegin();
            const auto& run = m_synthetic[size_t(runs[size_t(i)])];
            QVERIFY(std::abs(point.key / run.lr - 1.0) < 1e-8);
            QCOMPARE(point.value, run.testAccuracy * 100.0);
        }
        scatter->setSetting(QStringLiteral("optimizer.name"));
        QVERIFY(scatter->categorical());
        QCOMPARE(scatter->categories(), (QStringList{"adam", "sgd"}));
        for (int i = 0; i < 20; ++i)
            QCOMPARE(scatter->plot()->graph(scatter->graphOfRun(i))->data()->constBegin()->key, runs[size_t(i)] % 2 == 0 ? 1.0 : 2.0);
    }

    void decimationKeepsEndsAndExtremes()
    {
        std::vector<double> v(10000);
        for (size_t i = 0; i < v.size(); ++i)
            v[i] = std::sin(double(i) / 50.0);
        v[4321] = 50.0;
        v[777] = -50.0;
        const auto keep = decimatedIndices(qsizetype(v.size()), 2000, [&](qsizetype i) { return v[size_t(i)]; });
        QVERIFY(keep.size() <= 2000);
        QVERIFY(keep.size() > 1900);
        QCOMPARE(keep.front(), qsizetype(0));
        QCOMPARE(keep.back(), qsizetype(9999));
        QVERIFY(std::is_sorted(keep.begin(), keep.end()));
        QVERIFY(std::adjacent_find(keep.begin(), keep.end()) == keep.end());
        QVERIFY(std::find(keep.begin(), keep.end(), 4321) != keep.end());
        QVERIFY(std::find(keep.begin(), keep.end(), 777) != keep.end());
        const auto all = decimatedIndices(100, 2000, [&](qsizetype i) { return v[size_t(i)]; });
        QCOMPARE(all.size(), size_t(100));
        QCOMPARE(curvePointCap(2), 2000);
        QCOMPARE(curvePointCap(1000), 400);
    }

    void manyRunsAreDecimatedToTheCap()
    {
        const QString db = m_dir.filePath(QStringLiteral("many.sqlite"));
        const auto runs = hearth::test::writeSyntheticRuns(db.toStdString(), 200, 3000, 1777);
        QList<qint64> ids;
        for (const auto& r : runs)
            ids << r.id;
        CompareView view(db);
        view.setRuns(ids);
        QTRY_VERIFY_WITH_TIMEOUT(!view.isLoading(), 60000);
        QCOMPARE(view.runIds().size(), 200);
        QCOMPARE(view.curveCount(), 200);
        const int cap = curvePointCap(200);
        for (int i = 0; i < 200; ++i) {
            const QCPGraph* g = view.curves()->graph(i);
            QVERIFY2(g->dataCount() <= cap && g->dataCount() > cap / 2, qPrintable(QString::number(g->dataCount())));
            QCOMPARE(g->data()->constBegin()->key, 1.0);
            QCOMPARE((g->data()->constEnd() - 1)->key, 3000.0);
        }
        QCOMPARE(view.runs().front().loggedSteps, qsizetype(3000));
        bool spike = false;   // run 0's one-step spike survives decimation
        for (auto it = view.curves()->graph(0)->data()->constBegin(); it != view.curves()->graph(0)->data()->constEnd(); ++it)
            spike = spike || it->value == 1000.0;
        QVERIFY(spike);
        QCOMPARE(view.legend()->runCount(), 200);
        QVERIFY(view.barsPanel()->showsTable());
    }
};

QTEST_MAIN(TestCompareScale)
#include "test_compare_scale.moc"
