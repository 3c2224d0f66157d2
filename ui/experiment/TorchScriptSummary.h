#pragma once
// TorchScriptSummary: what a TorchScript file holds, shown under model.path in the experiment
// panel: its parameters (trainable, frozen) and buffers, its submodules and its forward's
// signature, or why it cannot be trained. The window does not link LibTorch: `hearth-cli inspect
// FILE` reads the file in a child process, a moment after the path stops changing; a newer path
// makes an older answer stale.

#include <QLabel>
#include <QProcess>
#include <QTimer>

namespace hearth::ui {

class TorchScriptSummary final : public QLabel {
    Q_OBJECT

public:
    explicit TorchScriptSummary(QWidget* parent = nullptr);
    ~TorchScriptSummary() override;
    // Empty path: hides itself. Otherwise inspects the file and shows what it holds.
    void setFile(const QString& path);

private:
    void inspect();
    QString m_path;
    QTimer m_debounce;
    QProcess* m_process = nullptr;
};

}  // namespace hearth::ui
