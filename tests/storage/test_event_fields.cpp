// The field tables of the metric events (engine/events/EventFields.h): every field of every
// table crosses an event line, the store and the exports as the table says, the stored columns
// exist after migrating from every schema version, and step blocks stay append-only.
#include "RawDb.h"
#include "StoreTestEvents.h"
#include "engine/events/EventFields.h"
#include "engine/events/EventJson.h"
#include "storage/FieldSql.h"
#include "storage/RunStore.h"
#include "storage/RunWriter.h"
#include "storage/Schema.h"
#include "storage/StepBlock.h"
#include "storage/report/RunReport.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <cstring>
#include <set>
#include <sstream>

using namespace hearth;
using namespace hearth::testing;

namespace {

// `e` with every field of `table` set to a value of its own (positive, so "unknown" fields are
// known), starting from `seed`.
template <typename E>
E filled(const std::vector<fields::Field<E>>& table, int seed) {
    E e;
    int i = 0;
    for (const auto& f : table) {
        ++i;
        void* target = f.at(e);
        switch (f.type) {
        case fields::Type::Int: *static_cast<int64_t*>(target) = seed * 1000 + i; break;
        case fields::Type::Real: *static_cast<double*>(target) = seed + i * 0.25; break;
        case fields::Type::Bool: *static_cast<bool*>(target) = true; break;
        case fields::Type::Text: *static_cast<std::string*>(target) = "text-" + std::to_string(seed) + "-" + f.name; break;
        }
    }
    return e;
}

// Every field of `table` (only the stored ones when `stored_only`) equal in `a` and `b`.
template <typename E>
bool sameFields(const std::vector<fields::Field<E>>& table, const E& a, const E& b, bool stored_only, std::string& which) {
    for (const auto& f : table) {
        if (stored_only && f.column.empty()) continue;
        const bool same = f.type == fields::Type::Text ? f.asText(a) == f.asText(b) : f.number(a) == f.number(b);
        if (!same) {
            which = f.group.empty() ? f.name : f.group + "." + f.name;
            return false;
        }
    }
    return true;
}

template <typename E>
void checkLineRoundTrip(const std::vector<fields::Field<E>>& table) {
    const E sent = filled(table, 7);
    const auto line = eventjson::toLine(Event{sent});
    const auto back = eventjson::fromLine(line);
    QVERIFY2(back.has_value(), line.c_str());
    const E* received = std::get_if<E>(&*back);
    QVERIFY(received != nullptr);
    std::string which;
    QVERIFY2(sameFields(table, sent, *received, /*stored_only=*/false, which), (which + " in " + line).c_str());
}

// The bytes of E that its table's fields cover.
template <typename E>
size_t coveredBytes(const std::vector<fields::Field<E>>& table) {
    size_t bytes = 0;
    for (const auto& f : table) {
        switch (f.type) {
        case fields::Type::Int: bytes += sizeof(int64_t); break;
        case fields::Type::Real: bytes += sizeof(double); break;
        case fields::Type::Bool: bytes += sizeof(bool); break;
        case fields::Type::Text: bytes += sizeof(std::string); break;
        }
    }
    return bytes;
}

// column name -> declared type of `table` in the database at `path`.
std::map<std::string, std::string> columnsOf(const std::string& path, const std::string& table) {
    std::map<std::string, std::string> out;
    sqlite3* db = nullptr;
    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db, ("PRAGMA table_info(" + table + ")").c_str(), -1, &stmt, nullptr);
    while (sqlite3_step(stmt) == SQLITE_ROW)
        out[reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1))] =
            reinterpret_cast<const char*>(sqlite3_column_text(stmt, 2));
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return out;
}

template <typename E>
std::string missingColumn(const std::string& path, const std::string& sql_table,
                          const std::vector<fields::Field<E>>& table) {
    const auto columns = columnsOf(path, sql_table);
    for (const auto* f : fields::stored(table)) {
        const auto it = columns.find(f->column);
        if (it == columns.end()) return sql_table + "." + f->column + " is missing";
        if (it->second != fieldsql::sqlType(f->type))
            return sql_table + "." + f->column + " is " + it->second + ", not " + fieldsql::sqlType(f->type);
    }
    return {};
}

// The first JSON key, column or member that two rows of `table` share ("" when none).
template <typename E>
std::string duplicateIn(const std::vector<fields::Field<E>>& table) {
    std::set<std::string> keys, columns;
    std::set<const void*> members;
    const E probe{};
    for (const auto& f : table) {
        if (!keys.insert(f.group + "." + f.name).second) return "key " + f.name;
        if (!f.column.empty() && !columns.insert(f.column).second) return "column " + f.column;
        if (!members.insert(f.at(probe)).second) return "member " + f.name;
    }
    return {};
}

}  // namespace

class EventFieldsTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    std::string path(const std::string& name) { return dir_.filePath(QString::fromStdString(name)).toStdString(); }

private Q_SLOTS:
    void everyFieldCrossesAnEventLine();
    void everyStoredFieldComesBackFromTheStore();
    void everyStoredFieldHasItsColumnAfterMigratingFromEachVersion();
    void tablesNameEveryMemberOnce();
    void stepBlocksAreAppendOnly();
    void exportsWriteTheTablesNames();
};

void EventFieldsTest::everyFieldCrossesAnEventLine() {
    checkLineRoundTrip(fields::stepFields());
    checkLineRoundTrip(fields::epochFields());
    checkLineRoundTrip(fields::deviceFields());
    checkLineRoundTrip(fields::rankFields());
    checkLineRoundTrip(fields::finishedFields());
    // A line from an older writer without a field keeps that field's default.
    const auto old = eventjson::fromLine(R"({"event":"device","elapsed_s":1.5,"device":0,"name":"gpu"})");
    QVERIFY(old.has_value());
    QCOMPARE(std::get<DeviceSample>(*old).sm_clock_mhz, -1.0);
    QCOMPARE(std::get<DeviceSample>(*old).elapsed_s, 1.5);
    // A field of the wrong type is not one of our lines.
    QVERIFY(!eventjson::fromLine(R"({"event":"step","loss":"high"})").has_value());
}

void EventFieldsTest::everyStoredFieldComesBackFromTheStore() {
    const std::string db = path("roundtrip.sqlite");
    StepMetrics step1 = filled(fields::stepFields(), 1), step2 = filled(fields::stepFields(), 2);
    step1.global_step = 10;
    step2.global_step = 20;
    EpochMetrics epoch = filled(fields::epochFields(), 3);
    DeviceSample device = filled(fields::deviceFields(), 4);
    device.relayed = false;   // a relayed sample is live only
    RankSummary rank = filled(fields::rankFields(), 5);
    rank.final = true;        // only a rank's final record is stored
    rank.log_path.clear();    // no log file to hash
    RunFinished finished = filled(fields::finishedFields(), 6);
    finished.status = "completed";
    int64_t id = 0;
    {
        RunWriter writer(db);
        id = writer.createRun("fields", "{}");
        for (const Event& e : {Event{startedEvent("fields")}, Event{step1}, Event{step2}, Event{epoch},
                               Event{device}, Event{rank}, Event{finished}})
            writer.enqueue(id, e);
        writer.flush();
    }
    RunStore store(db);
    std::string which;
    const auto steps = store.steps(id);
    QCOMPARE(steps.size(), size_t{2});
    QVERIFY2(sameFields(fields::stepFields(), step1, steps[0], true, which), which.c_str());
    QVERIFY2(sameFields(fields::stepFields(), step2, steps[1], true, which), which.c_str());
    const auto epochs = store.epochs(id);
    QCOMPARE(epochs.size(), size_t{1});
    QVERIFY2(sameFields(fields::epochFields(), epoch, epochs[0], true, which), which.c_str());
    const auto devices = store.deviceSamples(id);
    QCOMPARE(devices.size(), size_t{1});
    QVERIFY2(sameFields(fields::deviceFields(), device, devices[0], true, which), which.c_str());
    const auto ranks = store.ranks(id);
    QCOMPARE(ranks.size(), size_t{1});
    QVERIFY2(sameFields(fields::rankFields(), rank, ranks[0], true, which), which.c_str());
    const auto memory = store.memoryBreakdown(id);
    QVERIFY(memory.has_value());
    QVERIFY2(sameFields(fields::memoryFields(), finished.memory, *memory, true, which), which.c_str());
}

void EventFieldsTest::everyStoredFieldHasItsColumnAfterMigratingFromEachVersion() {
    const auto& migrations = schema::migrations();
    for (size_t version = 1; version <= migrations.size(); ++version) {
        const std::string db = path("v" + std::to_string(version) + ".sqlite");
        {
            // What a Hearth of that schema version left behind.
            RawDb raw(db);
            std::string sql = "BEGIN;";
            for (size_t i = 0; i < version; ++i) sql += migrations[i].sql;
            raw.exec(sql + "PRAGMA user_version = " + std::to_string(version) + "; COMMIT;");
        }
        { RunStore store(db); }   // migrates to the latest version
        const std::string from = " (from v" + std::to_string(version) + ")";
        for (const std::string& problem :
             {missingColumn(db, "epoch_metrics", fields::epochFields()),
              missingColumn(db, "device_samples", fields::deviceFields()),
              missingColumn(db, "run_ranks", fields::rankFields()),
              missingColumn(db, "run_memory", fields::memoryFields())})
            QVERIFY2(problem.empty(), (problem + from).c_str());
    }
}

void EventFieldsTest::tablesNameEveryMemberOnce() {
    // A member added to an event without its row leaves bytes uncovered: the row is the field's
    // only description, so it must exist. (Padding: after is_best, relayed and final.)
    QCOMPARE(coveredBytes(fields::stepFields()), sizeof(StepMetrics));
    QCOMPARE(coveredBytes(fields::epochFields()) + 7, sizeof(EpochMetrics));
    QCOMPARE(coveredBytes(fields::deviceFields()) + 7, sizeof(DeviceSample));
    QCOMPARE(coveredBytes(fields::rankFields()) + 7, sizeof(RankSummary));
    QCOMPARE(coveredBytes(fields::memoryFields()), sizeof(MemoryBreakdown));
    QCOMPARE(coveredBytes(fields::finishedFields()), sizeof(RunFinished));
    // No two rows of a table share a JSON key, a column or a member.
    QCOMPARE(duplicateIn(fields::stepFields()), std::string());
    QCOMPARE(duplicateIn(fields::epochFields()), std::string());
    QCOMPARE(duplicateIn(fields::deviceFields()), std::string());
    QCOMPARE(duplicateIn(fields::rankFields()), std::string());
    QCOMPARE(duplicateIn(fields::memoryFields()), std::string());
    QCOMPARE(duplicateIn(fields::finishedFields()), std::string());
}

void EventFieldsTest::stepBlocksAreAppendOnly() {
    // What blocks written since v1 hold, by position: a reorder would misread every stored run.
    const std::vector<std::string> historical = {"epoch", "batch", "batches_per_epoch", "global_step", "loss",
                                                 "accuracy", "lr", "loss_scale", "samples_per_sec", "step_time_ms",
                                                 "data_wait_ms", "elapsed_s", "eta_s"};
    const auto stored = fields::stored(fields::stepFields());
    QVERIFY(stored.size() >= historical.size());
    QCOMPARE(stepblock::fieldCount(), stored.size());
    for (size_t i = 0; i < historical.size(); ++i) QCOMPARE(stored[i]->name, historical[i]);
    // A block of an older build (13 fields) reads; the fields it lacks keep their defaults (0, or
    // -1 where that means unknown: an old run's TFLOP/s).
    const StepMetrics step = filled(fields::stepFields(), 9);
    const std::string now = stepblock::pack(&step, 1);
    QCOMPARE(now.size(), stored.size() * 8);
    std::vector<StepMetrics> back;
    stepblock::unpackAppend(now.data(), historical.size() * 8, historical.size(), back);
    QCOMPARE(back.size(), size_t{1});
    for (size_t i = 0; i < stored.size(); ++i) {
        const double expected = i < historical.size() ? stored[i]->number(step) : stored[i]->number(StepMetrics{});
        QCOMPARE(stored[i]->number(back[0]), expected);
    }
}

void EventFieldsTest::exportsWriteTheTablesNames() {
    const std::string db = path("export.sqlite");
    int64_t id = 0;
    StepMetrics step = stepEvent(0);
    EpochMetrics epoch = filled(fields::epochFields(), 2);
    epoch.global_step = step.global_step;
    {
        RunWriter writer(db);
        id = writer.createRun("export", "{}");
        writer.enqueue(id, startedEvent("export"));
        writer.enqueue(id, step);
        writer.enqueue(id, epoch);
        writer.flush();
    }
    RunStore store(db);
    const std::string csv = report::metricsCsv(store, id);
    const std::string header = csv.substr(0, csv.find('\n'));
    std::set<std::string> columns;
    {
        std::stringstream in(header);
        for (std::string name; std::getline(in, name, ',');) columns.insert(name);
    }
    for (const auto& f : fields::stepFields())
        if (!f.csv.empty()) QVERIFY2(columns.count(f.csv) == 1, (f.csv + " in " + header).c_str());
    for (const auto& f : fields::epochFields())
        if (!f.csv.empty()) QVERIFY2(columns.count(f.csv) == 1, (f.csv + " in " + header).c_str());
    // The JSON export's steps carry the stored fields under their event-line keys.
    const auto j = nlohmann::json::parse(report::runJson(store, id));
    QCOMPARE(j["steps"].size(), size_t{1});
    for (const auto* f : fields::stored(fields::stepFields()))
        QVERIFY2(j["steps"][0].contains(f->name), f->name.c_str());
    QVERIFY(!j["steps"][0].contains("breakdown"));   // live only, never stored per step
    QCOMPARE(j["epochs"][0]["breakdown"]["step_ms"].get<double>(), epoch.breakdown.step_ms);
}

QTEST_GUILESS_MAIN(EventFieldsTest)
#include "test_event_fields.moc"
