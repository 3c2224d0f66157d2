#include "ui/widgets/ProfileBars.h"

#include "engine/metrics/RunProfile.h"
#include "ui/widgets/Format.h"
#include "ui/widgets/StackedBars.h"

#include <QLabel>
#include <QVBoxLayout>

namespace hearth::ui {

namespace {

QStringList labelsOf(const std::vector<hearth::ProfilePart>& parts)
{
    QStringList names;
    for (const auto& p : parts)
        names << qstr(p.label);
    return names;
}

QStringList memoryLabelsOf(const std::vector<ProfileBars::Row>& rows)
{
    std::vector<const hearth::MemoryBreakdown*> memories;
    memories.reserve(rows.size());
    for (const auto& r : rows)
        memories.push_back(r.memory ? &*r.memory : nullptr);
    QStringList names;
    for (const auto& label : hearth::memoryPartLabels(memories))
        names << qstr(label);
    return names;
}

std::vector<double> valuesOf(const std::vector<hearth::ProfilePart>& parts)
{
    std::vector<double> v;
    v.reserve(parts.size());
    for (const auto& p : parts)
        v.push_back(p.value);
    return v;
}

}  // namespace

ProfileBars::ProfileBars(QWidget* parent)
    : QWidget(parent), m_time(new StackedBars(tr("ms per micro-batch"))), m_memory(new StackedBars(tr("MiB at the peak"))),
      m_note(new QLabel)
{
    m_time->setObjectName(QStringLiteral("timeBars"));
    m_memory->setObjectName(QStringLiteral("memoryBars"));
    m_time->setParts(labelsOf(hearth::breakdownParts({})),
                     [](double ms) { return QStringLiteral("%1 ms").arg(ms, 0, 'f', ms < 10 ? 2 : 1); });
    m_memory->setParts(memoryLabelsOf({}),
                       [](double mib) { return formatBytes(static_cast<int64_t>(mib * 1048576.0)); });
    m_time->setEmptyText(tr("No step-time breakdown (trainer.profile_every_n_steps = 0, or an older run)"));
    m_memory->setEmptyText(tr("No memory breakdown (an older run, or stopped before its first step)"));
    m_note->setWordWrap(true);
    m_note->setText(tr("Step time: one optimizer step in trainer.profile_every_n_steps, the first (the warm-up) left "
                       "out; CUDA events on a GPU, the wall clock on the CPU. Memory at the peak: parameters, "
                       "gradients and optimizer state are the tensors' sizes. Activations: on a GPU what the forward "
                       "pass kept for the backward, on the CPU every other tensor the step held. Other: on a GPU "
                       "library workspaces and the backward's temporaries, on the CPU what the process held before "
                       "training (libraries, the loaded data)."));
    // Stacked, not side by side: the Compare tab shows this in a narrow panel.
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_time, 1);
    layout->addWidget(m_memory, 1);
    layout->addWidget(m_note);
}

void ProfileBars::setRows(const std::vector<Row>& rows)
{
    std::vector<StackedBars::Row> time, memory;
    for (const auto& r : rows) {
        if (r.breakdown)
            time.push_back({r.label, valuesOf(hearth::breakdownParts(*r.breakdown))});
        if (r.memory) {
            auto mib = valuesOf(hearth::memoryParts(*r.memory));
            for (double& v : mib)
                v /= 1048576.0;
            // Offload's host memory is not part of the device's peak: named beside the bar.
            const QString label = r.memory->offloaded_bytes > 0
                                      ? tr("%1 (+ %2 optimizer offloaded to host)").arg(r.label, formatBytes(r.memory->offloaded_bytes))
                                      : r.label;
            memory.push_back({label, std::move(mib)});
        }
    }
    m_time->setRows(std::move(time));
    m_memory->setParts(memoryLabelsOf(rows), {});
    m_memory->setRows(std::move(memory));
}

}  // namespace hearth::ui
