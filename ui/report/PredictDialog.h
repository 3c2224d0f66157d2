#pragma once
// PredictDialog: classifies new inputs with a stored run's best checkpoint: image files and
// folders for a run on images, the rows of a CSV for a run on a table, the texts of a CSV for a
// text run. The model runs in a child `hearth-cli predict` (CliProcess), never in the window's
// process. What it writes comes back as its CSV, shown as a table (each input as the user knows
// it: the image with a thumbnail, the row's cells, the text; a wrong prediction marked where the
// true class is known) under the command's own summary, and can be saved.

#include <QDialog>
#include <QImage>
#include <QJsonObject>
#include <QStringList>
#include <QTemporaryDir>

#include <string>
#include <vector>

class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace hearth::ui {

class CliProcess;

// What the dialog lists of a prediction, read off the GUI thread (readPredictionListing).
struct PredictionListing {
    struct Row {
        QString what;      // the input as shown: an image's file name, a row's cells, a text
        QString source;    // an image's path, or a row's 1-based number in its file
        QImage thumbnail;  // images (the first ones)
        QString predicted, truth;
        double confidence = 0.0;
    };
    std::vector<Row> rows;                 // the first PredictDialog::kMaxRowsShown
    qint64 total = 0;                      // predictions in the file
    bool has_truth = false;                // some input's true class is known
};

// Reads `outputCsv` (hearth-cli predict's file) and, for a CSV input, `inputCsv` to show each row
// or text (`textColumn`; empty: the row's cells but `labelColumn`) as written. Throws DataError.
PredictionListing readPredictionListing(const QString& outputCsv, const QString& inputCsv, const QString& textColumn,
                                        const QString& labelColumn);

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
    void stop();      // ends a running prediction (the Predict button reads Stop meanwhile); nothing is listed
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
    void showListing(const PredictionListing& listing);
    QString summarise(const PredictionListing& listing) const;
    void setBusy(bool busy);

    QString m_dbPath;
    qint64 m_runId;
    Inputs m_kind = Inputs::Images;
    bool m_usable = true;   // false when the run's config cannot be read
    bool m_stopping = false;   // the running prediction was asked to stop
    QString m_textColumn, m_labelColumn;
    QTemporaryDir m_work;
    QString m_outputCsv;
    QJsonObject m_commandSummary;   // the command's summary line (--events)
    quint64 m_generation = 0;   // counts predictions started: a stale listing is dropped
    CliProcess* m_process;
    QLabel* m_intro;
    QListWidget* m_inputs;
    QPushButton* m_predict;
    QPushButton* m_save;
    QLabel* m_summary;
    QProgressBar* m_progress;   // the forward passes, while they run
    QTableWidget* m_results;
};

}  // namespace hearth::ui
