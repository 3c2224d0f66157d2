// hearth: the desktop workbench. Parses the command line and opens the main window.
#include "storage/RunStore.h"
#include "ui/MainWindow.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QMessageBox>
#include <QTimer>

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("hearth"));
    QApplication::setOrganizationName(QStringLiteral("Hearth"));
    QApplication::setApplicationDisplayName(QStringLiteral("Hearth"));
    QApplication::setApplicationVersion(QStringLiteral(HEARTH_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("org.hearth_workbench.Hearth"));   // the installed .desktop (installer/)
    Q_INIT_RESOURCE(hearth);
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/hearth.png")));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("A desktop workbench for training LibTorch models."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption db(QStringLiteral("db"), QStringLiteral("Run store (default: $HEARTH_DB, else "
                                "~/.local/share/hearth/runs.sqlite)."), QStringLiteral("PATH"));
    const QCommandLineOption config(QStringLiteral("config"), QStringLiteral("Experiment JSON to load."),
                                    QStringLiteral("FILE"));
    const QCommandLineOption autostart(QStringLiteral("autostart"), QStringLiteral("Start the experiment at once."));
    const QCommandLineOption report(QStringLiteral("report"), QStringLiteral("Open the report of this run."),
                                    QStringLiteral("RUN"));
    const QCommandLineOption compare(QStringLiteral("compare"), QStringLiteral("Compare these runs (e.g. 3,4)."),
                                     QStringLiteral("RUNS"));
    const QCommandLineOption history(QStringLiteral("history"), QStringLiteral("Open the run history."));
    parser.addOptions({db, config, autostart, report, compare, history});
    parser.process(app);

    hearth::ui::MainWindowOptions options;
    options.dbPath = parser.isSet(db) ? parser.value(db) : QString::fromStdString(hearth::RunStore::defaultPath());
    options.configPath = parser.value(config);
    std::unique_ptr<hearth::ui::MainWindow> window;
    try {
        window = std::make_unique<hearth::ui::MainWindow>(options);
    } catch (const std::exception& e) {
        QMessageBox::critical(nullptr, QStringLiteral("Hearth"),
                              QStringLiteral("Cannot open the run store.\n\n%1").arg(QString::fromStdString(e.what())));
        return 1;
    }
    window->show();
    if (parser.isSet(report))
        window->openReport(parser.value(report).toLongLong());
    if (parser.isSet(compare)) {
        QList<qint64> ids;
        for (const QString& id : parser.value(compare).split(QLatin1Char(','), Qt::SkipEmptyParts))
            ids << id.trimmed().toLongLong();
        window->compareRuns(ids);
    }
    if (parser.isSet(history))
        window->showTab(hearth::ui::MainWindow::Tab::History);
    if (parser.isSet(autostart))
        QTimer::singleShot(0, window.get(), [&window] { window->startRun(); });
    return QApplication::exec();
}
