#include "ui/live/ProgressPanel.h"

#include "storage/report/RunReport.h"
#include "ui/widgets/Format.h"

#include <QGridLayout>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>

namespace hearth::ui {

namespace {

// `widest`: the longest text the value usually takes, so that the row does not jump as it changes.
QLabel* valueLabel(const QString& name, const QString& widest)
{
    auto* label = new QLabel(QStringLiteral("–"));
    label->setObjectName(name);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setMinimumWidth(label->fontMetrics().horizontalAdvance(widest));
    return label;
}

// Events carry -1 for unknown.
QString computeText(double tflops, double mfu)
{
    return tflops < 0.0 ? QStringLiteral("–") : qstr(report::formatCompute(tflops, mfu, /*with_unit=*/false));
}

}  // namespace

ProgressPanel::ProgressPanel(QWidget* parent)
    : QWidget(parent), m_state(new QLabel(tr("Ready. Set up an experiment and press Start (Ctrl+R)."))),
      m_bar(new QProgressBar), m_epoch(valueLabel(QStringLiteral("epochValue"), QStringLiteral("00/00"))),
      m_batch(valueLabel(QStringLiteral("batchValue"), QStringLiteral("0000/0000"))),
      m_itPerSec(valueLabel(QStringLiteral("itPerSecValue"), QStringLiteral("000.00"))),
      m_samplesPerSec(valueLabel(QStringLiteral("samplesPerSecValue"), QStringLiteral("00,000"))),
      m_elapsed(valueLabel(QStringLiteral("elapsedValue"), QStringLiteral("00 min 00 s"))),
      m_eta(valueLabel(QStringLiteral("etaValue"), QStringLiteral("00 min 00 s"))),
      m_compute(valueLabel(QStringLiteral("computeValue"), QStringLiteral("0.000")))
{
    // A GPU's "412.3 (MFU 41.7%)" may be clipped in a narrow window rather than widen it.
    m_compute->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_compute->setToolTip(tr("Model FLOPs achieved per device (the model's matrix products and convolutions, "
                             "3x the forward pass per training sample) and MFU: that share of the device's "
                             "dense peak for the run's precision"));
    m_state->setObjectName(QStringLiteral("runState"));
    QFont bold = m_state->font();
    bold.setBold(true);
    m_state->setFont(bold);
    m_bar->setRange(0, 1000);
    m_bar->setValue(0);
    m_bar->setTextVisible(true);
    m_bar->setFormat(QStringLiteral("%p%"));

    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->addWidget(m_state, 0, 0, 1, 14);
    grid->addWidget(m_bar, 1, 0, 1, 14);
    const std::pair<QString, QLabel*> cells[] = {
        {tr("Epoch"), m_epoch}, {tr("Batch"), m_batch}, {tr("it/s"), m_itPerSec},
        {tr("samples/s"), m_samplesPerSec}, {tr("TFLOP/s"), m_compute}, {tr("Elapsed"), m_elapsed},
        {tr("ETA"), m_eta}};
    int column = 0;
    for (const auto& [caption, value] : cells) {
        auto* name = new QLabel(caption + QLatin1Char(':'));
        name->setForegroundRole(QPalette::PlaceholderText);
        grid->addWidget(name, 2, column++, Qt::AlignRight);
        grid->addWidget(value, 2, column++);
    }
}

void ProgressPanel::begin(qint64 runId, const QString& name)
{
    m_runLabel = tr("%1 (run %2)").arg(name).arg(runId);
    m_state->setText(tr("Starting %1 — loading data…").arg(m_runLabel));
    m_bar->setValue(0);
    for (QLabel* l : {m_epoch, m_batch, m_itPerSec, m_samplesPerSec, m_compute, m_elapsed, m_eta})
        l->setText(QStringLiteral("–"));
}

void ProgressPanel::setStarted(const hearth::RunStarted& s)
{
    m_maxEpochs = s.max_epochs;
    m_batchesPerEpoch = s.batches_per_epoch;
    m_state->setText(tr("Training %1 on %2 — %3 training samples, %4 parameters")
                         .arg(m_runLabel, qstr(s.device))
                         .arg(QLocale().toString(static_cast<qlonglong>(s.train_size)))
                         .arg(QLocale().toString(static_cast<qlonglong>(s.parameter_count))));
    m_epoch->setText(QStringLiteral("1/%1").arg(m_maxEpochs));
    m_batch->setText(QStringLiteral("0/%1").arg(m_batchesPerEpoch));
}

void ProgressPanel::setStep(const hearth::StepMetrics& s)
{
    const int64_t bpe = s.batches_per_epoch > 0 ? s.batches_per_epoch : m_batchesPerEpoch;
    m_epoch->setText(QStringLiteral("%1/%2").arg(s.epoch + 1).arg(m_maxEpochs));
    m_batch->setText(QStringLiteral("%1/%2").arg(s.batch).arg(bpe));
    // The plots' x axis counts optimizer steps over the whole fit, not this epoch's micro-batches.
    m_batch->setToolTip(tr("Micro-batch %1 of %2 in epoch %3; optimizer step %4 since the start (the plots' x axis)")
                            .arg(s.batch).arg(bpe).arg(s.epoch + 1).arg(s.global_step));
    m_itPerSec->setText(s.step_time_ms > 0 ? formatRate(1000.0 / s.step_time_ms) : QStringLiteral("–"));
    m_samplesPerSec->setText(formatRate(s.samples_per_sec));
    m_compute->setText(computeText(s.tflops, s.mfu));
    m_elapsed->setText(formatDuration(s.elapsed_s));
    m_eta->setText(formatDuration(s.eta_s));
    if (m_maxEpochs > 0 && bpe > 0) {
        const double done = static_cast<double>(s.epoch * bpe + s.batch) / static_cast<double>(m_maxEpochs * bpe);
        m_bar->setValue(static_cast<int>(std::clamp(done, 0.0, 1.0) * 1000));
    }
}

void ProgressPanel::setEpoch(const hearth::EpochMetrics& e)
{
    m_state->setText(tr("Training %1 — epoch %2 done: val accuracy %3, val loss %4")
                         .arg(m_runLabel)
                         .arg(e.epoch + 1)
                         .arg(formatPercent(e.val_accuracy))
                         .arg(e.val_loss, 0, 'f', 4));
}

void ProgressPanel::setFinished(const hearth::RunFinished& f)
{
    const bool completed = f.status == "completed";
    if (completed)
        m_bar->setValue(1000);
    m_eta->setText(completed ? tr("done") : QStringLiteral("–"));
    m_elapsed->setText(formatDuration(f.total_time_s));
    // The whole fit's averages (training time only, as every logged interval) replace the last interval's.
    m_samplesPerSec->setText(formatRate(f.samples_per_sec));
    m_compute->setText(computeText(f.tflops, f.mfu));
    m_itPerSec->setText(f.train_time_s > 0 ? formatRate(double(f.global_steps) / f.train_time_s) : QStringLiteral("–"));
    m_state->setText(completed ? tr("Completed %1 in %2 — test accuracy %3")
                                     .arg(m_runLabel, formatDuration(f.total_time_s), formatPercent(f.test_accuracy))
                               : tr("Stopped %1 after %2 epoch(s)").arg(m_runLabel).arg(f.epochs_completed));
    if (!f.stop_reason.empty())
        m_state->setText(m_state->text() + QStringLiteral(" — ") + qstr(f.stop_reason));
    m_state->setToolTip(qstr(f.stop_reason));
}

void ProgressPanel::setFailed(const hearth::RunFailed& f)
{
    m_state->setText(tr("Failed %1: %2").arg(m_runLabel, qstr(f.message)));
    m_eta->setText(QStringLiteral("–"));
}

QString ProgressPanel::stateText() const
{
    return m_state->text();
}

int ProgressPanel::percent() const
{
    return m_bar->value() / 10;
}

}  // namespace hearth::ui
