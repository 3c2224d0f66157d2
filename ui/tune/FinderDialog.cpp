#include "ui/tune/FinderDialog.h"

#include "ui/tune/FinderRunner.h"
#include "ui/widgets/ValidatedField.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

namespace hearth::ui {
namespace {

// Several devices: the finder's child launches the ranks, as hearth-cli tune does.
bool severalDevices(const hearth::ExperimentConfig& config)
{
    return config.trainer.devices.value_or(1) * config.trainer.num_nodes > 1;
}

}  // namespace

FinderDialog::FinderDialog(const hearth::ExperimentConfig& config, const QString& title, const QString& intro,
                           QWidget* parent)
    : QDialog(parent), m_config(config), m_runner(new FinderRunner(this)), m_settings(new QFormLayout),
      m_results(new QVBoxLayout), m_start(new QPushButton(tr("&Start"))), m_apply(new QPushButton(tr("&Apply"))),
      m_progress(new QProgressBar), m_status(new QLabel)
{
    setWindowTitle(title);
    auto* introLabel = new QLabel(severalDevices(config)
                                      ? intro + QLatin1Char(' ')
                                            + tr("The search runs on all of the experiment's devices, one process "
                                                 "each, and the ranks agree on every trial.")
                                      : intro);
    introLabel->setWordWrap(true);
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setTextVisible(false);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_apply->setEnabled(false);

    auto* run = new QHBoxLayout;
    run->addWidget(m_start);
    run->addWidget(m_progress, 1);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    buttons->addButton(m_apply, QDialogButtonBox::AcceptRole);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(introLabel);
    layout->addLayout(m_settings);
    layout->addLayout(run);
    layout->addWidget(m_status);
    layout->addLayout(m_results, 1);
    layout->addWidget(buttons);

    connect(m_start, &QPushButton::clicked, this, &FinderDialog::start);
    connect(m_apply, &QPushButton::clicked, this, [this] {
        applyResult();
        accept();
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_runner, &FinderRunner::progress, this, [this](double fraction, const QString& what) {
        m_progress->setValue(static_cast<int>(fraction * 1000.0));
        setStatus(what);
    });
    connect(m_runner, &FinderRunner::finished, this, &FinderDialog::onFinished);
}

void FinderDialog::done(int result)
{
    if (m_runner->isRunning()) {
        m_closeWhenStopped = true;
        m_runner->requestStop();
        m_start->setEnabled(false);
        setStatus(tr("Stopping after the current step, then closing…"));
        return;
    }
    QDialog::done(result);
}

void FinderDialog::start()
{
    if (m_runner->isRunning()) {
        m_runner->requestStop();
        m_start->setEnabled(false);
        setStatus(tr("Stopping after the current step…"));
        return;
    }
    m_apply->setEnabled(false);
    const QString problem = startFinder();
    if (!problem.isEmpty()) {
        setStatus(problem, true);
        return;
    }
    m_progress->setValue(0);
    setStatus(tr("Loading the data and building the model…"));
    setRunning(true);
}

void FinderDialog::setStatus(const QString& text, bool error)
{
    m_status->setText(text);
    m_status->setStyleSheet(error ? QStringLiteral("color: %1;").arg(errorColor().name()) : QString());
}

void FinderDialog::setRunning(bool running)
{
    m_start->setEnabled(true);
    m_start->setText(running ? tr("S&top") : tr("&Start"));
    for (int row = 0; row < m_settings->rowCount(); ++row) {
        if (auto* item = m_settings->itemAt(row, QFormLayout::FieldRole); item && item->widget())
            item->widget()->setEnabled(!running);
    }
}

void FinderDialog::onFinished()
{
    if (m_closeWhenStopped) {
        QDialog::done(QDialog::Rejected);
        return;
    }
    setRunning(false);
    m_progress->setValue(m_progress->maximum());
    if (!m_runner->errorMessage().isEmpty()) {
        setStatus(m_runner->errorMessage(), true);
        return;
    }
    m_apply->setEnabled(showResult());
}

}  // namespace hearth::ui
