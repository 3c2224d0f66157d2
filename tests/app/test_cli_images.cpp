// hearth-cli on an image folder as a newcomer drives it: Fashion-MNIST written as a folder of PNG
// and JPEG files by scripts/make-image-folder trains a cnn and a resnet18 end to end, the decoded
// cache gives the same run as decoding in the loader, `predict --images` classifies a labelled
// folder and loose files; unreadable files and bad keys exit 3 or 2 naming the file or the key,
// leaving the runs already stored untouched; `inspect` summarises a TorchScript file.
#include "CliTestSupport.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

namespace {

using hearth::test::CliResult;

const QString kSource = QStringLiteral(HEARTH_SOURCE_DIR);

// "Test set (best checkpoint), loss 1.2345:" -> "1.2345"
QString testLoss(const QString& out) {
    const auto m = QRegularExpression("Test set \\(best checkpoint\\), loss ([0-9.]+)").match(out);
    return m.hasMatch() ? m.captured(1) : QString();
}

}  // namespace

class TestCliImages : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_folder, m_corrupt;

    CliResult cli(const QStringList& args) {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("HEARTH_CACHE_DIR", m_dir.filePath("cache"));
        return hearth::test::runCli(QStringList{"--db", m_dir.filePath("runs.sqlite")} + args, 240000, env);
    }

    static bool makeFolder(const QStringList& args) {
        QProcess p;
        p.start(kSource + "/scripts/make-image-folder", args);
        return p.waitForFinished(120000) && p.exitCode() == 0;
    }

    QStringList folderRun(const QString& folder, const QStringList& extra = {}) {
        return QStringList{"run", "--set", "data.kind=image_folder", "--set", "data.path=" + folder,
                           "--set", "data.image_size=32", "--set", "trainer.max_epochs=1",
                           "--set", "trainer.batch_size=16", "--set", "data.val_fraction=0.2"} +
               extra;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        if (!QFileInfo::exists(kSource + "/.deps/python/bin/python"))
            QSKIP("no .deps/python (scripts/install-deps makes it, with Pillow for scripts/make-image-folder)");
        m_folder = m_dir.filePath("fmnist");
        m_corrupt = m_dir.filePath("fmnist-corrupt");
        QVERIFY(makeFolder({"--per-class", "18", "--size", "32", m_folder}));
        QVERIFY(makeFolder({"--per-class", "6", "--size", "32", "--corrupt", m_corrupt}));
    }

    void cnnTrainsOnTheFolderAndPredictsIt() {
        const CliResult r = cli(folderRun(m_folder, {"--set", "name=folder-cnn"}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.out));
        QVERIFY2(r.out.contains("data: image folder fmnist 144/36/30 samples, 1x32x32, 10 classes"), qPrintable(r.out));
        QVERIFY(!testLoss(r.out).isEmpty());
        // The run stores how its images reached the model: grey, 32x32, ImageNet's grey statistics.
        QFile stats(m_dir.filePath("runs.sqlite.artifacts/1/normalization.json"));
        QVERIFY(stats.open(QIODevice::ReadOnly));
        const QByteArray json = stats.readAll();
        QVERIFY2(json.contains("\"kind\": \"image_folder\"") && json.contains("\"mean\": [\n    0.449"), json.constData());
        // A labelled folder: every test image, with its true class and the accuracy.
        const QString csv = m_dir.filePath("pred.csv");
        const CliResult p = cli({"predict", "--run", "folder-cnn", "--images", m_folder + "/test", "--output", csv});
        QVERIFY2(p.exit_code == 0, qPrintable(p.out + p.out));
        QVERIFY2(p.out.contains("Predicted 30 images"), qPrintable(p.out));
        QVERIFY(p.out.contains("accuracy on the 30 images in class folders"));
        QFile f(csv);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(f.readAll()).trimmed().split('\n');
        QCOMPARE(lines.size(), 31);
        QVERIFY(lines[0].startsWith("file,predicted,confidence,true,prob:Ankle_boot"));
        QVERIFY(lines[1].contains("/test/Ankle_boot/"));
        QVERIFY(lines[1].split(',')[3] == "Ankle_boot");
        // Loose files: no truth column value.
        const QString one = QDir(m_folder + "/test/Bag").entryInfoList({"*.png"}).first().filePath();
        // The run as the store's other commands take it, and -o as export's.
        const CliResult loose = cli({"predict", "folder-cnn", "--images", one, "-o", csv});
        QVERIFY2(loose.exit_code == 0, qPrintable(loose.out));
        QVERIFY(loose.out.contains("Predicted 1 images"));
        QVERIFY(!loose.out.contains("accuracy"));
        // The HTML report shows the misclassified samples' own files.
        const QString html = m_dir.filePath("report.html");
        const CliResult e = cli({"export", "folder-cnn", "--format", "html", "--out", html});
        QVERIFY2(e.exit_code == 0, qPrintable(e.out));
        QFile page(html);
        QVERIFY(page.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(page.readAll());
        QVERIFY(text.contains("data:image/png;base64") || text.contains("data:image/jpeg;base64"));
        QVERIFY(text.contains("title=\"" + m_folder + "/test/"));
        // predict on a text run's terms is refused naming the option.
        const CliResult wrong = cli({"predict", "--run", "folder-cnn", "--input", csv, "--output", csv});
        QCOMPARE(wrong.exit_code, 2);
    }

    void resnet18TrainsOnTheFolder() {
        const CliResult r = cli(folderRun(m_folder, {"--set", "model.name=resnet18", "--set", "name=folder-resnet"}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.out + r.out));
        QVERIFY(r.out.contains("new resnet18 (torchvision's initialisation)"));
        QVERIFY(r.out.contains("layer4.1.conv2"));
    }

    void decodedCacheGivesTheSameRun() {
        const CliResult plain = cli(folderRun(m_folder, {"--set", "trainer.num_workers=2"}));
        const CliResult built = cli(folderRun(m_folder, {"--set", "data.cache_decoded=true"}));
        const CliResult read = cli(folderRun(m_folder, {"--set", "data.cache_decoded=true", "--set", "trainer.num_workers=2"}));
        QVERIFY2(plain.exit_code == 0 && built.exit_code == 0 && read.exit_code == 0, qPrintable(built.out + read.out));
        QVERIFY2(built.out.contains("decoded cache built: 180 train images"), qPrintable(built.out));
        QVERIFY(read.out.contains("decoded cache read: 180 train images"));
        QVERIFY(!plain.out.contains("decoded cache"));
        // Same samples, same order, same pixels: the same test loss to the last printed digit.
        QCOMPARE(testLoss(built.out), testLoss(plain.out));
        QCOMPARE(testLoss(read.out), testLoss(plain.out));
    }

    void unreadableFilesExit3NamingThemOrAreSkipped() {
        const int before = cli({"runs"}).out.count('\n');
        const CliResult r = cli(folderRun(m_corrupt));
        QCOMPARE(r.exit_code, 3);
        QVERIFY2(r.out.contains("zz-empty.jpg: empty file") && r.out.contains("zz-not-an-image.png: neither a JPEG nor a PNG"),
                 qPrintable(r.out));
        QVERIFY(r.out.contains("data.on_bad_file=skip"));
        // Earlier runs are intact.
        const CliResult runs = cli({"runs"});
        QVERIFY(runs.out.contains("folder-cnn"));
        QVERIFY(runs.out.count('\n') >= before);
        const CliResult skip = cli(folderRun(m_corrupt, {"--set", "data.on_bad_file=skip"}));
        QVERIFY2(skip.exit_code == 0, qPrintable(skip.out + skip.out));
        QVERIFY(skip.out.contains("left out 3 unreadable train file(s)"));
        QVERIFY(skip.out.contains("zz-truncated.jpg: corrupt JPEG data"));
    }

    // The workbench's Model group shows this under model.path (its window does not link LibTorch).
    void inspectSummarisesATorchScriptFile() {
        const CliResult r = cli({"inspect", HEARTH_FIXTURES_DIR "/torchscript/text.pt"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        QVERIFY(r.out.contains("TorchScript module TextClassifier: 42,595 parameters in 15 tensors"));
        QVERIFY(r.out.contains("embed (Embedding)"));
        QVERIFY(r.out.contains("forward(Tensor input_ids, Tensor attention_mask) -> Tensor"));
        const CliResult bad = cli({"inspect", HEARTH_FIXTURES_DIR "/torchscript/state_dict.pt"});
        QCOMPARE(bad.exit_code, 2);
        QVERIFY(bad.out.contains("looks like a torch.save file"));
    }

    void badKeysAndFoldersAreNamed() {
        const CliResult small = cli(folderRun(m_folder, {"--set", "data.image_size=4"}));
        QCOMPARE(small.exit_code, 2);
        QVERIFY2(small.out.contains("data.image_size"), qPrintable(small.out));
        const CliResult missing = cli(folderRun(m_dir.filePath("nowhere")));
        QCOMPARE(missing.exit_code, 3);
        QVERIFY2(missing.out.contains("data.path: no such file or folder: " + m_dir.filePath("nowhere")),
                 qPrintable(missing.out));
        const QString file = HEARTH_FIXTURES_DIR "/torchscript/text.pt";
        const CliResult notAFolder = cli(folderRun(file));
        QCOMPARE(notAFolder.exit_code, 3);
        QVERIFY2(notAFolder.out.contains("data.path: " + file + " is a file; image_folder data is the folder of class "
                                                                "subfolders"),
                 qPrintable(notAFolder.out));
        const CliResult bad = cli(folderRun(m_folder, {"--set", "data.on_bad_file=ignore"}));
        QCOMPARE(bad.exit_code, 2);
        QVERIFY(bad.out.contains("data.on_bad_file"));
        const CliResult rrc = cli({"run", "--set", "data.augment.random_resized_crop=true", "--print-config"});
        QCOMPARE(rrc.exit_code, 2);
        QVERIFY(rrc.out.contains("data.augment.random_resized_crop: applies to image folders"));
        const CliResult pretrained = cli(folderRun(m_folder, {"--set", "model.name=resnet18", "--set",
                                                              "model.pretrained=" + m_dir.filePath("none.pth")}));
        QCOMPARE(pretrained.exit_code, 3);
        QVERIFY2(pretrained.out.contains("model.pretrained: no such file or folder: " + m_dir.filePath("none.pth")),
                 qPrintable(pretrained.out));
    }
};

QTEST_MAIN(TestCliImages)
#include "test_cli_images.moc"
