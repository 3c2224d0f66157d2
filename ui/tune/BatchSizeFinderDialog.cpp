#include "ui/tune/BatchSizeFinderDialog.h"

#include "engine/run/Finders.h"
#include "ui/tune/FinderRunner.h"
#include "ui/widgets/Format.h"

#include <QFormLayout>
#include <QHeaderView>
#include <QLineEdit>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace hearth::ui {

BatchSizeFinderDialog::BatchSizeFinderDialog(const hearth::ExperimentConfig& config, bool cuda, QWidget* parent)
    : FinderDialog(config, tr("Find Batch Size"),
                   tr("Doubles the batch size until a trial of a few real training steps runs out of memory, then "
                      "bisects between the last batch that fit and the first that did not, at the experiment's "
                      "precision, until the gap is small. The model you then train is not changed."),
                   parent),
      m_cuda(cuda), m_limit(new QLineEdit), m_maxBatch(new QSpinBox), m_steps(new QSpinBox),
      m_multiple(new QSpinBox), m_tolerance(new QSpinBox), m_table(new QTableWidget(0, 5))
{
    setObjectName(QStringLiteral("batchSizeFinderDialog"));
    if (cuda) {
        m_limit->setPlaceholderText(tr("the GPU's memory"));
    } else {
        m_limit->setText(QStringLiteral("4GiB"));
        m_limit->setToolTip(tr("On CPU nothing runs out of memory: a trial fails when this process's peak "
                               "resident memory passes this size."));
    }
    m_maxBatch->setRange(0, 1 << 24);
    m_maxBatch->setSpecialValueText(tr("no bound"));
    m_maxBatch->setValue(0);
    m_steps->setRange(1, 100);
    m_steps->setValue(3);
    const hearth::BatchSizeFinderOptions defaults;
    m_multiple->setRange(1, 1024);
    m_multiple->setValue(static_cast<int>(defaults.multiple_of));
    m_multiple->setToolTip(tr("Past this size the bisection tries only its multiples (GPU kernels work in multiples "
                              "of 8) and stops at a gap of at most this. 1 with 0 % finds the exact batch."));
    m_tolerance->setRange(0, 50);
    m_tolerance->setSuffix(tr(" %"));
    m_tolerance->setValue(static_cast<int>(std::lround(defaults.tolerance * 100.0)));
    m_tolerance->setToolTip(tr("The bisection stops once the gap between the largest fit and the first failure is "
                               "at most this share of the fit: fewer of the slowest trials."));
    settingsLayout()->addRow(cuda ? tr("Memory limit (optional):") : tr("Memory limit:"), m_limit);
    settingsLayout()->addRow(tr("Largest batch to try:"), m_maxBatch);
    settingsLayout()->addRow(tr("Steps per trial:"), m_steps);
    settingsLayout()->addRow(tr("Batch sizes in multiples of:"), m_multiple);
    settingsLayout()->addRow(tr("Stop within:"), m_tolerance);

    m_table->setHorizontalHeaderLabels({tr("Batch"), tr("Result"), tr("Peak memory"), tr("Time"), tr("Why")});
    m_table->verticalHeader()->setVisible(false);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setMinimumSize(520, 260);
    resultsLayout()->addWidget(m_table, 1);
    connect(runner(), &FinderRunner::trialsChanged, this, &BatchSizeFinderDialog::showTrials);
    resize(640, 560);
}

QString BatchSizeFinderDialog::startFinder()
{
    hearth::BatchSizeFinderOptions options;
    const QString limit = m_limit->text().trimmed();
    if (!limit.isEmpty()) {
        const auto bytes = hearth::parseByteSize(limit.toStdString());
        if (!bytes)
            return tr("'%1' is not a memory size (e.g. 4GiB, 512MiB).").arg(limit);
        options.memory_limit_bytes = *bytes;
    } else if (!m_cuda) {
        return tr("On CPU the search needs a memory limit (e.g. 4GiB): it stands in for the GPU's memory.");
    }
    options.max_batch = m_maxBatch->value();
    options.steps_per_trial = m_steps->value();
    options.multiple_of = m_multiple->value();
    options.tolerance = m_tolerance->value() / 100.0;
    m_found = 0;
    m_table->setRowCount(0);
    runner()->startBatchSize(m_config, options);
    return {};
}

void BatchSizeFinderDialog::showTrials()
{
    const auto& trials = runner()->trials();
    m_table->setRowCount(static_cast<int>(trials.size()));
    for (int row = 0; row < static_cast<int>(trials.size()); ++row) {
        const auto& t = trials[static_cast<size_t>(row)];
        const QStringList cells = {QString::number(t.batch_size), t.fits ? tr("fits") : tr("out of memory"),
                                   formatBytes(t.peak_bytes), QString::number(t.seconds, 'f', 2) + tr(" s"),
                                   t.fits ? QString() : qstr(t.failure)};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if (c != 1 && c != 4)   // numbers right, words left
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(row, c, item);
        }
    }
    m_table->scrollToBottom();
}

bool BatchSizeFinderDialog::showResult()
{
    showTrials();
    const auto& result = runner()->batchSizeResult();
    if (!result)
        return false;
    m_found = result->batch_size;
    QString text = m_found > 0 ? tr("Largest batch that fits: %1").arg(m_found) : tr("No batch size fits.");
    if (result->first_failure > 0)
        text += QLatin1Char(' ') + tr("(%1 does not)").arg(result->first_failure);
    else if (!result->bound.empty())
        text += QLatin1Char(' ') + tr("(bounded by %1)").arg(qstr(result->bound));
    text += QLatin1Char('\n') + tr("Limit: %1 on %2; %3.").arg(qstr(result->limit), qstr(result->device),
                                                             qstr(result->settling));
    if (result->stopped)
        text += QLatin1Char(' ') + tr("Stopped before the end.");
    setStatus(text);
    return m_found > 0;
}

void BatchSizeFinderDialog::applyResult()
{
    if (m_found > 0)
        Q_EMIT batchSizeApplied(m_found);
}

}  // namespace hearth::ui
