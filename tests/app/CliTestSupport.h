#pragma once
// Running the built hearth-cli as a user would, for the app tests: its exit code and everything
// it printed (stdout and stderr merged). The timeout scales with the sanitizer presets.

#include "TestTimeouts.h"

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace hearth::test {

struct CliResult {
    int exit_code = -1;  // -1: it crashed or was killed after the timeout
    QString out;         // stdout + stderr
};

inline CliResult runCli(const QStringList& args, int timeout_ms = 120000,
                        const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.setProcessEnvironment(env);
    p.start(HEARTH_CLI_PATH, args);
    if (!p.waitForFinished(scaledTimeoutMs(timeout_ms))) {
        p.kill();
        p.waitForFinished();
    }
    CliResult r;
    r.exit_code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAll());
    return r;
}

// The same on the store at `database` (--db).
inline CliResult cliOn(const QString& database, const QStringList& args, int timeout_ms = 120000,
                       const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
    return runCli(QStringList{"--db", database} + args, timeout_ms, env);
}

// Writes `content` to `name` under `dir` (its folders made as needed); returns the path.
inline QString writeFileIn(const QDir& dir, const QString& name, const QByteArray& content) {
    QString path = dir.filePath(name);
    QDir().mkpath(QFileInfo(path).path());
    QFile f(path);
    if (f.open(QIODevice::WriteOnly)) f.write(content);
    return path;
}

}  // namespace hearth::test
