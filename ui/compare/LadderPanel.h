#pragma once
// LadderPanel: a speed ladder judged, in Compare's "Ladder" tab (or a memory ladder's table): each step's runs, its speed and
// test accuracy as median (min-max), its verdict against the step it built on and against the
// baseline ("no measurable change" where the ranges overlap), one or two sentences on why, and
// the recommendation. Drawn from storage/report/LadderSummary, as `hearth-cli sweep` prints it.

#include "storage/report/LadderSummary.h"

#include <QTextBrowser>

namespace hearth::ui {

class LadderPanel final : public QTextBrowser {
    Q_OBJECT

public:
    explicit LadderPanel(QWidget* parent = nullptr);
    void setLadder(const hearth::LadderSummary& ladder);
    // A memory ladder: each step's peak and its change against the step before, the activations
    // and gradients, the time against the baseline, and the prediction against the run.
    void setMemoryLadder(const hearth::LadderSummary& ladder, const hearth::MemoryLadderTable& table);
    static QString html(const hearth::LadderSummary& ladder);
    static QString memoryHtml(const hearth::LadderSummary& ladder, const hearth::MemoryLadderTable& table);
};

}  // namespace hearth::ui
