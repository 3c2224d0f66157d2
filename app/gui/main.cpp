// hearth: the desktop workbench. Parses the command line and opens the main window.
#include "engine/config/DeviceInfo.h"
#include "engine/config/ExperimentConfig.h"
#include "storage/RunStore.h"
#include "ui/MainWindow.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QMessageBox>
#include <QTimer>

#include <cstdio>
#include <cstring>
#include <memory>

namespace {

struct Options {
    QCommandLineOption db{QStringLiteral("db"),
                          QStringLiteral("Run store (default: $HEARTH_DB, else ~/.local/share/hearth/runs.sqlite)."),
                          QStringLiteral("PATH")};
    QCommandLineOption config{QStringLiteral("config"), QStringLiteral("Experiment JSON to load."), QStringLiteral("FILE")};
    QCommandLineOption set{QStringList{QStringLiteral("s"), QStringLiteral("set")},
                           QStringLiteral("Override a config key of the experiment, e.g. --set trainer.max_epochs=1 "
                                          "(repeatable; hearth-cli keys lists the keys)."),
                           QStringLiteral("KEY=VALUE")};
    QCommandLineOption autostart{QStringLiteral("autostart"), QStringLiteral("Start the experiment at once.")};
    QCommandLineOption report{QStringLiteral("report"), QStringLiteral("Open the report of this run."), QStringLiteral("RUN")};
    QCommandLineOption compare{QStringLiteral("compare"), QStringLiteral("Compare these runs (e.g. 3,4)."),
                               QStringLiteral("RUNS")};
    QCommandLineOption history{QStringLiteral("history"), QStringLiteral("Open the run history.")};
};

void describe(QCommandLineParser& parser, const Options& o)
{
    parser.setApplicationDescription(QStringLiteral("A desktop workbench for training LibTorch models."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOptions({o.db, o.config, o.set, o.autostart, o.report, o.compare, o.history});
}

void nameApplication()
{
    QCoreApplication::setApplicationName(QStringLiteral("hearth"));
    QCoreApplication::setOrganizationName(QStringLiteral("Hearth"));
    QCoreApplication::setApplicationVersion(QStringLiteral(HEARTH_VERSION));
}

// --help prints and exits without a window, so it works with no display too (as --version does).
bool asksOnlyForText(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i)
        for (const char* flag : {"-h", "--help", "-?", "--help-all"})
            if (std::strcmp(argv[i], flag) == 0)
                return true;
    return false;
}

// Linux without X11 or Wayland: Qt would abort naming its platform plugin; this names the way out.
bool noDisplay()
{
#if defined(Q_OS_LINUX)
    return qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") &&
           qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
#else
    return false;
#endif
}

}  // namespace

int main(int argc, char** argv)
{
    const Options o;
    // As hearth-cli's: the version, the LibTorch and CUDA built in, and the devices seen.
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "-v") == 0 || std::strcmp(argv[i], "--version") == 0) {
            std::fputs(hearth::versionReport("hearth").c_str(), stdout);
            return 0;
        }
    }
    if (asksOnlyForText(argc, argv)) {
        const QCoreApplication text(argc, argv);
        nameApplication();
        QCommandLineParser parser;
        describe(parser, o);
        parser.process(text);   // prints and exits
        return 0;
    }
    if (noDisplay()) {
        std::fputs("hearth: no display (DISPLAY and WAYLAND_DISPLAY are unset). Without one, hearth-cli runs the same "
                   "engine (hearth-cli run, hearth-cli runs, hearth-cli export N --format html); or run the window "
                   "offscreen with QT_QPA_PLATFORM=offscreen.\n",
                   stderr);
        return 1;
    }
    QApplication app(argc, argv);
    nameApplication();
    QApplication::setApplicationDisplayName(QStringLiteral("Hearth"));
    QApplication::setDesktopFileName(QStringLiteral("org.hearth_workbench.Hearth"));   // the installed .desktop (installer/)
    Q_INIT_RESOURCE(hearth);
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/hearth.png")));

    QCommandLineParser parser;
    describe(parser, o);
    parser.process(app);

    hearth::ui::MainWindowOptions options;
    options.dbPath = parser.isSet(o.db) ? parser.value(o.db) : QString::fromStdString(hearth::RunStore::defaultPath());
    options.configPath = parser.value(o.config);
    options.overrides = parser.values(o.set);
    // A bad override is a bad argument, as in hearth-cli: said on the terminal, before a window opens.
    hearth::ExperimentConfig scratch;
    for (const QString& assignment : options.overrides) {
        try {
            hearth::applyOverride(scratch, assignment.toStdString());
        } catch (const std::exception& e) {
            std::fprintf(stderr, "hearth: error: %s\n", e.what());
            return 2;
        }
    }
    std::unique_ptr<hearth::ui::MainWindow> window;
    try {
        window = std::make_unique<hearth::ui::MainWindow>(options);
    } catch (const std::exception& e) {
        QMessageBox::critical(nullptr, QStringLiteral("Hearth"),
                              QStringLiteral("Cannot open the run store.\n\n%1").arg(QString::fromStdString(e.what())));
        return 1;
    }
    window->show();
    if (parser.isSet(o.report))
        window->openReport(parser.value(o.report).toLongLong());
    if (parser.isSet(o.compare)) {
        QList<qint64> ids;
        for (const QString& id : parser.value(o.compare).split(QLatin1Char(','), Qt::SkipEmptyParts))
            ids << id.trimmed().toLongLong();
        window->compareRuns(ids);
    }
    if (parser.isSet(o.history))
        window->showTab(hearth::ui::MainWindow::Tab::History);
    if (parser.isSet(o.autostart))
        QTimer::singleShot(0, window.get(), [&window] { window->startRun(); });
    return QApplication::exec();
}
