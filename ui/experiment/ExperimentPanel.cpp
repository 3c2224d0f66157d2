#include "ui/experiment/ExperimentPanel.h"

#include "ui/experiment/ExperimentForm.h"
#include "ui/session/DeviceProbe.h"
#include "ui/widgets/Format.h"
#include "ui/widgets/ValidatedField.h"

#include <QCoreApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPointer>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QStandardPaths>
#include <QToolButton>
#include <QVBoxLayout>

namespace hearth::ui {

namespace {
constexpr int kMaxRecent = 8;
const char* kRecentKey = "experiment/recentFiles";
const char* kLastConfigKey = "experiment/lastConfig";
const char* kLastFileKey = "experiment/lastFile";

// Scrolls the form vertically and is never narrower than the form's widest row: with no
// horizontal scroll bar, a narrower viewport clipped the fields and their buttons at the right.
class FormScrollArea final : public QScrollArea {
public:
    QSize minimumSizeHint() const override
    {
        QSize hint = QScrollArea::minimumSizeHint();
        if (const QWidget* form = widget())
            hint.setWidth(form->minimumSizeHint().width() + verticalScrollBar()->sizeHint().width() + 2 * frameWidth());
        return hint;
    }
};
}  // namespace

ExperimentPanel::ExperimentPanel(QWidget* parent)
    : QWidget(parent), m_form(new ExperimentForm), m_summary(new QLabel), m_start(new QPushButton(tr("Start"))),
      m_stop(new QPushButton(tr("Stop"))), m_ladder(new QPushButton(tr("Ladder…"))), m_recentMenu(new QMenu(tr("Open Recent"), this))
{
    // The machine's capabilities come from the process's probe (off the GUI thread): until they
    // do, the form offers what a CPU-only machine can run and says the devices are being probed.
    DeviceProbe& probe = DeviceProbe::instance();
    m_caps = probe.capabilities();
    m_form->setCapabilities(m_caps, probe.isReady());
    connect(&probe, &DeviceProbe::ready, this, [this, &probe] {
        m_caps = probe.capabilities();
        m_form->setCapabilities(m_caps);
        revalidate();
    });

    auto* fileRow = new QHBoxLayout;
    auto* open = new QToolButton;
    open->setText(tr("Open…"));
    open->setMenu(m_recentMenu);
    open->setPopupMode(QToolButton::MenuButtonPopup);
    open->setToolButtonStyle(Qt::ToolButtonTextOnly);
    connect(open, &QToolButton::clicked, this, &ExperimentPanel::openInteractively);
    auto* save = new QToolButton;
    save->setText(tr("Save…"));
    connect(save, &QToolButton::clicked, this, &ExperimentPanel::saveAsInteractively);
    fileRow->addWidget(open);
    fileRow->addWidget(save);
    fileRow->addStretch(1);

    auto* scroll = new FormScrollArea;
    scroll->setWidget(m_form);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

    m_summary->setWordWrap(true);
    m_summary->setObjectName(QStringLiteral("issueSummary"));
    QPalette pal = m_summary->palette();
    pal.setColor(QPalette::WindowText, errorColor());
    m_summary->setPalette(pal);
    m_summary->setVisible(false);

    m_start->setObjectName(QStringLiteral("startButton"));
    m_start->setDefault(true);
    m_start->setToolTip(tr("Start training (Ctrl+R)"));
    m_stop->setObjectName(QStringLiteral("stopButton"));
    m_stop->setToolTip(tr("Stop after the current step (Esc)"));
    m_stop->setEnabled(false);
    connect(m_start, &QPushButton::clicked, this, &ExperimentPanel::requestStart);
    connect(m_stop, &QPushButton::clicked, this, &ExperimentPanel::stopRequested);
    m_ladder->setObjectName(QStringLiteral("ladderButton"));
    m_ladder->setToolTip(tr("Speed study: run this experiment as a 32-true baseline, then with mixed precision, "
                            "then with loader workers (and accumulation), and compare the runs"));
    connect(m_ladder, &QPushButton::clicked, this, [this] {
        if (m_valid && !m_running)
            Q_EMIT ladderRequested(config());
    });
    auto* runRow = new QHBoxLayout;
    runRow->addWidget(m_start, 1);
    runRow->addWidget(m_ladder);
    runRow->addWidget(m_stop);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(fileRow);
    layout->addWidget(scroll, 1);
    layout->addWidget(m_summary);
    layout->addLayout(runRow);

    connect(m_form, &ExperimentForm::changed, this, &ExperimentPanel::revalidate);
    // A path check that outlived its patience has returned: check again, on the GUI thread.
    m_inputCheck.setOnLateResult([panel = QPointer<ExperimentPanel>(this)] {
        if (QCoreApplication* app = QCoreApplication::instance())
            QMetaObject::invokeMethod(app, [panel] {
                if (panel)
                    panel->revalidate();
            }, Qt::QueuedConnection);
    });
    rebuildRecentMenu();
    revalidate();
}

void ExperimentPanel::setConfig(const hearth::ExperimentConfig& config)
{
    m_form->setConfig(config);   // emits changed() -> revalidate()
}

hearth::ExperimentConfig ExperimentPanel::config() const
{
    return m_form->config();
}

void ExperimentPanel::revalidate()
{
    std::vector<hearth::ConfigIssue> issues;
    const hearth::ExperimentConfig cfg = m_form->config(&issues);
    for (auto& issue : hearth::validate(cfg, m_caps))
        issues.push_back(std::move(issue));
    // A path that is not there (or not of its kind) is marked at its field now, not reported by a
    // failed run later; a file system that does not answer is said so, and the window goes on.
    for (auto& issue : m_inputCheck.problems(cfg))
        issues.push_back(std::move(issue));
    const auto unmatched = m_form->showIssues(issues);
    m_issueLines.clear();
    for (const auto& issue : issues)
        m_issueLines << qstr(issue.key) + QStringLiteral(": ") + qstr(issue.message);
    QStringList general;
    for (const auto& issue : unmatched)
        general << qstr(issue.key) + QStringLiteral(": ") + qstr(issue.message);
    if (general.isEmpty() && !issues.empty())
        general << tr("%n setting(s) need attention (marked above).", nullptr, static_cast<int>(issues.size()));
    m_summary->setText(general.join(QLatin1Char('\n')));
    m_summary->setVisible(!issues.empty());
    const bool valid = issues.empty();
    m_start->setEnabled(valid && !m_running);
    m_ladder->setEnabled(valid && !m_running);
    m_start->setToolTip(valid ? tr("Start training (Ctrl+R)") : m_issueLines.join(QLatin1Char('\n')));
    if (valid != m_valid) {
        m_valid = valid;
        Q_EMIT validityChanged(valid);
    }
}

void ExperimentPanel::requestStart()
{
    if (!m_valid || m_running)
        return;
    rememberConfig();
    Q_EMIT startRequested(config());
}

void ExperimentPanel::setRunning(bool running)
{
    m_running = running;
    m_start->setEnabled(m_valid && !running);
    m_ladder->setEnabled(m_valid && !running);
    m_stop->setEnabled(running);
}

void ExperimentPanel::setDataSource(const QString& path)
{
    m_form->setDataSource(path);
}

void ExperimentPanel::setCurrentFile(const QString& path)
{
    m_file = QFileInfo(path).absoluteFilePath();
    addRecent(m_file);
    Q_EMIT fileChanged(m_file);
}

bool ExperimentPanel::openFile(const QString& path, QString* error)
{
    try {
        setConfig(hearth::loadConfigFile(path.toStdString()));
    } catch (const std::exception& e) {
        if (error)
            *error = qstr(e.what());
        return false;
    }
    setCurrentFile(path);
    return true;
}

bool ExperimentPanel::saveFile(const QString& path, QString* error)
{
    try {
        hearth::saveConfigFile(config(), path.toStdString());
    } catch (const std::exception& e) {
        if (error)
            *error = qstr(e.what());
        return false;
    }
    setCurrentFile(path);
    return true;
}

void ExperimentPanel::openInteractively()
{
    const QString dir = m_file.isEmpty() ? QStandardPaths::writableLocation(QStandardPaths::HomeLocation)
                                         : QFileInfo(m_file).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Experiment"), dir,
                                                      tr("Experiment JSON (*.json);;All files (*)"));
    QString error;
    if (!path.isEmpty() && !openFile(path, &error))
        QMessageBox::warning(this, tr("Cannot Open Experiment"), tr("%1\n\n%2").arg(path, error));
}

void ExperimentPanel::saveInteractively()
{
    if (m_file.isEmpty()) {
        saveAsInteractively();
        return;
    }
    QString error;
    if (!saveFile(m_file, &error))
        QMessageBox::warning(this, tr("Cannot Save Experiment"), error);
}

void ExperimentPanel::saveAsInteractively()
{
    const QString dir = m_file.isEmpty() ? QStandardPaths::writableLocation(QStandardPaths::HomeLocation)
                                         : QFileInfo(m_file).absolutePath();
    const QString suggested = dir + QLatin1Char('/') + qstr(config().name) + QStringLiteral(".json");
    const QString path = QFileDialog::getSaveFileName(this, tr("Save Experiment"), suggested,
                                                      tr("Experiment JSON (*.json)"));
    QString error;
    if (!path.isEmpty() && !saveFile(path, &error))
        QMessageBox::warning(this, tr("Cannot Save Experiment"), error);
}

void ExperimentPanel::addRecent(const QString& path)
{
    QSettings settings;
    QStringList recent = settings.value(kRecentKey).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kMaxRecent)
        recent.removeLast();
    settings.setValue(kRecentKey, recent);
    rebuildRecentMenu();
}

void ExperimentPanel::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(kRecentKey).toStringList();
    for (const QString& path : recent) {
        QAction* action = m_recentMenu->addAction(QFileInfo(path).fileName(), this, [this, path] {
            QString error;
            if (!openFile(path, &error))
                QMessageBox::warning(this, tr("Cannot Open Experiment"), tr("%1\n\n%2").arg(path, error));
        });
        action->setToolTip(path);
    }
    m_recentMenu->setEnabled(!recent.isEmpty());
}

bool ExperimentPanel::restoreLastConfig()
{
    QSettings settings;
    const QString json = settings.value(kLastConfigKey).toString();
    if (json.isEmpty())
        return false;
    try {
        setConfig(hearth::configFromJson(json.toStdString()));
    } catch (const std::exception&) {
        return false;   // written by another version; the defaults are a fine start
    }
    m_file = settings.value(kLastFileKey).toString();
    return true;
}

void ExperimentPanel::rememberConfig() const
{
    QSettings settings;
    settings.setValue(kLastConfigKey, qstr(hearth::configToJson(config())));
    settings.setValue(kLastFileKey, m_file);
}

}  // namespace hearth::ui
