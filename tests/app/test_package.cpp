// The Debian package: cpack builds it from this build directory, desktop-file-validate,
// appstreamcli and lintian accept it, its dependencies were computed (LibTorch, Qt), and the
// hearth-cli unpacked from it into a temporary root runs: --version, a preset, a short run.

#include "TestTimeouts.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

namespace {

struct Ran {
    int code = -1;
    QString out;
};

Ran run(const QString& program, const QStringList& args, const QString& cwd = {}, int timeout_ms = 300000) {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    if (!cwd.isEmpty()) p.setWorkingDirectory(cwd);
    p.start(program, args);
    if (!p.waitForFinished(hearth::test::scaledTimeoutMs(timeout_ms))) p.kill();
    p.waitForFinished();
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAll())};
}

}  // namespace

class PackageTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString deb_, root_;

private Q_SLOTS:
    void initTestCase();
    void dependenciesAreComputed();
    void desktopEntryAndMetainfoValidate();
    void lintianFindsNoErrors();
    void unpackedCliRuns();
};

void PackageTest::initTestCase() {
    for (const char* tool : {"cpack", "dpkg-deb", "dpkg-shlibdeps"})
        if (QStandardPaths::findExecutable(tool).isEmpty())
            QSKIP(qPrintable(QString("%1 is not installed (scripts/install-deps installs it)").arg(tool)));
    const QString config = QStringLiteral(HEARTH_BUILD_DIR) + "/CPackConfig.cmake";
    const Ran cpack = run("cpack", {"-G", "DEB", "--config", config, "-B", dir_.path()}, HEARTH_BUILD_DIR);
    QVERIFY2(cpack.code == 0, qPrintable(cpack.out));
    const QStringList debs = QDir(dir_.path()).entryList({"hearth_*_amd64.deb"}, QDir::Files);
    QCOMPARE(debs.size(), 1);
    deb_ = dir_.filePath(debs[0]);
    root_ = dir_.filePath("root");
    const Ran unpack = run("dpkg-deb", {"-x", deb_, root_});
    QVERIFY2(unpack.code == 0, qPrintable(unpack.out));
}

void PackageTest::dependenciesAreComputed() {
    const Ran depends = run("dpkg-deb", {"-f", deb_, "Depends"});
    QCOMPARE(depends.code, 0);
    for (const char* library : {"libtorch", "libqt6widgets6", "libsqlite3", "libicu", "libc6"})
        QVERIFY2(depends.out.contains(library), qPrintable(depends.out));
    const Ran contents = run("dpkg-deb", {"-c", deb_});
    for (const char* path : {"./usr/bin/hearth-cli", "./usr/bin/hearth", "./usr/share/hearth/presets/fashion-mnist-cnn.json",
                             "./usr/share/applications/org.hearth_workbench.Hearth.desktop",
                             "./usr/share/metainfo/org.hearth_workbench.Hearth.metainfo.xml",
                             "./usr/share/icons/hicolor/256x256/apps/hearth.png", "./usr/share/doc/hearth/copyright"})
        QVERIFY2(contents.out.contains(path), path);
}

void PackageTest::desktopEntryAndMetainfoValidate() {
    if (QStandardPaths::findExecutable("desktop-file-validate").isEmpty()) QSKIP("desktop-file-validate is not installed");
    const Ran desktop = run("desktop-file-validate", {root_ + "/usr/share/applications/org.hearth_workbench.Hearth.desktop"});
    QVERIFY2(desktop.code == 0 && !desktop.out.contains("error"), qPrintable(desktop.out));
    if (QStandardPaths::findExecutable("appstreamcli").isEmpty()) QSKIP("appstreamcli is not installed");
    const Ran metainfo = run("appstreamcli", {"validate", "--no-net", "--explain",
                                              root_ + "/usr/share/metainfo/org.hearth_workbench.Hearth.metainfo.xml"});
    QVERIFY2(metainfo.code == 0, qPrintable(metainfo.out));
}

void PackageTest::lintianFindsNoErrors() {
    if (QStandardPaths::findExecutable("lintian").isEmpty()) QSKIP("lintian is not installed");
    const Ran lintian = run("lintian", {"--fail-on", "error", "--tag-display-limit", "0", deb_});
    QVERIFY2(lintian.code == 0, qPrintable(lintian.out));
    QVERIFY2(!lintian.out.contains("\nE: ") && !lintian.out.startsWith("E: "), qPrintable(lintian.out));
}

void PackageTest::unpackedCliRuns() {
    const QString cli = root_ + "/usr/bin/hearth-cli";
    const Ran version = run(cli, {"--version"});
    QVERIFY2(version.code == 0 && version.out.contains("hearth-cli " HEARTH_VERSION), qPrintable(version.out));
    const QString preset = root_ + "/usr/share/hearth/presets/fashion-mnist-mlp-quick.json";
    const Ran validate = run(cli, {"run", "--config", preset, "--print-config"});   // parsed and validated
    QVERIFY2(validate.code == 0 && validate.out.contains("\"max_epochs\""), qPrintable(validate.out));
    const QString db = dir_.filePath("runs.sqlite");
    const Ran train = run(cli, {"run", "--config", preset, "--set", "data.limit=600", "--set", "trainer.max_epochs=1",
                                "--db", db});
    QVERIFY2(train.code == 0 && train.out.contains("Run #1 stored in " + db), qPrintable(train.out.right(1500)));
    QVERIFY(QFile::exists(db));
}

QTEST_GUILESS_MAIN(PackageTest)
#include "test_package.moc"
