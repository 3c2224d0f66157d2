#include "ui/experiment/LadderPlanDialog.h"

#include "ui/session/StoreLoader.h"
#include "ui/widgets/Format.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace hearth::ui {

LadderPlanDialog::LadderPlanDialog(hearth::ExperimentConfig base, hearth::DeviceCapabilities caps,
                                   const QString& dbPath, QWidget* parent)
    : QDialog(parent), m_base(std::move(base)), m_caps(std::move(caps))
{
    setWindowTitle(tr("Technique ladder: plan"));
    setObjectName(QStringLiteral("ladderPlanDialog"));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("The experiment first runs as a baseline (32-true, one device, the loader on the "
                                "training thread), then with each chosen rung. Rungs that do not apply here are "
                                "greyed out with the reason; the ones that trade speed for memory start unchecked."),
                             this);
    intro->setWordWrap(true);
    layout->addWidget(intro);

    m_rungs = new QListWidget(this);
    m_rungs->setObjectName(QStringLiteral("ladderRungs"));
    m_rungs->setMinimumHeight(260);
    layout->addWidget(m_rungs, 1);

    auto* form = new QFormLayout;
    auto* order = new QHBoxLayout;
    m_stacked = new QRadioButton(tr("Stacked: each rung adds to the step before"), this);
    m_alone = new QRadioButton(tr("Each rung alone against the baseline"), this);
    m_stacked->setChecked(true);
    order->addWidget(m_stacked);
    order->addWidget(m_alone);
    order->addStretch();
    form->addRow(tr("Order:"), order);
    m_repeats = new QSpinBox(this);
    m_repeats->setObjectName(QStringLiteral("ladderRepeats"));
    m_repeats->setRange(1, 20);
    m_repeats->setValue(3);
    m_repeats->setToolTip(tr("Runs per step, the steps alternating round by round, each round with its own seed. "
                             "A step whose range overlaps the step it built on reads \"no measurable change\"."));
    form->addRow(tr("Repeats:"), m_repeats);
    m_targetBatch = new QSpinBox(this);
    m_targetBatch->setObjectName(QStringLiteral("ladderTargetBatch"));
    m_targetBatch->setRange(0, 1 << 20);
    m_targetBatch->setSpecialValueText(tr("none"));
    m_targetBatch->setToolTip(tr("The accumulation rung's effective batch: a multiple of trainer.batch_size (%1).")
                                  .arg(m_base.trainer.batch_size));
    form->addRow(tr("Accumulate to an effective batch of:"), m_targetBatch);
    m_workers = new QSpinBox(this);
    m_workers->setRange(1, 64);
    m_workers->setValue(2);
    form->addRow(tr("Loader workers in the workers rung:"), m_workers);
    m_measure = new QComboBox(this);
    m_measure->setObjectName(QStringLiteral("ladderMeasure"));
    m_measure->addItem(tr("Speed over the experiment's epochs (the last epoch's samples/s)"), QStringLiteral("epochs"));
    m_measure->addItem(tr("Time to the baseline's best validation accuracy"), QStringLiteral("accuracy"));
    form->addRow(tr("Measure:"), m_measure);
    m_capEpochs = new QSpinBox(this);
    m_capEpochs->setRange(0, 100000);
    m_capEpochs->setSpecialValueText(tr("twice the experiment's epochs"));
    m_capEpochs->setToolTip(tr("The most epochs a rung trains while it has not reached the baseline's accuracy."));
    m_capEpochs->setEnabled(false);
    form->addRow(tr("At most (epochs):"), m_capEpochs);
    m_deviceMemory = new QDoubleSpinBox(this);
    m_deviceMemory->setObjectName(QStringLiteral("ladderDeviceMemory"));
    m_deviceMemory->setRange(0.0, 4096.0);
    m_deviceMemory->setDecimals(1);
    m_deviceMemory->setSuffix(tr(" GiB"));
    m_deviceMemory->setSpecialValueText(tr("the device's memory"));
    m_deviceMemory->setToolTip(tr("Before its first run each step's peak memory is predicted by a short probe (a few "
                                  "steps at a quarter and half its batch); a step predicted above this is not run. "
                                  "Plan for a smaller device by giving its memory."));
    form->addRow(tr("Fit each step into:"), m_deviceMemory);
    layout->addLayout(form);

    m_steps = new QLabel(this);
    m_steps->setWordWrap(true);
    m_steps->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_steps);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("ladderPlanSummary"));
    m_summary->setWordWrap(true);
    layout->addWidget(m_summary);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    m_start = buttons->addButton(tr("Start"), QDialogButtonBox::AcceptRole);
    m_start->setObjectName(QStringLiteral("ladderStart"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);

    fillRungs();
    connect(m_rungs, &QListWidget::itemChanged, this, [this] { refresh(); });
    connect(m_stacked, &QRadioButton::toggled, this, [this] { refresh(); });
    connect(m_repeats, &QSpinBox::valueChanged, this, [this] { refresh(); });
    connect(m_targetBatch, &QSpinBox::valueChanged, this, [this] { fillRungs(); });
    connect(m_workers, &QSpinBox::valueChanged, this, [this] { fillRungs(); });
    connect(m_measure, &QComboBox::currentIndexChanged, this, [this] {
        m_capEpochs->setEnabled(m_measure->currentData().toString() == QLatin1String("accuracy"));
        refresh();
    });
    resize(720, 640);

    if (!dbPath.isEmpty()) {
        m_loader = new StoreLoader(dbPath, this);
        const std::vector<std::string> names{m_base.name + " · baseline", m_base.name};
        m_loader->load([names](const hearth::RunStore& store) { return store.latestCompletedRun(names); },
                       [this](const std::optional<std::pair<int64_t, double>>& last) {
                           m_lastRun = last;
                           refresh();
                       },
                       [](const QString&) {});
    }
}

void LadderPlanDialog::fillRungs()
{
    QSet<QString> unchecked, checked;
    for (int i = 0; i < m_rungs->count(); ++i) {
        const QListWidgetItem* item = m_rungs->item(i);
        if (!(item->flags() & Qt::ItemIsEnabled))
            continue;
        (item->checkState() == Qt::Checked ? checked : unchecked) << item->data(Qt::UserRole).toString();
    }
    const QSignalBlocker blocker(m_rungs);
    m_rungs->clear();
    hearth::LadderPlan probe;
    probe.target_batch = m_targetBatch->value() > 0 ? std::optional<int64_t>(m_targetBatch->value()) : std::nullopt;
    probe.loader_workers = m_workers->value();
    for (const auto& rung : hearth::ladderRungs(m_base, m_caps, probe)) {
        const QString id = QString::fromStdString(rung.id);
        auto* item = new QListWidgetItem(m_rungs);
        item->setData(Qt::UserRole, id);
        if (rung.applies) {
            item->setText(tr("%1 — %2").arg(QString::fromStdString(rung.label), QString::fromStdString(rung.change)));
            item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
            const bool on = checked.contains(id) || (!unchecked.contains(id) && rung.default_on);
            item->setCheckState(on ? Qt::Checked : Qt::Unchecked);
        } else {
            item->setText(tr("%1 — not here: %2").arg(QString::fromStdString(rung.label), QString::fromStdString(rung.reason)));
            item->setFlags(Qt::NoItemFlags);
            item->setToolTip(QString::fromStdString(rung.reason));
        }
    }
    refresh();
}

hearth::LadderPlan LadderPlanDialog::plan() const
{
    hearth::LadderPlan plan;
    std::vector<std::string> rungs;
    for (int i = 0; i < m_rungs->count(); ++i) {
        const QListWidgetItem* item = m_rungs->item(i);
        if ((item->flags() & Qt::ItemIsEnabled) && item->checkState() == Qt::Checked)
            rungs.push_back(item->data(Qt::UserRole).toString().toStdString());
    }
    plan.rungs = rungs;
    plan.order = m_alone->isChecked() ? hearth::LadderOrder::Alone : hearth::LadderOrder::Cumulative;
    plan.repeats = m_repeats->value();
    if (m_targetBatch->value() > 0)
        plan.target_batch = m_targetBatch->value();
    plan.loader_workers = m_workers->value();
    plan.goal = hearth::ladderGoalFromName(m_measure->currentData().toString().toStdString())
                    .value_or(hearth::LadderGoal::Epochs);
    plan.cap_epochs = m_capEpochs->value();
    if (m_deviceMemory->value() > 0.0)
        plan.device_memory_bytes = static_cast<int64_t>(m_deviceMemory->value() * 1024.0 * 1024.0 * 1024.0);
    return plan;
}

QString LadderPlanDialog::summaryText() const
{
    return m_summary->text();
}

void LadderPlanDialog::refresh()
{
    m_stepLabels.clear();
    std::vector<hearth::LadderStep> steps;
    try {
        steps = hearth::buildPlannedLadder(m_base, m_caps, plan());
    } catch (const std::exception& e) {
        m_steps->clear();
        m_summary->setText(tr("Cannot plan: %1").arg(QString::fromUtf8(e.what())));
        m_start->setEnabled(false);
        return;
    }
    for (const auto& s : steps)
        m_stepLabels << QString::fromStdString(s.label);
    m_steps->setText(tr("Steps: %1").arg(m_stepLabels.join(QStringLiteral(", "))));
    const int runs = static_cast<int>(steps.size()) * m_repeats->value();
    QString text = tr("%1 steps × %2 repeat(s) = %3 runs").arg(steps.size()).arg(m_repeats->value()).arg(runs);
    if (m_lastRun)
        text += tr("; about %1 in all (run #%2 of this experiment took %3)")
                    .arg(formatDuration(m_lastRun->second * runs))
                    .arg(m_lastRun->first)
                    .arg(formatDuration(m_lastRun->second));
    else
        text += tr("; no estimate yet: no earlier run of '%1' in the store").arg(QString::fromStdString(m_base.name));
    text += tr(". Each step's memory and step time are predicted first by a probe of a few seconds");
    m_summary->setText(text + QLatin1Char('.'));
    m_start->setEnabled(true);
}

}  // namespace hearth::ui
