// hearth-cli predict with a stored run, as a user drives it: image files for a run on idx images, the
// rows of a CSV table for a run on a table. Each prediction must equal what the run's own test
// stored for the same input; each bad input gets exit 3 and a message naming the problem.
#include "CliTestSupport.h"

#include "storage/RunStore.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>

using hearth::test::CliResult;
using hearth::test::cliOn;

namespace {

QStringList csvFields(QFile& file) { return QString::fromUtf8(file.readLine()).trimmed().split(','); }

}  // namespace

class TestCliPredict : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_tableDb;   // a run on the iris table (trained once, in initTestCase)
    QString m_iris;      // its training file

    QString writeFile(const QString& name, const QByteArray& content) {
        return hearth::test::writeFileIn(QDir(m_dir.path()), name, content);
    }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_iris = m_dir.filePath("iris.csv");
        QVERIFY(QFile::copy(HEARTH_FIXTURES_DIR "/data/iris.csv", m_iris));
        m_tableDb = m_dir.filePath("table.sqlite");
        const CliResult trained =
            cliOn(m_tableDb, {"run", "--set", "data.kind=csv", "--set", "data.path=" + m_iris, "--set",
                              "data.label_column=species", "--set", "model.name=mlp", "--set", "trainer.max_epochs=15",
                              "--set", "trainer.num_workers=0", "-q"});
        QVERIFY2(trained.exit_code == 0, qPrintable(trained.out));
    }

    // A Fashion-MNIST (idx) run classifies image files as its test saw the same images: grey, at
    // 28x28, normalised with its training file's statistics. Test images written as PNG get the
    // class and the confidence the run stored for them.
    void anIdxRunPredictsImageFilesAsItsTestSawThem() {
        const QString database = m_dir.filePath("idx-predict.sqlite");
        const CliResult trained = cliOn(database, {"run", "--set", "data.limit=600", "--set", "trainer.max_epochs=1",
                                                   "--set", "trainer.num_workers=0", "-q"});
        QVERIFY2(trained.exit_code == 0, qPrintable(trained.out));
        const int64_t id = hearth::RunStore(database.toStdString()).listRuns().front().id;
        auto stored = hearth::RunStore(database.toStdString()).predictions(id, "test");
        QVERIFY(stored.size() >= 20);
        stored.resize(20);
        QProcess gunzip;
        gunzip.start("gzip", {"-dc", "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"});
        QVERIFY(gunzip.waitForFinished(60000));
        const QByteArray pixels = gunzip.readAllStandardOutput().mid(16);
        const QString folder = m_dir.filePath("idx-images");
        QVERIFY(QDir().mkpath(folder));
        for (const auto& p : stored) {
            QImage image(28, 28, QImage::Format_Grayscale8);
            for (int y = 0; y < 28; ++y)
                std::memcpy(image.scanLine(y), pixels.constData() + p.index * 784 + static_cast<std::ptrdiff_t>(y) * 28, 28);
            QVERIFY(image.save(QString("%1/t%2.png").arg(folder).arg(p.index, 5, 10, QChar('0'))));
        }
        const QString csv = m_dir.filePath("idx-predicted.csv");
        const CliResult predicted = cliOn(database, {"predict", QString::number(id), "--images", folder, "-o", csv});
        QVERIFY2(predicted.exit_code == 0 && predicted.out.contains("Predicted 20 images"), qPrintable(predicted.out));
        QFile file(csv);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QStringList header = QString::fromUtf8(file.readLine()).trimmed().split(',');
        const QStringList classes = header.mid(header.indexOf("prob:T-shirt/top"));
        QCOMPARE(classes.size(), 10);
        for (const auto& p : stored) {   // the files are listed sorted, as their names sort by index
            const QStringList row = QString::fromUtf8(file.readLine()).trimmed().split(',');
            QVERIFY2(row[0].endsWith(QString("t%1.png").arg(p.index, 5, 10, QChar('0'))), qPrintable(row[0]));
            QCOMPARE("prob:" + row[1], classes[int(p.predicted)]);
            QVERIFY2(std::abs(row[2].toDouble() - p.confidence) < 1e-5,
                     qPrintable(QString("%1 vs %2").arg(row[2]).arg(p.confidence)));
        }
        // Normalised with the statistics the run stored; a run from before that reads its training
        // file again and gets the same.
        file.seek(0);
        const QByteArray with_stored_stats = file.readAll();
        const QString stats = QString("%1.artifacts/%2/normalization.json").arg(database).arg(id);
        QVERIFY(QFile::remove(stats));
        const CliResult older = cliOn(database, {"predict", QString::number(id), "--images", folder, "-o", csv});
        QVERIFY2(older.exit_code == 0 && older.out.contains("note: the run stored no normalization"), qPrintable(older.out));
        QFile again(csv);
        QVERIFY(again.open(QIODevice::ReadOnly));
        QCOMPARE(again.readAll(), with_stored_stats);
        // The same images in class folders named as scripts/make-image-folder names Fashion-MNIST's
        // ("T-shirt_top" for "T-shirt/top", "Ankle_boot"): labelled by the run's classes and scored.
        const QString labelled = m_dir.filePath("idx-labelled");
        int correct = 0;
        for (const auto& p : stored) {
            QString written = classes[int(p.true_label)].mid(5);
            written.replace('/', '_').replace(' ', '_');
            QVERIFY(QDir().mkpath(labelled + "/" + written));
            const QString name = QString("t%1.png").arg(p.index, 5, 10, QChar('0'));
            QVERIFY(QFile::copy(folder + "/" + name, labelled + "/" + written + "/" + name));
            correct += p.predicted == p.true_label ? 1 : 0;
        }
        const CliResult scored = cliOn(database, {"predict", QString::number(id), "--images", labelled, "-o", csv});
        QVERIFY2(scored.exit_code == 0 &&
                     scored.out.contains(QString("accuracy on the 20 images in class folders: %1").arg(correct / 20.0)),
                 qPrintable(scored.out));
        QFile scored_csv(csv);
        QVERIFY(scored_csv.open(QIODevice::ReadOnly));
        scored_csv.readLine();
        while (!scored_csv.atEnd()) {   // the truth is the run's class name, "T-shirt/top" not the folder's
            const QStringList row = QString::fromUtf8(scored_csv.readLine()).trimmed().split(',');
            QVERIFY2(classes.contains("prob:" + row[3]), qPrintable(row.join(',')));
        }
    }


    // A run on a CSV table classifies the rows of a CSV with its feature columns as its test saw
    // them: standardised with the training rows' statistics. Its own training file, predicted
    // whole, gives the test rows the class and confidence the run stored, and is scored by its
    // label column.
    void aTableRunPredictsRowsAsItsTestSawThem() {
        hearth::RunStore store(m_tableDb.toStdString());
        const int64_t id = store.listRuns().front().id;
        const auto stored = store.predictions(id, "test");
        QVERIFY(stored.size() >= 10);
        // `show` says how.
        const CliResult shown = cliOn(m_tableDb, {"show", QString::number(id)});
        QVERIFY2(shown.out.contains(QString("predict with it: hearth-cli predict %1 --input ROWS.csv -o predictions.csv").arg(id)),
                 qPrintable(shown.out));
        const QString csv = m_dir.filePath("rows.csv");
        const CliResult r = cliOn(m_tableDb, {"predict", QString::number(id), "--input", m_iris, "-o", csv});
        QVERIFY2(r.exit_code == 0 && r.out.contains("Predicted 150 rows"), qPrintable(r.out));
        QFile file(csv);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QStringList header = csvFields(file);
        QCOMPARE(header, (QStringList{"index", "predicted", "confidence", "true", "prob:setosa", "prob:versicolor",
                                      "prob:virginica"}));
        std::vector<QStringList> rows;
        int correct = 0;
        while (!file.atEnd()) {
            rows.push_back(csvFields(file));
            correct += rows.back()[1] == rows.back()[3] ? 1 : 0;
        }
        QCOMPARE(rows.size(), size_t(150));
        QVERIFY2(r.out.contains(QString("accuracy on the 150 rows with a label: %1").arg(correct / 150.0)),
                 qPrintable(r.out));
        for (const auto& p : stored) {   // a stored index is the row's number in the file
            const QStringList& row = rows.at(size_t(p.index));
            QCOMPARE(row[0].toLongLong(), p.index);
            QCOMPARE("prob:" + row[1], header[4 + int(p.predicted)]);
            QCOMPARE("prob:" + row[3], header[4 + int(p.true_label)]);
            QVERIFY2(std::abs(row[2].toDouble() - p.confidence) < 1e-5,
                     qPrintable(QString("%1 vs %2").arg(row[2]).arg(p.confidence)));
        }
    }

    // New rows need the model's columns by name, in any order; other columns are left aside and
    // named, and rows without the label column are not scored.
    void columnsAreFoundByNameAndOthersLeftAside() {
        const QString input = writeFile("new.csv", "id,petal_width,sepal_length,petal_length,sepal_width\n"
                                                   "7,0.2,5.1,1.4,3.5\n8,2.1,6.9,5.8,3.1\n");
        const QString same = writeFile("same.csv", "sepal_length,sepal_width,petal_length,petal_width\n"
                                                   "5.1,3.5,1.4,0.2\n6.9,3.1,5.8,2.1\n");
        const QString a = m_dir.filePath("new-out.csv"), b = m_dir.filePath("same-out.csv");
        const CliResult r = cliOn(m_tableDb, {"predict", "1", "--input", input, "-o", a});
        QVERIFY2(r.exit_code == 0 && r.out.contains("note: columns the run's model does not read were left aside: [id]"),
                 qPrintable(r.out));
        QVERIFY2(!r.out.contains("accuracy"), qPrintable(r.out));
        QCOMPARE(cliOn(m_tableDb, {"predict", "1", "--input", same, "-o", b}).exit_code, 0);
        QFile fa(a), fb(b);
        QVERIFY(fa.open(QIODevice::ReadOnly) && fb.open(QIODevice::ReadOnly));
        QCOMPARE(fa.readAll(), fb.readAll());
        fa.seek(0);
        QCOMPARE(csvFields(fa).mid(0, 4), (QStringList{"index", "predicted", "confidence", "prob:setosa"}));
    }

    // Every bad input names its problem, exits 3 and writes no predictions.
    void badRowsAreRefusedNamingTheProblem_data() {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("message");
        QTest::newRow("misspelt column") << QByteArray("sepal_length,sepal_width,petal_lenght,petal_width\n1,2,3,4\n")
                                         << "no feature column 'petal_length' (did you mean 'petal_lenght'?)";
        QTest::newRow("missing columns") << QByteArray("sepal_length,sepal_width\n1,2\n")
                                         << "no columns [petal_length, petal_width], which the run's model reads";
        QTest::newRow("not a number") << QByteArray("sepal_length,sepal_width,petal_length,petal_width\n1,2,3,4\n1,x,3,4\n")
                                      << ":3, column 'sepal_width': 'x' is not a number";
        QTest::newRow("no rows") << QByteArray("sepal_length,sepal_width,petal_length,petal_width\n")
                                 << "no data rows after the header";
        QTest::newRow("twice") << QByteArray("sepal_length,sepal_width,petal_length,petal_width,petal_width\n1,2,3,4,5\n")
                               << "column 'petal_width' appears twice";
    }
    void badRowsAreRefusedNamingTheProblem() {
        QFETCH(QByteArray, content);
        QFETCH(QString, message);
        const QString input = writeFile("bad.csv", content), out = m_dir.filePath("bad-out.csv");
        QFile::remove(out);
        const CliResult r = cliOn(m_tableDb, {"predict", "1", "--input", input, "-o", out});
        QCOMPARE(r.exit_code, 3);
        QVERIFY2(r.out.contains("bad.csv") && r.out.contains(message), qPrintable(r.out));
        QVERIFY(!QFile::exists(out));
    }

    // An output that cannot be written is refused before any work (it was found only when writing,
    // after the forward passes: 10 s for 10,000 images), and so is the input file itself, which the
    // predictions would have overwritten.
    void aBadOutputIsRefusedBeforeAnyWork() {
        const QString input = writeFile("keep.csv", "sepal_length,sepal_width,petal_length,petal_width\n5.1,3.5,1.4,0.2\n");
        const CliResult same = cliOn(m_tableDb, {"predict", "1", "--input", input, "-o", input});
        QCOMPARE(same.exit_code, 2);
        QVERIFY2(same.out.contains("--output: '" + input + "' is the input file: the predictions would overwrite it"),
                 qPrintable(same.out));
        QFile kept(input);
        QVERIFY(kept.open(QIODevice::ReadOnly));
        QCOMPARE(kept.readAll(), QByteArray("sepal_length,sepal_width,petal_length,petal_width\n5.1,3.5,1.4,0.2\n"));
        const QString nowhere = m_dir.filePath("no-such-folder/out.csv");
        const CliResult missing = cliOn(m_tableDb, {"predict", "1", "--input", input, "-o", nowhere});
        QCOMPARE(missing.exit_code, 3);
        QVERIFY2(missing.out.contains(nowhere + ": cannot write the predictions: no folder"), qPrintable(missing.out));
        const CliResult folder = cliOn(m_tableDb, {"predict", "1", "--input", input, "-o", m_dir.path()});
        QCOMPARE(folder.exit_code, 3);
        QVERIFY2(folder.out.contains("is a folder, not a file to write the predictions to"), qPrintable(folder.out));
    }

    // A label the run never saw is written but not scored, and said.
    void unknownLabelsAreNotScored() {
        const QString input = writeFile("labels.csv", "sepal_length,sepal_width,petal_length,petal_width,species\n"
                                                      "5.1,3.5,1.4,0.2,tulip\n5.1,3.5,1.4,0.2,setosa\n5,3,1,0,\n");
        const CliResult r = cliOn(m_tableDb, {"predict", "1", "--input", input, "-o", m_dir.filePath("labels-out.csv")});
        QVERIFY2(r.exit_code == 0 && r.out.contains("labels that are not one of the model's classes were not scored: [tulip]") &&
                     r.out.contains("accuracy on the 1 rows with a label: 1"),
                 qPrintable(r.out));
        // --json: the same summary as one line for a program (the workbench's Predict dialog).
        const CliResult j = cliOn(m_tableDb, {"predict", "1", "--input", input, "-o", m_dir.filePath("labels-out.csv"),
                                              "--json"});
        QCOMPARE(j.exit_code, 0);
        const QStringList lines = j.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 1);
        const QJsonObject summary = QJsonDocument::fromJson(lines.front().toUtf8()).object();
        QCOMPARE(summary.value("predicted").toInt(), 3);
        QCOMPARE(summary.value("what").toString(), QString("rows"));
        QVERIFY(summary.value("device").toString().startsWith("c"));   // cpu, or cuda:0 on a GPU machine
        QVERIFY(summary.value("seconds").toDouble() > 0.0);
        QCOMPARE(summary.value("output").toString(), m_dir.filePath("labels-out.csv"));
        QCOMPARE(summary.value("labelled").toInt(), 1);
        QCOMPARE(summary.value("correct").toInt(), 1);
        const QJsonObject classes = summary.value("classes").toObject();
        QCOMPARE(classes.keys(), (QStringList{"setosa", "versicolor", "virginica"}));
        QCOMPARE(classes.value("setosa").toInt() + classes.value("versicolor").toInt() + classes.value("virginica").toInt(),
                 3);
        QCOMPARE(summary.value("notes").toArray().size(), 1);
        QCOMPARE(summary.value("notes").toArray().first().toString(),
                 QString("labels that are not one of the model's classes were not scored: [tulip]"));
        // --events: progress lines as the batches go (batch 1: the last one says all 3), then the same summary.
        const CliResult e = cliOn(m_tableDb, {"predict", "1", "--input", input, "-o", m_dir.filePath("labels-out.csv"),
                                              "--events", "--batch-size", "1"});
        QCOMPARE(e.exit_code, 0);
        const QStringList events = e.out.trimmed().split('\n');
        QVERIFY2(events.size() >= 2, qPrintable(e.out));
        const QJsonObject last = QJsonDocument::fromJson(events[events.size() - 2].toUtf8()).object();
        QCOMPARE(last.value("event").toString(), QString("predict_progress"));
        QCOMPARE(last.value("done").toInt(), 3);
        QCOMPARE(last.value("total").toInt(), 3);
        QCOMPARE(last.value("what").toString(), QString("rows"));
        const QJsonObject end = QJsonDocument::fromJson(events.back().toUtf8()).object();
        QCOMPARE(end.value("event").toString(), QString("predict_summary"));
        QCOMPARE(end.value("correct").toInt(), 1);
    }

    // True classes under another name: --label-column scores them (and that column is not read as
    // a feature or called unread); a name the input lacks is refused naming its columns; images
    // take their class from their folders, not a column.
    void anotherLabelColumnIsChosen() {
        const QString fixed = writeFile("kinds.csv", "sepal_length,sepal_width,petal_length,petal_width,kind\n"
                                                     "5.1,3.5,1.4,0.2,setosa\n6.9,3.1,5.8,2.1,virginica\n");
        const QString out = m_dir.filePath("kinds-out.csv");
        const CliResult unscored = cliOn(m_tableDb, {"predict", "1", "--input", fixed, "-o", out});
        QVERIFY2(unscored.exit_code == 0 && !unscored.out.contains("accuracy") &&
                     unscored.out.contains("left aside: [kind]"),
                 qPrintable(unscored.out));
        const CliResult scored = cliOn(m_tableDb, {"predict", "1", "--input", fixed, "-o", out, "--label-column", "kind"});
        QVERIFY2(scored.exit_code == 0 && scored.out.contains("accuracy on the 2 rows with a label: 1") &&
                     !scored.out.contains("left aside"),
                 qPrintable(scored.out));
        QFile written(out);
        QVERIFY(written.open(QIODevice::ReadOnly));
        QCOMPARE(csvFields(written).mid(0, 4), (QStringList{"index", "predicted", "confidence", "true"}));

        QFile::remove(out);
        const CliResult misspelt = cliOn(m_tableDb, {"predict", "1", "--input", fixed, "-o", out, "--label-column", "knid"});
        QCOMPARE(misspelt.exit_code, 3);
        QVERIFY2(misspelt.out.contains("kinds.csv: no label column 'knid' (did you mean 'kind'?)") &&
                     misspelt.out.contains("(--label-column)"),
                 qPrintable(misspelt.out));
        QVERIFY(!QFile::exists(out));
        const CliResult images = cliOn(m_tableDb, {"predict", "1", "--images", m_dir.path(), "-o", out, "--label-column", "kind"});
        QCOMPARE(images.exit_code, 2);
        QVERIFY2(images.out.contains("images are labelled by their class folders"), qPrintable(images.out));
    }

    // The run stores its training rows' statistics beside its checkpoint: its predictions stay the
    // same when the training file gains rows or is moved away. A run from before that (no file)
    // computes them again from its training file, says so, and names that file when it is gone.
    void theRunsOwnStatisticsOutliveItsTrainingFile() {
        const QString stats = m_tableDb + ".artifacts/1/normalization.json";
        QVERIFY(QFile::exists(stats));
        const QString before = m_dir.filePath("before.csv"), after = m_dir.filePath("after.csv");
        QCOMPARE(cliOn(m_tableDb, {"predict", "1", "--input", m_iris, "-o", before}).exit_code, 0);
        const QString original = m_iris + ".original";
        QVERIFY(QFile::copy(m_iris, original));
        QFile grown(m_iris);
        QVERIFY(grown.open(QIODevice::Append));
        grown.write("9.9,9.9,9.9,9.9,virginica\n0.1,0.1,0.1,0.1,setosa\n");
        grown.close();
        QCOMPARE(cliOn(m_tableDb, {"predict", "1", "--input", original, "-o", after}).exit_code, 0);
        QFile a(before), b(after);
        QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
        QCOMPARE(b.readAll(), a.readAll());
        QVERIFY(QFile::remove(m_iris));
        const CliResult moved = cliOn(m_tableDb, {"predict", "1", "--input", original, "-o", after});
        QVERIFY2(moved.exit_code == 0 && !moved.out.contains("note:"), qPrintable(moved.out));

        // An older run: its training file again (here back as it was), with a note.
        QVERIFY(QFile::copy(original, m_iris));
        const QString kept = stats + ".kept";
        QVERIFY(QFile::rename(stats, kept));
        const CliResult older = cliOn(m_tableDb, {"predict", "1", "--input", original, "-o", after});
        QVERIFY2(older.exit_code == 0 && older.out.contains("note: the run stored no normalization") &&
                     older.out.contains("computed again from " + m_iris),
                 qPrintable(older.out));
        b.close();
        QVERIFY(b.open(QIODevice::ReadOnly));
        a.seek(0);
        QCOMPARE(b.readAll(), a.readAll());
        QVERIFY(QFile::remove(m_iris));
        const CliResult gone = cliOn(m_tableDb, {"predict", "1", "--input", original, "-o", after});
        QVERIFY(QFile::rename(original, m_iris));
        QVERIFY(QFile::rename(kept, stats));
        QCOMPARE(gone.exit_code, 3);
        QVERIFY2(gone.out.contains("training rows' statistics") && gone.out.contains("data.path '" + m_iris + "'"),
                 qPrintable(gone.out));
    }

    // A malformed statistics file is named, not read as something else.
    void aBrokenStatisticsFileIsNamed() {
        const QString stats = m_tableDb + ".artifacts/1/normalization.json";
        QFile file(stats);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray good = file.readAll();
        file.close();
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write("{\"kind\": \"csv\", \"mean\": [1]}");
        file.close();
        const CliResult r = cliOn(m_tableDb, {"predict", "1", "--input", m_iris, "-o", m_dir.filePath("broken.csv")});
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(good);
        file.close();
        QCOMPARE(r.exit_code, 3);
        QVERIFY2(r.out.contains("normalization.json: the run's input normalization cannot be read"), qPrintable(r.out));
    }
};

QTEST_GUILESS_MAIN(TestCliPredict)
#include "test_cli_predict.moc"
