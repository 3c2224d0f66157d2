// HistoryModel / HistoryView: every stored run is listed, sortable and filterable; rename, tags
// and notes reach the store (as writer jobs: a locked store holds up the edit, not the window,
// and a failed edit says so in the view); runs added by another writer (e.g. hearth-cli) appear
// by polling.
#include "RawDb.h"
#include "UiTestSupport.h"

#include "storage/RunStore.h"
#include "storage/RunWriter.h"
#include "ui/history/HistoryModel.h"
#include "ui/history/HistoryView.h"
#include "ui/widgets/ElideDelegate.h"

#include <QAction>
#include <QElapsedTimer>
#include <QHeaderView>
#include <QMenu>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>

using namespace hearth::ui;

namespace {

// Records a finished run the way the engine's events would.
int64_t recordRun(hearth::RunWriter& writer, const std::string& name, double testAccuracy, double trainTime)
{
    hearth::ExperimentConfig config;
    config.name = name;
    const int64_t id = writer.createRun(name, hearth::configToJson(config));
    hearth::RunStarted started;
    started.run_name = name;
    started.config_json = hearth::configToJson(config);
    started.device = "cpu";
    started.max_epochs = 1;
    writer.enqueue(id, started);
    hearth::RunFinished finished;
    finished.status = "completed";
    finished.test_accuracy = testAccuracy;
    finished.best_val_accuracy = testAccuracy;
    finished.train_time_s = trainTime;
    finished.total_time_s = trainTime + 1;
    finished.epochs_completed = 1;
    writer.enqueue(id, finished);
    writer.flush();
    return id;
}

}  // namespace

class TestHistoryView : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_db;

private Q_SLOTS:
    void initTestCase()
    {
        hearth::test::isolateSettings(m_dir);
        m_db = m_dir.filePath(QStringLiteral("runs.sqlite"));
        hearth::RunWriter writer(m_db.toStdString());
        recordRun(writer, "alpha", 0.81, 20.0);
        recordRun(writer, "beta", 0.87, 10.0);
        recordRun(writer, "gamma", 0.84, 30.0);
    }

    void listsEveryRunNewestFirst()
    {
        HistoryModel model(m_db);
        QVERIFY(model.isLoading());   // read off the GUI thread
        QCOMPARE(model.rowCount(), 0);
        QTRY_COMPARE(model.rowCount(), 3);
        QCOMPARE(model.data(model.index(0, HistoryModel::Name), Qt::DisplayRole).toString(), QStringLiteral("gamma"));
        QCOMPARE(model.data(model.index(0, HistoryModel::Status), Qt::DisplayRole).toString(),
                 QStringLiteral("completed"));
        QCOMPARE(model.data(model.index(0, HistoryModel::TestAcc), Qt::DisplayRole).toString(), QStringLiteral("84.00 %"));
    }

    void sortsNumbersAsNumbersAndFiltersByText()
    {
        HistoryView view(m_db);
        QCOMPARE(view.statusText(), QStringLiteral("Loading runs…"));
        QTRY_VERIFY(view.model()->hasLoaded());
        QCOMPARE(view.statusText(), QString());
        view.filter()->sort(HistoryModel::TestAcc, Qt::DescendingOrder);
        QCOMPARE(view.filter()->index(0, HistoryModel::Name).data().toString(), QStringLiteral("beta"));
        view.filter()->sort(HistoryModel::TrainTime, Qt::AscendingOrder);
        QCOMPARE(view.filter()->index(0, HistoryModel::Name).data().toString(), QStringLiteral("beta"));
        QCOMPARE(view.filter()->index(2, HistoryModel::Name).data().toString(), QStringLiteral("gamma"));
        view.filter()->setText(QStringLiteral("alp"));
        QCOMPARE(view.filter()->rowCount(), 1);
        view.filter()->setText(QString());
        view.filter()->setStatus(QStringLiteral("failed"));
        QCOMPARE(view.filter()->rowCount(), 0);
        view.filter()->setStatus(QString());
        QCOMPARE(view.filter()->rowCount(), 3);
    }

    // The table starts empty; once its runs arrive every cell shows whole ("2026-11-28 12:31:39",
    // not "2026-11-…"). Widths the user left (a restored header) are kept as they were.
    void columnsFitTheRunsOnceLoadedUnlessRestored()
    {
        HistoryView view(m_db);
        view.resize(1000, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        auto* table = view.findChild<QTableView*>(QStringLiteral("historyTable"));
        QVERIFY(table);
        QTRY_VERIFY(view.model()->hasLoaded());
        const auto fits = [table](int column) {
            const QString text = table->model()->index(0, column).data().toString();
            return table->columnWidth(column) > table->fontMetrics().horizontalAdvance(text);
        };
        for (const int column : {int(HistoryModel::Name), int(HistoryModel::Status), int(HistoryModel::Started)})
            QVERIFY2(fits(column), qPrintable(QStringLiteral("column %1: %2 px for '%3'")
                                                  .arg(column).arg(table->columnWidth(column))
                                                  .arg(table->model()->index(0, column).data().toString())));

        table->setColumnWidth(HistoryModel::Started, 40);   // as the user left it
        const QByteArray state = view.saveHeaderState();
        HistoryView again(m_db);
        again.restoreHeaderState(state);
        again.show();
        QTRY_VERIFY(again.model()->hasLoaded());   // its refreshed() handlers have run
        QCOMPARE(again.findChild<QTableView*>(QStringLiteral("historyTable"))->columnWidth(HistoryModel::Started), 40);
    }

    // A run that arrives later with a longer name (or more tags) than any before gets room too,
    // while the widths are Hearth's; widths the user left (a restored header) stay as they were.
    void runsAddedLaterFitUnlessTheUserSizedTheColumns()
    {
        const QString db = m_dir.filePath(QStringLiteral("later.sqlite"));
        hearth::RunWriter writer(db.toStdString());
        const int64_t first = recordRun(writer, "a", 0.8, 10.0);
        HistoryView view(db);
        view.resize(1200, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        auto* table = view.findChild<QTableView*>(QStringLiteral("historyTable"));
        QTRY_COMPARE(table->model()->rowCount(), 1);
        const QByteArray fittedToShortNames = view.saveHeaderState();
        const QString longName = QStringLiteral("fashion-cnn-bf16-accumulate-4x");
        const int needed = table->fontMetrics().horizontalAdvance(longName);
        QVERIFY(table->columnWidth(HistoryModel::Name) < needed);

        recordRun(writer, longName.toStdString(), 0.9, 10.0);   // as hearth-cli would, seen by polling
        QTRY_COMPARE(table->model()->rowCount(), 2);
        QTRY_VERIFY2(table->columnWidth(HistoryModel::Name) > needed,
                     qPrintable(QStringLiteral("%1 px for %2 px of name").arg(table->columnWidth(HistoryModel::Name)).arg(needed)));
        // A rename or new tags by another process (hearth-cli rename, tag) fit as well.
        const QString tags = QStringLiteral("baseline, bf16-mixed, h100-sxm");
        const int tagsNeeded = table->fontMetrics().horizontalAdvance(tags);
        QVERIFY(table->columnWidth(HistoryModel::Tags) < tagsNeeded);
        hearth::RunStore(db.toStdString()).setTags(first, {"baseline", "bf16-mixed", "h100-sxm"});
        QTRY_VERIFY2(table->columnWidth(HistoryModel::Tags) >= tagsNeeded,
                     qPrintable(QStringLiteral("%1 px for %2 px of tags").arg(table->columnWidth(HistoryModel::Tags)).arg(tagsNeeded)));
        // And a rename in the table itself, once the store has it.
        const int before = table->columnWidth(HistoryModel::Name);
        const QModelIndex nameCell = table->model()->index(1, HistoryModel::Name);   // "a", the older
        QCOMPARE(nameCell.data().toString(), QStringLiteral("a"));
        QVERIFY(table->model()->setData(nameCell, longName + QStringLiteral("-pin"), Qt::EditRole));
        QTRY_VERIFY2(table->columnWidth(HistoryModel::Name) > before,
                     qPrintable(QStringLiteral("%1 px, was %2").arg(table->columnWidth(HistoryModel::Name)).arg(before)));

        HistoryView restored(db);
        restored.resize(1200, 400);
        restored.restoreHeaderState(fittedToShortNames);
        restored.show();
        auto* again = restored.findChild<QTableView*>(QStringLiteral("historyTable"));
        QTRY_COMPARE(again->model()->rowCount(), 2);
        const int kept = again->columnWidth(HistoryModel::Name);
        QVERIFY(kept < needed);
        recordRun(writer, "another-run-with-a-long-name", 0.9, 10.0);
        QTRY_COMPARE(again->model()->rowCount(), 3);
        QCOMPARE(again->columnWidth(HistoryModel::Name), kept);
    }

    // A table narrower than its runs: "Fit Columns" takes the width from the free-text columns (a
    // long name here, down to 32 characters), not from the numbers, and the table no longer
    // scrolls sideways. A view whose runs arrive while it is hidden fits them once it is shown.
    void aNarrowTableShrinksTheTextColumnsNotTheNumbers()
    {
        const QString db = m_dir.filePath(QStringLiteral("wide.sqlite"));
        const std::string longName = "fashion-cnn-bf16-accumulate-4x-wrk";   // under the 40-character cap
        {
            hearth::RunWriter writer(db.toStdString());
            recordRun(writer, longName, 0.8612, 1234.5);
            recordRun(writer, "short", 0.5, 2.0);
        }
        HistoryView view(db);
        QTRY_VERIFY(view.model()->hasLoaded());   // loaded while hidden: fitted when shown
        view.resize(2000, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTableView* table = view.table();
        const int row = table->model()->index(0, HistoryModel::Name).data().toString().size() > 10 ? 0 : 1;
        const auto textWidth = [table, row](int column) {
            return table->fontMetrics().horizontalAdvance(table->model()->index(row, column).data().toString());
        };
        QVERIFY2(table->columnWidth(HistoryModel::Name) > textWidth(HistoryModel::Name),
                 qPrintable(QString::number(table->columnWidth(HistoryModel::Name))));
        QCOMPARE(table->horizontalScrollBar()->maximum(), 0);
        std::vector<int> fitted;
        int total = 0;
        for (int column = 0; column < HistoryModel::ColumnCount; ++column) {
            fitted.push_back(table->columnWidth(column));
            if (column != HistoryModel::Notes)   // the last column stretches to fill the table
                total += fitted.back();
        }
        total += table->horizontalHeader()->sectionSizeHint(HistoryModel::Notes);

        // 20 px narrower than the columns need, as a user might leave the window.
        view.resize(view.width() - (table->viewport()->width() - (total - 20)), 400);
        QTRY_COMPARE(table->viewport()->width(), total - 20);
        QVERIFY(table->horizontalScrollBar()->maximum() > 0);
        const std::unique_ptr<QMenu> menu(view.columnMenu());
        QAction* fit = nullptr;
        for (QAction* action : menu->actions())
            if (action->text() == QStringLiteral("Fit Columns"))
                fit = action;
        QVERIFY(fit);
        fit->trigger();
        QCOMPARE(table->horizontalHeader()->length(), table->viewport()->width());
        QTRY_COMPARE(table->horizontalScrollBar()->maximum(), 0);   // its range follows on the next layout
        for (const int column : {int(HistoryModel::Id), int(HistoryModel::Status), int(HistoryModel::Started),
                                 int(HistoryModel::TrainTime), int(HistoryModel::BestVal), int(HistoryModel::TestAcc)})
            QCOMPARE(table->columnWidth(column), fitted[size_t(column)]);
        QVERIFY(table->columnWidth(HistoryModel::Name) < fitted[HistoryModel::Name]);
        QVERIFY(table->columnWidth(HistoryModel::Name) >= table->fontMetrics().averageCharWidth() * 32);
        QCOMPARE(table->model()->index(row, HistoryModel::Name).data(Qt::ToolTipRole).toString(),
                 QString::fromStdString(longName));
        // A name cut short keeps its end (it tells runs apart as often as its start); notes and
        // tags keep their start ("Baseline CN…", not "B…n").
        const auto* names = dynamic_cast<hearth::ui::ElideDelegate*>(table->itemDelegateForColumn(HistoryModel::Name));
        QVERIFY(names);
        QCOMPARE(names->mode(), Qt::ElideMiddle);
        QCOMPARE(table->textElideMode(), Qt::ElideRight);
        QVERIFY(!table->itemDelegateForColumn(HistoryModel::Notes));   // the view's own, eliding right
    }

    // Only the sorted column keeps room for the sort arrow (QHeaderView gives it to every column,
    // about 25 px each): the number columns are as wide as their header text, and a column the user
    // sorts by grows to fit the arrow beside its text.
    void onlyTheSortedColumnKeepsRoomForTheArrow()
    {
        HistoryView view(m_db);
        view.resize(1400, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTRY_VERIFY(view.model()->hasLoaded());
        QTableView* table = view.table();
        QTableView plain;   // Qt's own header on the same rows
        plain.setModel(table->model());
        plain.setSortingEnabled(true);
        plain.sortByColumn(HistoryModel::Id, Qt::DescendingOrder);
        plain.resizeColumnsToContents();
        const auto widths = [&](int column) {
            return QStringLiteral("column %1: %2 px here, %3 px with Qt's header")
                .arg(column).arg(table->columnWidth(column)).arg(plain.columnWidth(column));
        };
        for (const int column : {int(HistoryModel::TrainTime), int(HistoryModel::BestVal), int(HistoryModel::TestAcc),
                                 int(HistoryModel::PeakMemory)})
            QVERIFY2(table->columnWidth(column) <= plain.columnWidth(column) - 15, qPrintable(widths(column)));
        QVERIFY2(table->columnWidth(HistoryModel::Id) >= plain.columnWidth(HistoryModel::Id),
                 qPrintable(widths(HistoryModel::Id)));

        table->horizontalHeader()->setSortIndicator(HistoryModel::BestVal, Qt::AscendingOrder);   // a click
        plain.sortByColumn(HistoryModel::BestVal, Qt::AscendingOrder);
        plain.resizeColumnsToContents();
        QVERIFY2(table->columnWidth(HistoryModel::BestVal) >= plain.columnWidth(HistoryModel::BestVal),
                 qPrintable(widths(HistoryModel::BestVal)));
        QCOMPARE(table->horizontalHeader()->sortIndicatorSection(), int(HistoryModel::BestVal));
    }

    // The header's menu hides a column; it stays hidden in the saved header state, and a fit
    // leaves it hidden. ID and Name cannot be hidden.
    void hiddenColumnsStayHiddenAcrossSessions()
    {
        HistoryView view(m_db);
        view.resize(1000, 400);
        view.show();
        QTRY_VERIFY(view.model()->hasLoaded());
        const std::unique_ptr<QMenu> menu(view.columnMenu());
        QStringList entries;
        QAction* device = nullptr;
        for (QAction* action : menu->actions()) {
            if (!action->isCheckable())
                continue;
            entries << action->text();
            QVERIFY(action->isChecked());
            if (action->text() == QStringLiteral("Device"))
                device = action;
        }
        QVERIFY(!entries.contains(QStringLiteral("ID")) && !entries.contains(QStringLiteral("Name")));
        QCOMPARE(entries.size(), HistoryModel::ColumnCount - 2);
        QVERIFY(device);
        device->trigger();
        QVERIFY(view.table()->horizontalHeader()->isSectionHidden(HistoryModel::Device));
        // Tags stand beside the name by default; a user's own order is kept like the hidden columns.
        QHeaderView* header = view.table()->horizontalHeader();
        QCOMPARE(header->visualIndex(HistoryModel::Tags), HistoryModel::Name + 1);
        QCOMPARE(header->visualIndex(HistoryModel::Status), HistoryModel::Name + 2);
        header->moveSection(header->visualIndex(HistoryModel::Tags), HistoryModel::ColumnCount - 1);

        HistoryView again(m_db);
        again.restoreHeaderState(view.saveHeaderState());
        again.show();
        QTRY_VERIFY(again.model()->hasLoaded());
        QVERIFY(again.table()->horizontalHeader()->isSectionHidden(HistoryModel::Device));
        QCOMPARE(again.table()->horizontalHeader()->visualIndex(HistoryModel::Tags), HistoryModel::ColumnCount - 1);
        const std::unique_ptr<QMenu> againMenu(again.columnMenu());
        for (QAction* action : againMenu->actions()) {
            if (action->text() == QStringLiteral("Device"))
                QVERIFY(!action->isChecked());
            if (action->text() == QStringLiteral("Fit Columns"))
                action->trigger();
        }
        QVERIFY(again.table()->horizontalHeader()->isSectionHidden(HistoryModel::Device));
    }

    void renameTagsAndNotesReachTheStore()
    {
        HistoryModel model(m_db);
        QTRY_VERIFY(model.hasLoaded());
        const int row = model.rowOf(1);
        QVERIFY(row >= 0);
        QVERIFY(model.setData(model.index(row, HistoryModel::Name), QStringLiteral("alpha-renamed"), Qt::EditRole));
        QVERIFY(model.setData(model.index(row, HistoryModel::Tags), QStringLiteral("baseline, cpu ,baseline"), Qt::EditRole));
        QVERIFY(model.setData(model.index(row, HistoryModel::Notes), QStringLiteral("first try"), Qt::EditRole));
        QCOMPARE(model.data(model.index(row, HistoryModel::Name), Qt::DisplayRole).toString(),
                 QStringLiteral("alpha-renamed"));   // shown at once
        QTRY_COMPARE(model.pendingEdits(), 0);
        hearth::RunStore reader(m_db.toStdString());
        const auto run = reader.run(1);
        QVERIFY(run);
        QCOMPARE(run->name, std::string("alpha-renamed"));
        QCOMPARE(run->tags, (std::vector<std::string>{"baseline", "cpu"}));
        QCOMPARE(run->notes, std::string("first try"));
        QCOMPARE(model.allTags(), (QStringList{"baseline", "cpu"}));
        // A name pasted with its line break stays one line; a blank one is refused.
        QVERIFY(model.setData(model.index(row, HistoryModel::Name), QStringLiteral("alpha\nrenamed "), Qt::EditRole));
        QVERIFY(!model.setData(model.index(row, HistoryModel::Name), QStringLiteral(" \t"), Qt::EditRole));
        QTRY_COMPARE(model.pendingEdits(), 0);
        QCOMPARE(reader.run(1)->name, std::string("alpha renamed"));

        HistoryFilterModel filter;
        filter.setSourceModel(&model);
        filter.setTag(QStringLiteral("baseline"));
        QCOMPARE(filter.rowCount(), 1);
        filter.setTag(QString());
        filter.setText(QStringLiteral("first"));   // notes are searched too
        QCOMPARE(filter.rowCount(), 1);
    }

    void runsAddedByAnotherWriterAppearWithinASecond()
    {
        HistoryModel model(m_db);
        model.setPollInterval(100);
        QTRY_VERIFY(model.hasLoaded());
        const int before = model.rowCount();
        {
            hearth::RunWriter cli(m_db.toStdString());   // another connection, as hearth-cli would have
            recordRun(cli, "from-cli", 0.5, 5.0);
        }
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), before + 1, 3000);
        QCOMPARE(model.data(model.index(0, HistoryModel::Name), Qt::DisplayRole).toString(), QStringLiteral("from-cli"));
    }

    void selectionEnablesCompareAndDeleteRemovesTheRun()
    {
        HistoryView view(m_db);
        QTRY_VERIFY(view.model()->hasLoaded());
        QSignalSpy compare(&view, &HistoryView::compareRequested);
        view.selectRuns({2, 3});
        QCOMPARE(view.selectedRunIds(), (QList<qint64>{2, 3}));
        auto* compareButton = [&view] {
            for (auto* b : view.findChildren<QPushButton*>())
                if (b->text() == QStringLiteral("Compare"))
                    return b;
            return static_cast<QPushButton*>(nullptr);
        }();
        QVERIFY(compareButton && compareButton->isEnabled());
        QTest::mouseClick(compareButton, Qt::LeftButton);
        QCOMPARE(compare.count(), 1);
        QCOMPARE(compare.first().first().value<QList<qint64>>(), (QList<qint64>{2, 3}));

        const int before = view.model()->rowCount();
        view.model()->deleteRun(3);
        QTRY_COMPARE(view.model()->rowCount(), before - 1);
        QCOMPARE(view.model()->rowOf(3), -1);
        QVERIFY(!hearth::RunStore(m_db.toStdString()).run(3));
    }

    // Resume follows the selected run's status as refreshes bring it: a run selected while it runs
    // (another process writes it) becomes resumable when it is stopped, with nothing else
    // changing in the list (no reset, the selection kept).
    void resumeFollowsTheSelectedRunsStatus()
    {
        const QString db = m_dir.filePath(QStringLiteral("resume.sqlite"));
        hearth::RunWriter cli(db.toStdString());   // as hearth-cli's, another connection
        recordRun(cli, "done", 0.5, 1.0);
        hearth::ExperimentConfig config;
        const int64_t id = cli.createRun("training", hearth::configToJson(config));
        hearth::RunStarted started;
        started.run_name = "training";
        started.config_json = hearth::configToJson(config);
        started.max_epochs = 3;
        cli.enqueue(id, started);
        cli.flush();
        HistoryView view(db);
        view.model()->setPollInterval(100);
        QTRY_VERIFY(view.model()->hasLoaded());
        auto* resume = view.findChild<QPushButton*>(QStringLiteral("historyResume"));
        QVERIFY(resume);
        view.selectRuns({id});
        QCOMPARE(view.selectedRunIds(), QList<qint64>{id});
        QVERIFY(!resume->isEnabled());   // running
        hearth::RunFinished stopped;
        stopped.status = "stopped";
        cli.enqueue(id, stopped);
        cli.flush();
        QTRY_VERIFY_WITH_TIMEOUT(resume->isEnabled(), 5000);
        QCOMPARE(view.selectedRunIds(), QList<qint64>{id});
        QSignalSpy asked(&view, &HistoryView::resumeRequested);
        resume->click();
        QCOMPARE(asked.count(), 1);
        QCOMPARE(asked.first().first().toLongLong(), qint64(id));
        // A completed run is not resumable.
        view.selectRuns({1});
        QVERIFY(!resume->isEnabled());
    }

    // A run selected before the list shows it (written just now, e.g. the run the window stopped
    // a moment ago) is selected when a refresh brings it; a refresh that adds a run keeps what is
    // selected; the user's own choice drops a selection still waited for.
    void selectionSurvivesRefreshesThatAddRuns()
    {
        const QString db = m_dir.filePath(QStringLiteral("select.sqlite"));
        hearth::RunWriter cli(db.toStdString());
        const int64_t first = recordRun(cli, "first", 0.5, 1.0);
        HistoryView view(db);
        view.model()->setPollInterval(100);
        QTRY_VERIFY(view.model()->hasLoaded());
        QCOMPARE(view.model()->rowCount(), 1);

        const int64_t second = recordRun(cli, "second", 0.6, 1.0);
        view.selectRuns({second});   // not listed yet
        QVERIFY(view.selectedRunIds().isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(view.selectedRunIds(), QList<qint64>{second}, 5000);

        view.selectRuns({first});
        recordRun(cli, "third", 0.7, 1.0);
        QTRY_COMPARE_WITH_TIMEOUT(view.model()->rowCount(), 3, 5000);   // a reset: one more row
        QCOMPARE(view.selectedRunIds(), QList<qint64>{first});

        view.selectRuns({9999});   // never written
        view.table()->selectRow(view.filter()->mapFromSource(view.model()->index(view.model()->rowOf(second), 0)).row());
        recordRun(cli, "fourth", 0.8, 1.0);
        QTRY_COMPARE_WITH_TIMEOUT(view.model()->rowCount(), 4, 5000);
        QCOMPARE(view.selectedRunIds(), QList<qint64>{second});
    }

    // Another connection holds the write lock: the rename shows at once, the window keeps
    // running, and the store has it once the lock is gone.
    void renameWaitsForALockedStoreNotTheWindow()
    {
        const QString db = m_dir.filePath(QStringLiteral("locked.sqlite"));
        {
            hearth::RunWriter writer(db.toStdString());
            recordRun(writer, "before", 0.5, 1.0);
        }
        HistoryModel model(db);
        QTRY_VERIFY(model.hasLoaded());
        hearth::testing::RawDb other(db.toStdString());
        other.exec("BEGIN IMMEDIATE");
        QElapsedTimer clock;
        clock.start();
        QVERIFY(model.setData(model.index(0, HistoryModel::Name), QStringLiteral("after"), Qt::EditRole));
        QVERIFY2(clock.elapsed() < 500, qPrintable(QString("setData took %1 ms").arg(clock.elapsed())));
        QCOMPARE(model.data(model.index(0, HistoryModel::Name), Qt::DisplayRole).toString(), QStringLiteral("after"));
        hearth::test::EventLoopProbe probe;
        QTest::qWait(1200);
        QVERIFY2(probe.longestGapMs() < 500, qPrintable(QString("event loop stalled %1 ms").arg(probe.longestGapMs())));
        QCOMPARE(model.pendingEdits(), 1);
        QCOMPARE(hearth::RunStore(db.toStdString()).run(1)->name, std::string("before"));
        // Polls meanwhile do not undo the edit on screen.
        QCOMPARE(model.data(model.index(0, HistoryModel::Name), Qt::DisplayRole).toString(), QStringLiteral("after"));

        other.exec("COMMIT");
        QTRY_COMPARE_WITH_TIMEOUT(model.pendingEdits(), 0, 20000);
        QCOMPARE(hearth::RunStore(db.toStdString()).run(1)->name, std::string("after"));
        QCOMPARE(model.data(model.index(0, HistoryModel::Name), Qt::DisplayRole).toString(), QStringLiteral("after"));
    }

    // The run was deleted by another program after the view read it: the rename job fails and
    // the store's message shows in the view (not in a dialog), then the row goes.
    void aFailedEditShowsTheStoreMessageInTheView()
    {
        const QString db = m_dir.filePath(QStringLiteral("vanishing.sqlite"));
        int64_t id = 0;
        {
            hearth::RunWriter writer(db.toStdString());
            recordRun(writer, "stays", 0.5, 1.0);
            id = recordRun(writer, "vanishes", 0.6, 1.0);
        }
        HistoryView view(db);
        view.model()->setPollInterval(3600 * 1000);
        QTRY_VERIFY(view.model()->hasLoaded());
        const int row = view.model()->rowOf(id);
        QVERIFY(row >= 0);
        hearth::testing::RawDb(db.toStdString()).exec("DELETE FROM runs WHERE id = " + std::to_string(id));
        QSignalSpy errors(view.model(), &HistoryModel::storeError);
        QVERIFY(view.model()->setData(view.model()->index(row, HistoryModel::Name), QStringLiteral("too late"),
                                      Qt::EditRole));
        QTRY_COMPARE(errors.count(), 1);
        const QString shown = view.statusText();
        QVERIFY2(shown.contains(QStringLiteral("Could not rename run %1").arg(id)), qPrintable(shown));
        QVERIFY2(shown.contains(QStringLiteral("No run #%1").arg(id)), qPrintable(shown));
        QTRY_COMPARE(view.model()->rowOf(id), -1);   // read again: the store no longer has it
        QCOMPARE(view.model()->rowCount(), 1);
        QCOMPARE(view.statusText(), shown);          // the problem stays visible
    }
};

QTEST_MAIN(TestHistoryView)
#include "test_history_view.moc"
