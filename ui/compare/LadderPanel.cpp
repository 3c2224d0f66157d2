#include "ui/compare/LadderPanel.h"

#include "engine/config/ExperimentConfig.h"

namespace hearth::ui {
namespace {

QString esc(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

// Faster green, slower red, no measurable change grey and marked "≈".
QString verdictCell(hearth::SpeedChange change, double speedup) {
    if (change == hearth::SpeedChange::Unknown || speedup <= 0.0)
        return QStringLiteral("-");
    const char* colour = change == hearth::SpeedChange::Faster   ? "#1b7f3b"
                         : change == hearth::SpeedChange::Slower ? "#b3261e"
                                                                 : "#777777";
    const QString ratio = QString::number(speedup, 'f', 2) + QStringLiteral("×");
    return QStringLiteral("<span style='color:%1'>%2</span>")
        .arg(colour, change == hearth::SpeedChange::NoMeasurableChange ? QStringLiteral("≈ ") + ratio : ratio);
}

}  // namespace

LadderPanel::LadderPanel(QWidget* parent) : QTextBrowser(parent)
{
    setObjectName(QStringLiteral("compareLadder"));
    setOpenLinks(false);
}

void LadderPanel::setLadder(const hearth::LadderSummary& ladder)
{
    setHtml(html(ladder));
}

void LadderPanel::setMemoryLadder(const hearth::LadderSummary& ladder, const hearth::MemoryLadderTable& table)
{
    setHtml(memoryHtml(ladder, table));
}

QString LadderPanel::memoryHtml(const hearth::LadderSummary& ladder, const hearth::MemoryLadderTable& table)
{
    QString h = QStringLiteral("<h3>%1</h3><p>%2</p>")
                    .arg(esc(ladder.name))
                    .arg(tr("Sweep #%1: the memory ladder, one memory toggle added per step.").arg(ladder.sweep_id));
    h += QStringLiteral("<table cellspacing='0' cellpadding='3' border='1' style='border-collapse:collapse; "
                        "white-space:nowrap'><tr><th>%1</th><th>%2</th><th>%3</th><th>%4</th><th>%5</th><th>%6</th>"
                        "<th>%7</th><th>%8</th><th>%9</th>")
             .arg(tr("step"), tr("run"), tr("peak memory"), tr("change"), tr("activations"), tr("gradients"),
                  tr("train time"), tr("time"), tr("test accuracy"));
    h += QStringLiteral("<th>%1</th><th>%2</th></tr>").arg(tr("peak memory: predicted / measured"),
                                                           tr("step: predicted / measured"));
    for (const auto& row : table.rows) {
        const hearth::MemoryLadderCells c = hearth::memoryLadderCells(row);
        // Less memory than the step before green, more red.
        const QString change = !row.peak_change ? esc(c.change)
                               : QStringLiteral("<span style='color:%1'>%2</span>")
                                     .arg(*row.peak_change < 0 ? QStringLiteral("#1b7f3b") : QStringLiteral("#b3261e"),
                                          esc(c.change));
        h += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td><td>%5</td><td>%6</td>")
                 .arg(esc(row.label), row.run_id ? QString::number(row.run_id) : QStringLiteral("-"), esc(c.peak),
                      change, esc(c.activations), esc(c.gradients));
        h += QStringLiteral("<td>%1</td><td>%2</td><td>%3</td><td>%4</td><td>%5</td></tr>")
                 .arg(esc(c.train_time), esc(c.time), esc(c.test_accuracy), esc(row.predicted_peak),
                      esc(row.predicted_step));
    }
    h += QStringLiteral("</table><p style='color:#777777'>%1.</p>").arg(esc(hearth::memoryLadderNote(table)));
    return h;
}

QString LadderPanel::html(const hearth::LadderSummary& ladder)
{
    QString h = QStringLiteral("<h3>%1</h3><p>Sweep #%2: %3, %4 repeat(s) per step. %5</p>")
                    .arg(esc(ladder.name))
                    .arg(ladder.sweep_id)
                    .arg(ladder.order == "alone" ? tr("each rung alone against the baseline")
                                                 : tr("each rung added to the step before"))
                    .arg(ladder.repeats)
                    .arg(ladder.goal == "accuracy"
                             ? tr("Speed: the time until the validation accuracy first reached the baseline's best "
                                  "(%1); runs: those that reached it.")
                                   .arg(ladder.accuracy_target ? QString::number(*ladder.accuracy_target, 'f', 4)
                                                               : tr("not known yet"))
                         : ladder.steady ? tr("Speed: the last epoch's training samples/s (after the first epoch's warm-up).")
                                         : tr("Speed: the whole fit's time (warm-up and validation included)."));
    h += QStringLiteral("<table cellspacing='0' cellpadding='3' border='1' style='border-collapse:collapse; "
                        "white-space:nowrap'>"
                        "<tr><th>step</th><th>runs</th><th>precision</th><th>%1</th><th>speed-up</th>"
                        "<th>vs baseline</th><th>test accuracy</th><th>accuracy</th>"
                        "<th>peak memory: predicted / measured</th><th>step: predicted / measured</th></tr>")
             .arg(ladder.goal == "accuracy" ? tr("time to accuracy") : ladder.steady ? tr("samples/s") : tr("fit time"));
    for (size_t i = 0; i < ladder.steps.size(); ++i) {
        const auto& s = ladder.steps[i];
        QString precision = QStringLiteral("-");
        try {
            if (!s.config_json.empty())
                precision = QString::fromStdString(hearth::configFromJson(s.config_json).trainer.precision);
        } catch (const std::exception&) {
        }
        const bool recommended = ladder.recommended && *ladder.recommended == i;
        h += QStringLiteral("<tr%1><td>%2%3</td><td>%4/%5</td><td>%6</td><td>%7</td><td>%8</td><td>%9</td>")
                 .arg(recommended ? QStringLiteral(" style='background:#e6f4ea'") : QString())
                 .arg(esc(s.label), !s.not_run.empty() ? tr(" (not run)") : s.kept ? QString() : tr(" (left out)"))
                 .arg(ladder.goal == "accuracy" ? s.reached : s.completed)
                 .arg(s.run_ids.size())
                 .arg(precision.toHtmlEscaped(), esc(hearth::ladderSpeedCell(s.verdict.speed, ladder.steady)),
                      i == 0 ? QStringLiteral("-") : verdictCell(s.verdict.change, s.verdict.speedup),
                      i == 0 ? QStringLiteral("-")
                             : verdictCell(s.verdict.change_vs_baseline, s.verdict.speedup_vs_baseline));
        h += QStringLiteral("<td>%1</td><td>%2</td><td>%3</td><td>%4</td></tr>")
                 .arg(esc(hearth::ladderAccuracyCell(s.verdict.accuracy)),
                      i == 0 ? QStringLiteral("-") : esc(hearth::accuracyChangeName(s.verdict.accuracy_change)),
                      esc(hearth::ladderPeakPredictionCell(s)), esc(hearth::ladderStepPredictionCell(s)));
    }
    h += QStringLiteral("</table><p style='color:#777777'>%1</p>")
             .arg(tr("Median (min-max) of each step's runs. ≈: no measurable change (the ranges overlap, or lie apart "
                     "by less than their width). Speed-up: against the step it built on; accuracy: against the "
                     "baseline, \"same\" within the run-to-run spread. Predicted: from a probe of a few steps at a "
                     "quarter and half of the step's batch before its first run, against that run (error in "
                     "brackets)."));
    QString why;
    for (size_t i = 1; i < ladder.steps.size(); ++i) {
        const auto& s = ladder.steps[i];
        if (!s.not_run.empty()) {
            why += QStringLiteral("<li><b>%1</b>: %2</li>").arg(esc(s.label), tr("Not run: %1.").arg(esc(s.not_run)));
            continue;
        }
        if (s.why.empty())
            continue;
        QString text;
        for (const auto& line : s.why)
            text += esc(line) + QLatin1Char(' ');
        why += QStringLiteral("<li><b>%1</b>: %2</li>").arg(esc(s.label), text.trimmed());
    }
    if (!why.isEmpty())
        h += tr("<h4>Why</h4>") + QStringLiteral("<ul>") + why + QStringLiteral("</ul>");
    h += QStringLiteral("<p><b>%1</b></p>").arg(esc(ladder.recommendation));
    return h;
}

}  // namespace hearth::ui
