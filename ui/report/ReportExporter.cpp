#include "ui/report/ReportExporter.h"

#include "engine/events/FieldJson.h"
#include "storage/report/RunReport.h"
#include "ui/experiment/ConfigDiff.h"
#include "ui/widgets/Format.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

namespace hearth::ui {

namespace {

QString fixed(double v, int digits = 4)
{
    return QString::number(v, 'f', digits);
}

QString optionalPercent(const std::optional<double>& v)
{
    return v ? formatPercent(*v) : QStringLiteral("–");
}

QString title(const RunReport& r)
{
    return QObject::tr("Run %1 — %2").arg(r.run.id).arg(qstr(r.run.name));
}

QVector<ReportTable> allTables(const RunReport& r)
{
    QVector<ReportTable> tables = detailTables(r);
    if (const hearth::EvalReport* e = r.primary()) {
        const ReportTable classification = classificationTable(*e);
        ReportTable confusion{QObject::tr("Confusion matrix (%1; rows: true, columns: predicted)").arg(qstr(e->split)),
                              {QString()}, {}};
        for (const auto& n : e->report.class_names)
            confusion.header << qstr(n);
        for (size_t t = 0; t < e->report.confusion.size(); ++t) {
            QStringList row{t < e->report.class_names.size() ? qstr(e->report.class_names[t]) : QString::number(t)};
            for (int64_t v : e->report.confusion[t])
                row << QString::number(v);
            confusion.rows << row;
        }
        tables.insert(1, confusion);   // after the summary: the classification, then its matrix
        tables.insert(1, classification);
    }
    return tables;
}

QString escapeMarkdown(QString s)
{
    return s.replace(QLatin1Char('|'), QStringLiteral("\\|"));
}

}  // namespace

RunReport loadRunReport(const hearth::RunStore& store, int64_t runId)
{
    RunReport r;
    auto run = store.run(runId);
    if (!run)
        throw hearth::StoreError("There is no run " + std::to_string(runId) + " in " + store.path() + ".");
    r.run = *run;
    r.test = store.report(runId, "test");
    r.val = store.report(runId, "val");
    r.epochs = store.epochs(runId);
    r.memory = store.memoryBreakdown(runId);
    r.ranks = store.ranks(runId);
    return r;
}

ReportTable classificationTable(const hearth::EvalReport& e)
{
    const auto& c = e.report;
    ReportTable t{QObject::tr("Classification report (%1 split)").arg(qstr(e.split)),
                  {QString(), QObject::tr("precision"), QObject::tr("recall"), QObject::tr("f1-score"),
                   QObject::tr("support")},
                  {}};
    for (size_t i = 0; i < c.class_names.size(); ++i) {
        t.rows << QStringList{qstr(c.class_names[i]), fixed(c.precision.at(i)), fixed(c.recall.at(i)),
                              fixed(c.f1.at(i)), QString::number(c.support.at(i))};
    }
    t.rows << QStringList{QObject::tr("accuracy"), QString(), QString(), fixed(c.accuracy), QString::number(c.total)};
    t.rows << QStringList{QObject::tr("macro avg"), fixed(c.macro_precision), fixed(c.macro_recall),
                          fixed(c.macro_f1), QString::number(c.total)};
    t.rows << QStringList{QObject::tr("weighted avg"), fixed(c.weighted_precision), fixed(c.weighted_recall),
                          fixed(c.weighted_f1), QString::number(c.total)};
    return t;
}

ReportTable summaryTable(const RunReport& r)
{
    const auto& s = r.run;
    ReportTable t{QObject::tr("Summary"), {QObject::tr("item"), QObject::tr("value")}, {}};
    t.rows << QStringList{QObject::tr("status"), qstr(s.status)};
    if (!s.failure_message.empty())
        t.rows << QStringList{QObject::tr("failure"), qstr(s.failure_message)};
    if (!s.stop_reason.empty())
        t.rows << QStringList{QObject::tr("ended early"), qstr(s.stop_reason)};
    t.rows << QStringList{QObject::tr("device"), qstr(s.device)};
    t.rows << QStringList{QObject::tr("started"), formatTimestamp(s.started_at)};
    t.rows << QStringList{QObject::tr("finished"), formatTimestamp(s.finished_at)};
    t.rows << QStringList{QObject::tr("training time"), s.train_time_s ? formatDuration(*s.train_time_s) : "–"};
    t.rows << QStringList{QObject::tr("wall time"), s.finished_at > 0 ? formatDuration(s.finished_at - s.started_at)
                                                                      : QStringLiteral("–")};
    t.rows << QStringList{QObject::tr("samples/s"), s.samples_per_sec ? formatRate(*s.samples_per_sec) : "–"};
    t.rows << QStringList{QObject::tr("epochs"), QString::number(s.epochs_completed)};
    t.rows << QStringList{QObject::tr("optimizer steps"), QString::number(s.global_steps)};
    t.rows << QStringList{QObject::tr("best val accuracy"), optionalPercent(s.best_val_accuracy)};
    t.rows << QStringList{QObject::tr("test accuracy"), optionalPercent(s.test_accuracy)};
    t.rows << QStringList{QObject::tr("peak memory"),
                          qstr(hearth::report::formatPeakMemory(s.peak_memory_bytes, r.ranks.size(), "–"))};
    if (!s.tags.empty()) {
        QStringList tags;
        for (const auto& tag : s.tags)
            tags << qstr(tag);
        t.rows << QStringList{QObject::tr("tags"), tags.join(QStringLiteral(", "))};
    }
    if (!s.notes.empty())
        t.rows << QStringList{QObject::tr("notes"), qstr(s.notes)};
    return t;
}

ReportTable epochTable(const RunReport& r)
{
    ReportTable t{QObject::tr("Epochs"),
                  {QObject::tr("epoch"), QObject::tr("train loss"), QObject::tr("train acc"), QObject::tr("val loss"),
                   QObject::tr("val acc"), QObject::tr("lr"), QObject::tr("time"), QObject::tr("samples/s"),
                   QObject::tr("waiting for data")},
                  {}};
    for (const auto& e : r.epochs) {
        t.rows << QStringList{QString::number(e.epoch + 1) + (e.is_best ? QStringLiteral(" ★") : QString()),
                              fixed(e.train_loss), formatPercent(e.train_accuracy), fixed(e.val_loss),
                              formatPercent(e.val_accuracy), QString::number(e.lr, 'g', 4),
                              formatDuration(e.epoch_time_s), formatRate(e.samples_per_sec),
                              formatPercent(e.data_wait_share, 1)};
    }
    return t;
}

ReportTable processesTable(const RunReport& r)
{
    ReportTable t{QObject::tr("Processes"),
                  {QObject::tr("process"), QObject::tr("device"), QObject::tr("peak memory"), QObject::tr("gradients"),
                   QObject::tr("optimizer state"), QObject::tr("samples/s"), QObject::tr("waiting for data")},
                  {}};
    using hearth::report::formatHeldBytes;
    for (const auto& p : r.ranks) {
        t.rows << QStringList{QObject::tr("rank %1").arg(p.rank), qstr(p.device), formatBytes(p.peak_memory_bytes),
                              qstr(formatHeldBytes(p.gradients_bytes, "–")), qstr(formatHeldBytes(p.optimizer_state_bytes, "–")),
                              formatRate(p.samples_per_sec),
                              p.train_time_s > 0.0 ? formatPercent(p.data_wait_s / p.train_time_s, 1) : QStringLiteral("–")};
    }
    return t;
}

QVector<ReportTable> detailTables(const RunReport& r)
{
    QVector<ReportTable> tables{summaryTable(r), epochTable(r)};
    if (!r.ranks.empty())
        tables << processesTable(r);
    tables << effectiveConfigTable(r) << environmentTable(r);
    return tables;
}

ReportTable effectiveConfigTable(const RunReport& r)
{
    ReportTable t{QObject::tr("Effective configuration"), {QObject::tr("key"), QObject::tr("value")}, {}};
    const auto requested = flattenJson(normalizedConfigJson(qstr(r.run.config_json)));
    const auto effective = flattenJson(qstr(r.run.effective_json));
    for (auto it = requested.begin(); it != requested.end(); ++it) {
        const QString ran = effective.value(it.key());
        t.rows << QStringList{it.key(), ran.isEmpty() || ran == it.value() ? it.value()
                                                                          : QObject::tr("%1 (requested %2)").arg(ran, it.value())};
    }
    for (auto it = effective.begin(); it != effective.end(); ++it) {
        if (!requested.contains(it.key()))
            t.rows << QStringList{it.key(), it.value()};
    }
    return t;
}

ReportTable environmentTable(const RunReport& r)
{
    ReportTable t{QObject::tr("Environment"), {QObject::tr("item"), QObject::tr("value")}, {}};
    const auto env = flattenJson(qstr(r.run.environment_json));
    for (auto it = env.begin(); it != env.end(); ++it)
        t.rows << QStringList{it.key(), it.value()};
    return t;
}

QString reportToMarkdown(const RunReport& r)
{
    QString out = QStringLiteral("# %1\n\n").arg(title(r));
    for (const ReportTable& t : allTables(r)) {
        if (t.rows.isEmpty())
            continue;
        out += QStringLiteral("## %1\n\n| %2 |\n|").arg(t.title, t.header.join(QStringLiteral(" | ")));
        for (int i = 0; i < t.header.size(); ++i)
            out += i == 0 ? QStringLiteral(" :--- |") : QStringLiteral(" ---: |");
        out += QLatin1Char('\n');
        for (const QStringList& row : t.rows) {
            QStringList cells;
            for (const QString& c : row)
                cells << escapeMarkdown(c);
            out += QStringLiteral("| %1 |\n").arg(cells.join(QStringLiteral(" | ")));
        }
        out += QLatin1Char('\n');
    }
    return out;
}

QString reportToJson(const RunReport& r)
{
    const auto parse = [](const std::string& json) { return QJsonDocument::fromJson(QByteArray::fromStdString(json)); };
    const auto& s = r.run;
    QJsonObject run{{"id", static_cast<qint64>(s.id)}, {"name", qstr(s.name)}, {"status", qstr(s.status)},
                    {"device", qstr(s.device)}, {"started_at", s.started_at}, {"finished_at", s.finished_at},
                    {"epochs_completed", static_cast<qint64>(s.epochs_completed)},
                    {"global_steps", static_cast<qint64>(s.global_steps)}};
    const auto optional = [&run](const char* key, const std::optional<double>& v) {
        run.insert(QLatin1String(key), v ? QJsonValue(*v) : QJsonValue());
    };
    optional("best_val_accuracy", s.best_val_accuracy);
    optional("test_accuracy", s.test_accuracy);
    optional("train_time_s", s.train_time_s);
    optional("samples_per_sec", s.samples_per_sec);
    run.insert("peak_memory_bytes", s.peak_memory_bytes ? QJsonValue(static_cast<qint64>(*s.peak_memory_bytes)) : QJsonValue());
    QJsonObject root{{"run", run},
                     {"config", parse(s.config_json).object()},
                     {"effective", parse(s.effective_json).object()},
                     {"environment", parse(s.environment_json).object()}};
    QJsonObject reports;
    for (const auto* e : {r.val ? &*r.val : nullptr, r.test ? &*r.test : nullptr}) {
        if (!e)
            continue;
        QJsonObject report = parse(e->report.toJson()).object();
        report.insert("loss", e->loss);
        reports.insert(qstr(e->split), report);
    }
    root.insert("reports", reports);
    QJsonArray epochs;
    for (const auto& e : r.epochs) {
        epochs.append(QJsonObject{{"epoch", static_cast<qint64>(e.epoch)}, {"train_loss", e.train_loss},
                                  {"train_accuracy", e.train_accuracy}, {"val_loss", e.val_loss},
                                  {"val_accuracy", e.val_accuracy}, {"lr", e.lr}, {"epoch_time_s", e.epoch_time_s},
                                  {"samples_per_sec", e.samples_per_sec}});
    }
    root.insert("epochs", epochs);
    // A data-parallel run's processes, field for field as `hearth-cli export --format json` has them.
    QJsonArray ranks;
    for (const auto& p : r.ranks)
        ranks.append(parse(hearth::fields::toJson(hearth::fields::rankFields(), p, hearth::fields::Which::Stored).dump()).object());
    if (!ranks.isEmpty())
        root.insert("ranks", ranks);
    return QString::fromUtf8(QJsonDocument(root).toJson(QJsonDocument::Indented));
}

bool exportReport(const RunReport& report, const QString& path, QString* error)
{
    QString text;
    const QString lower = path.toLower();
    if (lower.endsWith(QLatin1String(".md")) || lower.endsWith(QLatin1String(".markdown")))
        text = reportToMarkdown(report);
    else if (lower.endsWith(QLatin1String(".json")))
        text = reportToJson(report);
    else {
        if (error)
            *error = QObject::tr("%1: choose a .md or .json file name (HTML and PDF reports are written from the "
                                 "store, by the Report view's Export)").arg(path);
        return false;
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text.toUtf8()) < 0 || !file.commit()) {
        if (error)
            *error = QObject::tr("%1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

}  // namespace hearth::ui
