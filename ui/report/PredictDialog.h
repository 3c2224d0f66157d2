#pragma once
// PredictDialog: classifies new inputs with a stored run's best checkpoint: image files and
// folders for a run on images, the rows of a CSV for a run on a table, the texts of a CSV for a
// text run. The model runs in a child `hearth-cli predict` (CliProcess), never in the window's
// process. What it writes comes back as its CSV, shown as a table (each input as the user knows
// it: the image with a thumbnail, the row's cells, the text; a wrong prediction marked where the
// true class is known) under the command's own summary, and can be saved.

#include <QDialog>
#include <QStringList>
#include <QTemporaryDir>

#include <string>

class QLabel;
class QListWidget;
class QPushButton;
class QTableWidget;

namespace hearth {
struct CsvTable;
}

namespace hearth::ui {

class CliProcess;

class PredictDialog final : public QDialog {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(PredictDialog)

public:
    // `configJson`: the run's stored config; its data kind decides what the dialog asks for.
    PredictDialog(const QString& dbPath, qint64 runId, const QString& runTitle, const std::string& configJson,
                  QWidget* parent = nullptr);
    ~PredictDialog() override;   // stops a prediction still running

    enum class Inputs { Images, TableRows, Texts };
    Inputs inputKind() const { return m_kind; }
    // Image files and folders (a run on images), or the one CSV file (a table or text run).
    void setInputs(const QStringList& paths);
    QStringList inputs() const;
    bool isRunning() const;
    QTableWidget* results() const { return m_results; }
    QString summaryText() const;   // the command's summary and notes, or why it failed
    // At most this many predictions are listed; the saved CSV holds them all.
    static constexpr int kMaxRowsShown = 5000;

public Q_SLOTS:
    void predict();   // runs hearth-cli predict on the inputs
    // Copies the predictions' CSV to `path`; false (and says why) when it cannot.
    bool saveCsv(const QString& path);

Q_SIGNALS:
    void predictionsReady(int rows);
    void predictionFailed(const QString& message);

protected:
    // Files and folders dropped on the dialog (from a file manager) become its inputs: added to the
    // images, or the CSV chosen.
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void addFiles();
    void addFolder();
    void chooseCsv();
    void onFinished(int exitCode, bool crashed);
    void showPredictions();
    void fail(const QString& message);
    QString summarise(const hearth::CsvTable& out, int predicted, int truth) const;
    void setBusy(bool busy);

    QString m_dbPath;
    qint64 m_runId;
    Inputs m_kind = Inputs::Images;
    bool m_usable = true;   // false when the run's config cannot be read
    QString m_textColumn, m_labelColumn;
    QTemporaryDir m_work;
    QString m_outputCsv;
    QStringList m_lines;   // the command's standard output
    CliProcess* m_process;
    QLabel* m_intro;
    QListWidget* m_inputs;
    QPushButton* m_predict;
    QPushButton* m_save;
    QLabel* m_summary;
    QTableWidget* m_results;
};

}  // namespace hearth::ui
