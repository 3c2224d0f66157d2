#include "ui/report/PredictDialog.h"

#include "engine/config/ExperimentConfig.h"
#include "engine/data/DataError.h"
#include "engine/data/formats/CsvReader.h"
#include "ui/session/CliProcess.h"
#include "ui/session/ReadOnPool.h"
#include "ui/widgets/Format.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QImageReader>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace hearth::ui {
namespace {

constexpr int kThumbnail = 40;        // pixels
constexpr int kMaxThumbnails = 500;   // the first images only: each becomes a pixmap in the table
constexpr int kMaxCellChars = 160;    // a text's or row's cells in one table cell

QString elided(QString text)
{
    text.replace(QLatin1Char('\n'), QLatin1Char(' '));
    return text.size() > kMaxCellChars ? text.left(kMaxCellChars - 1) + QChar(0x2026) : text;
}

// The input as the user knows it, by the CSV's lead field: the table row's cells ("a=1, b=2";
// the label column, which the True column shows, left out), or the text (the input CSV's text
// column).
QString describeRow(const hearth::CsvTable& input, qint64 index, const QString& textColumn, const QString& labelColumn)
{
    if (index < 0 || index >= static_cast<qint64>(input.records.size())) return QString::number(index);
    const auto& fields = input.records[static_cast<size_t>(index)].fields;
    if (!textColumn.isEmpty()) {
        for (size_t c = 0; c < input.header.size(); ++c)
            if (qstr(input.header[c]) == textColumn) return elided(qstr(fields[c]));
    }
    QStringList cells;
    for (size_t c = 0; c < input.header.size() && c < fields.size(); ++c)
        if (qstr(input.header[c]) != labelColumn) cells << qstr(input.header[c]) + QLatin1Char('=') + qstr(fields[c]);
    return elided(cells.join(QStringLiteral(", ")));
}

QTableWidgetItem* item(const QVariant& value)
{
    auto* it = new QTableWidgetItem;
    it->setData(Qt::DisplayRole, value);
    return it;
}

QImage thumbnail(const QString& path)
{
    QImageReader reader(path);
    const QSize size = reader.size();
    if (size.isValid()) reader.setScaledSize(size.scaled(kThumbnail, kThumbnail, Qt::KeepAspectRatio));
    return reader.read();
}

}  // namespace

// The predictions' CSV, and for a CSV input that file too (the rows and texts are shown as
// written), read on a pool thread: both may hold millions of rows.
PredictionListing readPredictionListing(const QString& outputCsv, const QString& inputCsv, const QString& textColumn,
                                        const QString& labelColumn)
{
    const hearth::CsvTable out = hearth::readCsvFile(outputCsv.toStdString());
    hearth::CsvTable input;
    if (!inputCsv.isEmpty()) input = hearth::readCsvFile(inputCsv.toStdString());
    const auto& header = out.header;
    const auto column = [&](const std::string& name) {
        const auto it = std::find(header.begin(), header.end(), name);
        return it == header.end() ? -1 : static_cast<int>(it - header.begin());
    };
    const int predicted = column("predicted"), confidence = column("confidence"), truth = column("true");
    if (predicted < 0 || confidence < 0) throw hearth::DataError(outputCsv.toStdString() + ": not a predictions file");
    PredictionListing listing;
    listing.total = static_cast<qint64>(out.records.size());
    for (size_t r = 0; r < out.records.size(); ++r) {
        const auto& fields = out.records[r].fields;
        const QString p = qstr(fields[static_cast<size_t>(predicted)]);
        const QString t = truth >= 0 ? qstr(fields[static_cast<size_t>(truth)]) : QString();
        listing.has_truth = listing.has_truth || !t.isEmpty();
        if (r >= static_cast<size_t>(PredictDialog::kMaxRowsShown)) continue;
        PredictionListing::Row row;
        row.source = qstr(fields[0]);
        if (inputCsv.isEmpty()) {
            row.what = QFileInfo(row.source).fileName();
            if (r < static_cast<size_t>(kMaxThumbnails)) row.thumbnail = thumbnail(row.source);
        } else {
            const qint64 index = row.source.toLongLong();
            row.what = describeRow(input, index, textColumn, labelColumn);
            row.source = QString::number(index + 1);
        }
        row.predicted = p;
        row.truth = t;
        row.confidence = QString::fromStdString(fields[static_cast<size_t>(confidence)]).toDouble();
        listing.rows.push_back(std::move(row));
    }
    return listing;
}

PredictDialog::PredictDialog(const QString& dbPath, qint64 runId, const QString& runTitle, const std::string& configJson,
                             QWidget* parent)
    : QDialog(parent), m_dbPath(dbPath), m_runId(runId), m_process(new CliProcess(this)), m_intro(new QLabel),
      m_inputs(new QListWidget), m_predict(new QPushButton(tr("Predict"))), m_save(new QPushButton(tr("Save CSV…"))),
      m_summary(new QLabel), m_progress(new QProgressBar), m_results(new QTableWidget)
{
    setWindowTitle(tr("Predict with %1").arg(runTitle));
    setObjectName(QStringLiteral("predictDialog"));
    setAcceptDrops(true);
    QString kindError;
    try {
        const hearth::ExperimentConfig config = hearth::configFromJson(configJson);
        if (hearth::isImageKind(config.data.kind)) {
            m_kind = Inputs::Images;
        } else if (config.data.kind == "csv") {
            m_kind = Inputs::TableRows;
            m_labelColumn = qstr(config.data.label_column);
        } else {
            m_kind = Inputs::Texts;
            m_textColumn = qstr(config.data.text_column);
            m_labelColumn = qstr(config.data.label_column);
        }
    } catch (const std::exception& e) {
        kindError = tr("The run's stored config cannot be read: %1").arg(QString::fromUtf8(e.what()));
    }
    switch (m_kind) {
    case Inputs::Images:
        m_intro->setText(tr("Classify PNG or JPEG files with this run's best checkpoint. Add files or folders (or "
                            "drop them here); a folder whose subfolders are named after the run's classes is scored "
                            "against them."));
        break;
    case Inputs::TableRows:
        m_intro->setText(tr("Classify the rows of a CSV file (choose it or drop it here) with this run's best "
                            "checkpoint. The file needs the columns the run trained on (in any order); a row with "
                            "the label column ('%1') is scored.")
                             .arg(m_labelColumn));
        break;
    case Inputs::Texts:
        m_intro->setText(tr("Classify the texts of a CSV file (column '%1'; choose it or drop it here) with this "
                            "run's best checkpoint; a row with the label column ('%2') is scored.")
                             .arg(m_textColumn, m_labelColumn));
        break;
    }
    m_intro->setWordWrap(true);

    auto* inputButtons = new QVBoxLayout;
    if (m_kind == Inputs::Images) {
        auto* files = new QPushButton(tr("Add Files…"));
        auto* folder = new QPushButton(tr("Add Folder…"));
        connect(files, &QPushButton::clicked, this, &PredictDialog::addFiles);
        connect(folder, &QPushButton::clicked, this, &PredictDialog::addFolder);
        inputButtons->addWidget(files);
        inputButtons->addWidget(folder);
    } else {
        auto* csv = new QPushButton(tr("Choose CSV…"));
        connect(csv, &QPushButton::clicked, this, &PredictDialog::chooseCsv);
        inputButtons->addWidget(csv);
    }
    auto* clear = new QPushButton(tr("Clear"));
    connect(clear, &QPushButton::clicked, this, [this] { setInputs({}); });
    inputButtons->addWidget(clear);
    inputButtons->addStretch(1);
    inputButtons->addWidget(m_predict);
    m_inputs->setObjectName(QStringLiteral("predictInputs"));
    // Several files and folders for images; one CSV otherwise.
    m_inputs->setMaximumHeight(fontMetrics().height() * (m_kind == Inputs::Images ? 6 : 2) + 8);
    auto* inputRow = new QHBoxLayout;
    inputRow->addWidget(m_inputs, 1);
    inputRow->addLayout(inputButtons);

    m_predict->setDefault(true);
    m_predict->setEnabled(false);
    m_predict->setObjectName(QStringLiteral("predictStartStop"));
    connect(m_predict, &QPushButton::clicked, this, [this] { isRunning() ? stop() : predict(); });
    m_summary->setObjectName(QStringLiteral("predictSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_results->setObjectName(QStringLiteral("predictions"));
    m_results->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_results->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_results->setAlternatingRowColors(true);
    m_results->verticalHeader()->hide();
    m_results->setWordWrap(false);
    m_results->setTextElideMode(Qt::ElideRight);
    m_results->setIconSize(QSize(kThumbnail, kThumbnail));

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    buttons->addButton(m_save, QDialogButtonBox::ActionRole);
    m_save->setEnabled(false);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_save, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Save Predictions"),
                                                          QDir::home().filePath(QStringLiteral("predictions.csv")),
                                                          tr("CSV files (*.csv)"));
        if (!path.isEmpty()) saveCsv(path);
    });

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_intro);
    layout->addLayout(inputRow);
    layout->addWidget(m_summary);
    layout->addWidget(m_progress);
    layout->addWidget(m_results, 1);
    layout->addWidget(buttons);
    resize(760, 560);

    m_progress->setObjectName(QStringLiteral("predictProgress"));
    m_progress->setVisible(false);
    // --events: progress as the batches go through the model, then the summary.
    connect(m_process, &CliProcess::lineRead, this, [this](const QByteArray& line) {
        const QJsonObject event = QJsonDocument::fromJson(line).object();
        const QString kind = event.value(QStringLiteral("event")).toString();
        if (kind == QStringLiteral("predict_summary")) {
            m_commandSummary = event;
        } else if (kind == QStringLiteral("predict_progress") && !m_stopping) {
            const auto done = static_cast<qint64>(event.value(QStringLiteral("done")).toDouble());
            const auto total = static_cast<qint64>(event.value(QStringLiteral("total")).toDouble());
            if (total <= 0) return;
            m_progress->setRange(0, 1000);
            m_progress->setValue(static_cast<int>(1000 * done / total));
            m_summary->setText(tr("Predicting… %1 of %2 %3")
                                   .arg(QLocale().toString(done), QLocale().toString(total),
                                        event.value(QStringLiteral("what")).toString()));
        }
    });
    connect(m_process, &CliProcess::finished, this, &PredictDialog::onFinished);
    m_outputCsv = m_work.filePath(QStringLiteral("predictions.csv"));
    if (!kindError.isEmpty()) {
        m_summary->setText(kindError);
        m_usable = false;
        inputRow->setEnabled(false);
    }
}

PredictDialog::~PredictDialog() = default;

namespace {

QStringList droppedPaths(const QMimeData* mime)
{
    QStringList paths;
    if (!mime || !mime->hasUrls()) return paths;
    for (const QUrl& url : mime->urls())
        if (url.isLocalFile()) paths << url.toLocalFile();
    return paths;
}

}  // namespace

void PredictDialog::dragEnterEvent(QDragEnterEvent* event)
{
    if (m_usable && !isRunning() && !droppedPaths(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void PredictDialog::dropEvent(QDropEvent* event)
{
    const QStringList paths = droppedPaths(event->mimeData());
    if (paths.isEmpty() || isRunning()) return;
    setInputs(m_kind == Inputs::Images ? inputs() + paths : paths);
    event->acceptProposedAction();
}

void PredictDialog::setInputs(const QStringList& paths)
{
    QStringList unique = m_kind == Inputs::Images ? paths : paths.mid(0, 1);
    unique.removeDuplicates();
    m_inputs->clear();
    m_inputs->addItems(unique);
    m_predict->setEnabled(isRunning() || (m_usable && m_inputs->count() > 0));
}

QStringList PredictDialog::inputs() const
{
    QStringList paths;
    for (int i = 0; i < m_inputs->count(); ++i) paths << m_inputs->item(i)->text();
    return paths;
}

bool PredictDialog::isRunning() const { return m_process->isRunning(); }

QString PredictDialog::summaryText() const { return m_summary->text(); }

void PredictDialog::addFiles()
{
    const QStringList files = QFileDialog::getOpenFileNames(this, tr("Images to Classify"), QDir::homePath(),
                                                            tr("Images (*.png *.jpg *.jpeg)"));
    if (!files.isEmpty()) setInputs(inputs() + files);
}

void PredictDialog::addFolder()
{
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Folder of Images to Classify"), QDir::homePath());
    if (!folder.isEmpty()) setInputs(inputs() << folder);
}

void PredictDialog::chooseCsv()
{
    const QString file =
        QFileDialog::getOpenFileName(this, tr("CSV to Classify"), QDir::homePath(), tr("CSV files (*.csv);;All files (*)"));
    if (!file.isEmpty()) setInputs({file});
}

void PredictDialog::setBusy(bool busy)
{
    // While it runs the Predict button stops it.
    m_predict->setText(busy ? tr("Stop") : tr("Predict"));
    m_predict->setEnabled(busy || (m_usable && m_inputs->count() > 0));
    m_inputs->setEnabled(!busy);
    if (busy) m_save->setEnabled(false);
    if (busy) m_progress->setRange(0, 0);   // busy until the first batch reports
    m_progress->setVisible(busy);
}

void PredictDialog::predict()
{
    const QStringList paths = inputs();
    if (!m_usable || paths.isEmpty() || isRunning()) return;
    QStringList args{QStringLiteral("--db"), m_dbPath, QStringLiteral("predict"), QString::number(m_runId),
                     QStringLiteral("-o"), m_outputCsv, QStringLiteral("--events")};
    if (m_kind == Inputs::Texts) args << QStringLiteral("--text-column") << m_textColumn;
    if (m_kind == Inputs::Images)
        args << QStringLiteral("--images") << paths;
    else
        args << QStringLiteral("--input") << paths.front();
    QFile::remove(m_outputCsv);
    ++m_generation;
    m_commandSummary = QJsonObject();
    m_results->clear();
    m_results->setRowCount(0);
    m_results->setColumnCount(0);
    QString error;
    if (!m_process->start(args, tr("A prediction"), &error)) {
        fail(error);
        return;
    }
    setBusy(true);
    m_summary->setText(tr("Predicting…"));
}

void PredictDialog::stop()
{
    if (!isRunning()) return;
    m_stopping = true;
    m_summary->setText(tr("Stopping…"));
    m_process->stop();
}

void PredictDialog::onFinished(int exitCode, bool crashed)
{
    if (m_stopping) {
        m_stopping = false;
        setBusy(false);
        m_summary->setText(tr("Stopped: nothing was predicted."));
        return;
    }
    if (exitCode != 0 || crashed) {
        setBusy(false);
        // hearth-cli's own message ("error: …"), else its last lines.
        QStringList errors;
        for (const QString& line : m_process->errorLines())
            if (line.startsWith(QStringLiteral("error: "))) errors << line.mid(7);
        fail(errors.isEmpty() ? m_process->failureText(exitCode, crashed) : errors.join(QLatin1Char('\n')));
        return;
    }
    showPredictions();
}

void PredictDialog::fail(const QString& message)
{
    m_summary->setText(tr("Cannot predict: %1").arg(message));
    Q_EMIT predictionFailed(message);
}

void PredictDialog::showPredictions()
{
    m_summary->setText(tr("Reading the predictions…"));
    const QString output = m_outputCsv;
    const QString input = m_kind == Inputs::Images ? QString() : inputs().front();
    const QString textColumn = m_kind == Inputs::Texts ? m_textColumn : QString();
    const QString labelColumn = m_labelColumn;
    const quint64 generation = m_generation;
    readOnPool<PredictionListing>(
        this,
        [output, input, textColumn, labelColumn] {
            return readPredictionListing(output, input, textColumn, labelColumn);
        },
        [this, generation](const PredictionListing& listing, const QString& error) {
            if (generation != m_generation) return;   // a newer prediction started meanwhile
            setBusy(false);
            if (!error.isEmpty()) {
                fail(error);
                return;
            }
            showListing(listing);
        });
}

void PredictDialog::showListing(const PredictionListing& listing)
{
    const auto shown = static_cast<int>(listing.rows.size());
    QString summary = summarise(listing);
    if (shown < listing.total)
        summary += QLatin1Char('\n') +
                   tr("The first %1 of %2 predictions are listed; Save CSV… writes them all.").arg(QLocale().toString(shown), QLocale().toString(listing.total));
    m_summary->setText(summary);

    const QString lead = m_kind == Inputs::Images ? tr("Image") : m_kind == Inputs::Texts ? tr("Text") : tr("Row");
    QStringList labels{lead, tr("Predicted"), tr("Confidence")};
    if (listing.has_truth) labels << tr("True");
    m_results->setSortingEnabled(false);
    m_results->setColumnCount(static_cast<int>(labels.size()));
    m_results->setHorizontalHeaderLabels(labels);
    m_results->setRowCount(shown);
    const QColor wrong(QStringLiteral("#c62828"));
    for (int r = 0; r < shown; ++r) {
        const PredictionListing::Row& row = listing.rows[static_cast<size_t>(r)];
        QTableWidgetItem* what = item(row.what);
        what->setToolTip(m_kind == Inputs::Images ? row.source : tr("Row %1 of the file").arg(row.source));
        if (!row.thumbnail.isNull()) what->setIcon(QIcon(QPixmap::fromImage(row.thumbnail)));
        m_results->setItem(r, 0, what);
        auto* predictedItem = item(row.predicted);
        m_results->setItem(r, 1, predictedItem);
        m_results->setItem(r, 2, item(std::round(row.confidence * 1e4) / 1e4));
        if (listing.has_truth) {
            m_results->setItem(r, 3, item(row.truth));
            if (!row.truth.isEmpty() && row.truth != row.predicted) {
                predictedItem->setForeground(wrong);
                predictedItem->setToolTip(tr("Wrong: the true class is %1").arg(row.truth));
            }
        }
    }
    m_results->setSortingEnabled(true);
    m_results->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    for (int c = 1; c < m_results->columnCount(); ++c)
        m_results->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    m_save->setEnabled(true);
    Q_EMIT predictionsReady(static_cast<int>(listing.total));
}

// What the predictions say as a whole, from the command's summary line (it scored them as it
// wrote them): how many, where and how fast, the accuracy where the true class is one of the
// run's, the classes predicted (most first), and the command's notes.
QString PredictDialog::summarise(const PredictionListing& listing) const
{
    const QJsonObject& command = m_commandSummary;
    const QString noun = m_kind == Inputs::Images ? tr("images") : m_kind == Inputs::Texts ? tr("texts") : tr("rows");
    const QLocale locale;
    QString first = tr("%1 %2 predicted").arg(locale.toString(listing.total), noun);
    if (command.contains(QStringLiteral("device")) && command.contains(QStringLiteral("seconds"))) {
        const double seconds = command.value(QStringLiteral("seconds")).toDouble();
        first += tr(" on %1 in %2")
                     .arg(command.value(QStringLiteral("device")).toString(),
                          seconds < 1.0 ? tr("%1 ms").arg(std::lround(seconds * 1000.0)) : formatDuration(seconds));
    }
    QStringList lines{first + QLatin1Char('.')};
    const auto labelled = static_cast<qint64>(command.value(QStringLiteral("labelled")).toDouble());
    const auto right = static_cast<qint64>(command.value(QStringLiteral("correct")).toDouble());
    if (labelled > 0)
        lines << tr("Accuracy on the %1 with a known class: %2 (%3 right).")
                     .arg(locale.toString(labelled))
                     .arg(formatPercent(static_cast<double>(right) / static_cast<double>(labelled)))
                     .arg(locale.toString(right));
    const QJsonObject counts = command.value(QStringLiteral("classes")).toObject();
    std::vector<std::pair<QString, qint64>> ranked;   // by name (JSON objects are), then most first
    for (auto it = counts.begin(); it != counts.end(); ++it)
        if (const auto count = static_cast<qint64>(it.value().toDouble()); count > 0) ranked.emplace_back(it.key(), count);
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    QStringList classes;
    for (const auto& [name, count] : ranked) classes << QStringLiteral("%1 %2").arg(name, locale.toString(count));
    lines << tr("Predicted: %1.").arg(classes.join(QStringLiteral(", ")));
    const QJsonArray notes = command.value(QStringLiteral("notes")).toArray();
    for (const QJsonValue value : notes) {
        QString note = value.toString();
        if (!note.isEmpty()) note[0] = note[0].toUpper();
        lines << note;
    }
    return lines.join(QLatin1Char('\n'));
}

bool PredictDialog::saveCsv(const QString& path)
{
    if (!QFile::exists(m_outputCsv)) {
        m_summary->setText(tr("There are no predictions to save yet."));
        return false;
    }
    if (QFile::exists(path)) QFile::remove(path);
    if (!QFile::copy(m_outputCsv, path)) {
        m_summary->setText(m_summary->text() + QLatin1Char('\n') + tr("Cannot write %1.").arg(path));
        return false;
    }
    return true;
}

}  // namespace hearth::ui
