#pragma once
// CheckpointSummary: what a Hugging Face checkpoint folder holds, shown under model.pretrained in
// the experiment panel: the architecture from config.json (family, layers, width, heads,
// vocabulary, positions, labels), the weights files and their size, and whether a tokenizer is
// there; for a resnet's weights file, its name and size. Read with Qt alone (no LibTorch): the
// engine loads the weights when a run starts.

#include <QLabel>

namespace hearth::ui {

class CheckpointSummary final : public QLabel {
    Q_OBJECT

public:
    explicit CheckpointSummary(QWidget* parent = nullptr);
    // Empty folder: hides itself. Otherwise shows the summary or what is missing.
    void setFolder(const QString& folder);
    // The text for `folder` (also for tests and tooltips).
    static QString describe(const QString& folder);
};

}  // namespace hearth::ui
