// The Report's Predict dialog: new table rows and image files classified by a stored run's best
// checkpoint in a child hearth-cli, listed with what they are (the row's cells, the image's
// thumbnail), wrong ones marked, the whole summarised and saved; a bad input says why.
#include "TestTimeouts.h"
#include "UiTestSupport.h"

#include "ui/report/PredictDialog.h"
#include "ui/report/ReportView.h"
#include "ui/widgets/Format.h"

#include <QApplication>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QUrl>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QProcess>
#include <QPushButton>
#include <QLocale>
#include <QProgressBar>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace hearth::ui;

namespace {

int trainRun(const QString& db, const QStringList& sets)
{
    QStringList args{QStringLiteral("--db"), db, QStringLiteral("run"), QStringLiteral("-q")};
    for (const QString& set : sets) args << QStringLiteral("--set") << set;
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral(HEARTH_CLI_PATH), args);
    if (!p.waitForFinished(hearth::test::scaledTimeoutMs(180000)) || p.exitCode() != 0) {
        qWarning("%s", p.readAll().constData());
        return -1;
    }
    return 0;
}

}  // namespace

class TestPredictDialog : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_db, m_iris;

    QString writeFile(const QString& name, const QByteArray& content)
    {
        QString path = m_dir.filePath(name);
        QFile f(path);
        if (f.open(QIODevice::WriteOnly)) f.write(content);
        return path;
    }

    // The Report of run `id`, as the user opens it, and its Predict dialog.
    PredictDialog* openDialog(ReportView& view, qint64 id)
    {
        QSignalSpy loaded(&view, &ReportView::loaded);
        view.showRun(id);
        if (!loaded.wait(30000)) return nullptr;
        auto* button = view.findChild<QPushButton*>(QStringLiteral("predictButton"));
        if (!button || !button->isEnabled()) return nullptr;
        return view.openPredictDialog();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        hearth::test::isolateSettings(m_dir);
        m_db = m_dir.filePath(QStringLiteral("runs.sqlite"));
        m_iris = QStringLiteral(HEARTH_FIXTURES_DIR "/data/iris.csv");
        QCOMPARE(trainRun(m_db, {"name=iris", "data.kind=csv", "data.path=" + m_iris, "data.label_column=species",
                                 "model.name=mlp", "trainer.max_epochs=15", "trainer.num_workers=0"}),
                 0);   // run 1
        QCOMPARE(trainRun(m_db, {"name=fashion", "data.limit=300", "model.name=mlp", "trainer.max_epochs=1",
                                 "trainer.num_workers=0"}),
                 0);   // run 2
    }

    // History's Predict… on a run: its report is shown and its dialog opens once it has loaded.
    void predictWithOpensTheRunsDialog()
    {
        ReportView view(m_db);
        view.predictWith(2);
        QTRY_VERIFY_WITH_TIMEOUT(view.findChild<PredictDialog*>() != nullptr, 30000);
        QCOMPARE(view.runId(), 2);
        QCOMPARE(view.findChild<PredictDialog*>()->inputKind(), PredictDialog::Inputs::Images);
    }

    void tableRowsAreListedScoredAndSaved()
    {
        ReportView view(m_db);
        PredictDialog* dialog = openDialog(view, 1);
        QVERIFY(dialog);
        QCOMPARE(dialog->inputKind(), PredictDialog::Inputs::TableRows);
        dialog->setInputs({m_iris});
        QSignalSpy ready(dialog, &PredictDialog::predictionsReady);
        dialog->predict();
        QVERIFY(dialog->isRunning());
        QVERIFY(ready.wait(hearth::test::scaledTimeoutMs(60000)));
        QCOMPARE(ready.front().front().toInt(), 150);
        QTableWidget* table = dialog->results();
        QCOMPARE(table->rowCount(), 150);
        QCOMPARE(table->columnCount(), 4);
        QCOMPARE(table->horizontalHeaderItem(3)->text(), QStringLiteral("True"));
        // Each row as the file has it, and a wrong prediction marked.
        QCOMPARE(table->item(0, 0)->text(),
                 QStringLiteral("sepal_length=5.1, sepal_width=3.5, petal_length=1.4, petal_width=0.2"));
        int right = 0, marked = 0;
        for (int r = 0; r < table->rowCount(); ++r) {
            const bool wrong = table->item(r, 1)->text() != table->item(r, 3)->text();
            right += wrong ? 0 : 1;
            marked += table->item(r, 1)->foreground().color() == QColor(QStringLiteral("#c62828")) ? 1 : 0;
            QVERIFY(table->item(r, 2)->data(Qt::DisplayRole).toDouble() > 0.3);
        }
        QCOMPARE(marked, 150 - right);
        const QString summary = dialog->summaryText();
        QVERIFY2(summary.startsWith(QStringLiteral("150 rows predicted on cpu in")), qPrintable(summary));
        QVERIFY2(summary.contains(QStringLiteral("Accuracy on the 150 with a known class: %1 (%2 right)")
                                      .arg(hearth::ui::formatPercent(right / 150.0))
                                      .arg(right)),
                 qPrintable(summary));
        const QString saved = m_dir.filePath(QStringLiteral("saved.csv"));
        QVERIFY(dialog->saveCsv(saved));
        QFile file(saved);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readLine().trimmed(),
                 QByteArray("index,predicted,confidence,true,prob:setosa,prob:versicolor,prob:virginica"));
        QCOMPARE(file.readAll().count('\n'), 150);
    }

    // More predictions than the table lists: the first ones are listed, the summary counts them
    // all and says so, and the saved file holds them all. The command's notes (here: a column the
    // model does not read) close the summary.
    void manyRowsAreCountedWholeAndListedUpToTheLimit()
    {
        QFile iris(m_iris);
        QVERIFY(iris.open(QIODevice::ReadOnly));
        const QByteArray header = iris.readLine().trimmed() + ",row_id\n";
        const QList<QByteArray> rows = iris.readAll().trimmed().split('\n');
        const QString big = m_dir.filePath(QStringLiteral("big.csv"));
        QFile out(big);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(header);
        const int copies = PredictDialog::kMaxRowsShown / 150 + 2;   // 150 rows each
        for (int i = 0; i < copies; ++i)
            for (const QByteArray& row : rows) out.write(row.trimmed() + ',' + QByteArray::number(i) + '\n');
        out.close();
        ReportView view(m_db);
        PredictDialog* dialog = openDialog(view, 1);
        QVERIFY(dialog);
        dialog->setInputs({big});
        QSignalSpy ready(dialog, &PredictDialog::predictionsReady);
        dialog->predict();
        auto* progress = dialog->findChild<QProgressBar*>(QStringLiteral("predictProgress"));
        QVERIFY(progress && progress->isVisible());
        QVERIFY(ready.wait(hearth::test::scaledTimeoutMs(60000)));
        // The command's progress reached the bar (its last report is all of them), which went away.
        QCOMPARE(progress->maximum(), 1000);
        QCOMPARE(progress->value(), 1000);
        QVERIFY(!progress->isVisible());
        const int total = copies * 150;
        QCOMPARE(ready.front().front().toInt(), total);
        QCOMPARE(dialog->results()->rowCount(), PredictDialog::kMaxRowsShown);
        const QString summary = dialog->summaryText();
        // Counts as the locale writes them ("5,250").
        const QString all = QLocale().toString(total);
        QVERIFY2(summary.startsWith(QStringLiteral("%1 rows predicted").arg(all)) &&
                     summary.contains(QStringLiteral("Accuracy on the %1 with a known class").arg(all)) &&
                     summary.contains(QStringLiteral("The first %1 of %2 predictions are listed")
                                          .arg(QLocale().toString(PredictDialog::kMaxRowsShown), all)) &&
                     summary.contains(QStringLiteral("\nColumns the run's model does not read were left aside: [row_id]")),
                 qPrintable(summary));
    }

    void imagesAreListedWithThumbnails()
    {
        const QString folder = m_dir.filePath(QStringLiteral("images"));
        QVERIFY(QDir().mkpath(folder));
        QStringList files;
        for (int i = 0; i < 3; ++i) {
            QImage image(28, 28, QImage::Format_Grayscale8);
            image.fill(40 + 60 * i);
            const QString path = QStringLiteral("%1/%2.png").arg(i < 2 ? folder : m_dir.path()).arg(i);
            QVERIFY(image.save(path));
            files << path;
        }
        ReportView view(m_db);
        PredictDialog* dialog = openDialog(view, 2);
        QVERIFY(dialog);
        QCOMPARE(dialog->inputKind(), PredictDialog::Inputs::Images);
        // The folder and the file dropped on the dialog from a file manager (the folder twice).
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(folder), QUrl::fromLocalFile(files.back()), QUrl::fromLocalFile(folder)});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(dialog, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(dialog, &drop);
        QCOMPARE(dialog->inputs(), (QStringList{folder, files.back()}));
        QSignalSpy ready(dialog, &PredictDialog::predictionsReady);
        dialog->predict();
        QVERIFY(ready.wait(hearth::test::scaledTimeoutMs(60000)));
        QTableWidget* table = dialog->results();
        QCOMPARE(table->rowCount(), 3);
        QCOMPARE(table->columnCount(), 3);   // no class folders: no true class
        for (int r = 0; r < 3; ++r) {
            QVERIFY(!table->item(r, 0)->icon().isNull());
            QVERIFY(files.contains(table->item(r, 0)->toolTip()));
        }
        QVERIFY2(dialog->summaryText().startsWith(QStringLiteral("3 images predicted")), qPrintable(dialog->summaryText()));
    }

    // A text run: each text is listed from the input's text column, scored by its label column.
    void textsAreListedFromTheirColumn()
    {
        if (!QFile::exists(QStringLiteral("/usr/share/wordnet/data.noun")))
            QSKIP("no WordNet (scripts/install-deps installs wordnet-base)");
        QCOMPARE(trainRun(m_db, {"name=glosses", "data.kind=wordnet", "data.path=/usr/share/wordnet/data.noun",
                                 "data.limit=200", QStringLiteral("data.tokenizer=%1/tokenizer/vocab.txt").arg(HEARTH_FIXTURES_DIR),
                                 "data.max_length=32", "model.name=distilbert", "model.hidden_size=32",
                                 "model.num_layers=1", "model.num_heads=2", "model.intermediate_size=64",
                                 "trainer.max_epochs=1", "trainer.batch_size=16", "trainer.num_workers=0"}),
                 0);   // run 3
        const QString input = writeFile(QStringLiteral("glosses.csv"),
                                        "id,text,label\n1,\"a domesticated carnivorous mammal, kept as a pet\",noun.animal\n"
                                        "2,a feeling of great happiness,noun.feeling\n");
        ReportView view(m_db);
        PredictDialog* dialog = openDialog(view, 3);
        QVERIFY(dialog);
        QCOMPARE(dialog->inputKind(), PredictDialog::Inputs::Texts);
        dialog->setInputs({input});
        QSignalSpy ready(dialog, &PredictDialog::predictionsReady);
        dialog->predict();
        QVERIFY(ready.wait(hearth::test::scaledTimeoutMs(60000)));
        QTableWidget* table = dialog->results();
        QCOMPARE(table->rowCount(), 2);
        QCOMPARE(table->horizontalHeaderItem(0)->text(), QStringLiteral("Text"));
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("a domesticated carnivorous mammal, kept as a pet"));
        QCOMPARE(table->item(1, 3)->text(), QStringLiteral("noun.feeling"));
        QVERIFY2(dialog->summaryText().contains(QStringLiteral("Accuracy on the 2 with a known class")),
                 qPrintable(dialog->summaryText()));
    }

    // Without its checkpoint a run cannot predict: the button is off and says why.
    void aRunWithoutItsCheckpointSaysWhy()
    {
        const QString checkpoint = m_db + QStringLiteral(".artifacts/1/best.pt");
        QVERIFY(QFile::rename(checkpoint, checkpoint + QStringLiteral(".away")));
        ReportView view(m_db);
        QSignalSpy loaded(&view, &ReportView::loaded);
        view.showRun(1);
        const bool shown = loaded.wait(30000);
        QVERIFY(QFile::rename(checkpoint + QStringLiteral(".away"), checkpoint));
        QVERIFY(shown);
        auto* button = view.findChild<QPushButton*>(QStringLiteral("predictButton"));
        QVERIFY(button && !button->isEnabled());
        QVERIFY2(button->toolTip().contains(QStringLiteral("is gone")) && button->toolTip().contains(checkpoint),
                 qPrintable(button->toolTip()));
        QVERIFY(view.openPredictDialog() == nullptr);
        view.showRun(2);   // another run with its checkpoint: on again
        QTRY_VERIFY_WITH_TIMEOUT(view.runId() == 2 && button->isEnabled(), 30000);
    }

    // While a prediction runs its button stops it: the child ends, nothing is listed, and the
    // next prediction runs as before.
    void aPredictionCanBeStopped()
    {
        ReportView view(m_db);
        PredictDialog* dialog = openDialog(view, 1);
        QVERIFY(dialog);
        dialog->setInputs({m_iris});
        auto* button = dialog->findChild<QPushButton*>(QStringLiteral("predictStartStop"));
        QVERIFY(button);
        QCOMPARE(button->text(), QStringLiteral("Predict"));
        QSignalSpy ready(dialog, &PredictDialog::predictionsReady);
        button->click();
        QVERIFY(dialog->isRunning());
        QCOMPARE(button->text(), QStringLiteral("Stop"));
        QVERIFY(button->isEnabled());
        QTest::qWait(100);   // the child is still starting (LibTorch alone takes longer)
        button->click();
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->isRunning(), hearth::test::scaledTimeoutMs(30000));
        QCOMPARE(dialog->summaryText(), QStringLiteral("Stopped: nothing was predicted."));
        QCOMPARE(ready.count(), 0);
        QCOMPARE(dialog->results()->rowCount(), 0);
        QCOMPARE(button->text(), QStringLiteral("Predict"));
        button->click();
        QVERIFY(ready.wait(hearth::test::scaledTimeoutMs(60000)));
        QCOMPARE(ready.front().front().toInt(), 150);
    }

    void aBadInputSaysWhyAndListsNothing()
    {
        const QString bad = writeFile(QStringLiteral("two-columns.csv"), "sepal_length,sepal_width\n5.1,3.5\n");
        ReportView view(m_db);
        PredictDialog* dialog = openDialog(view, 1);
        QVERIFY(dialog);
        dialog->setInputs({bad});
        QSignalSpy failed(dialog, &PredictDialog::predictionFailed);
        dialog->predict();
        QVERIFY(failed.wait(hearth::test::scaledTimeoutMs(60000)));
        const QString message = failed.front().front().toString();
        QVERIFY2(message.contains(QStringLiteral("no columns [petal_length, petal_width]")), qPrintable(message));
        QVERIFY2(dialog->summaryText().startsWith(QStringLiteral("Cannot predict: ")), qPrintable(dialog->summaryText()));
        QCOMPARE(dialog->results()->rowCount(), 0);
        QVERIFY(!dialog->saveCsv(m_dir.filePath(QStringLiteral("nothing.csv"))));
    }
};

QTEST_MAIN(TestPredictDialog)
#include "test_predict_dialog.moc"
