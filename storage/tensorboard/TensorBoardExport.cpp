#include "storage/tensorboard/TensorBoardExport.h"

#include "engine/data/formats/WholeFile.h"
#include "engine/events/EventFields.h"
#include "storage/report/RunReport.h"
#include "storage/tensorboard/EventFile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <system_error>

namespace hearth::report {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
namespace tb = hearth::tensorboard;

// tensorboard.hparams messages (plugins/hparams/{api,plugin_data}.proto).
constexpr int kPluginDataExperiment = 2, kPluginDataSessionStart = 3, kPluginDataSessionEnd = 4;
constexpr int kStartHparams = 1, kStartTime = 5;
constexpr int kEndStatus = 1, kEndTime = 2;
constexpr int kExperimentDescription = 1, kExperimentTime = 3, kExperimentHparams = 4, kExperimentMetrics = 5,
              kExperimentName = 6;
constexpr int kHparamName = 1, kHparamType = 4;
constexpr int kMetricName = 1, kMetricNameGroup = 1, kMetricNameTag = 2, kMetricDisplayName = 3,
              kMetricDataset = 5;
constexpr int kMapKey = 1, kMapValue = 2;
constexpr int kValueNumber = 2, kValueString = 3, kValueBool = 4;   // google.protobuf.Value
constexpr int kTypeString = 1, kTypeBool = 2, kTypeFloat64 = 3;
constexpr int kStatusUnknown = 0, kStatusSuccess = 1, kStatusFailure = 2, kStatusRunning = 3;
constexpr int kDatasetTraining = 1, kDatasetValidation = 2;
// The hparams plugin's NULL_TENSOR: DT_FLOAT, shape [0].
const std::string kNullTensor("\x08\x01\x12\x02\x12\x00", 6);

std::string slug(const std::string& name) {
    std::string out;
    for (const char c : name) {
        const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
        out.push_back(keep ? c : '-');
        if (out.size() >= 60) break;
    }
    return out;
}

struct HParam {
    std::string name;
    tb::ProtoWriter value;   // google.protobuf.Value
    int type = kTypeString;
};

void addLeaves(const json& node, const std::string& prefix, std::vector<HParam>& out) {
    if (node.is_object()) {
        for (const auto& [key, value] : node.items()) {
            std::string name = prefix;
            if (!name.empty()) name += '.';
            name += key;
            addLeaves(value, name, out);
        }
        return;
    }
    if (node.is_null()) return;   // unset (auto) keys have no value to show
    HParam h;
    h.name = prefix;
    if (node.is_boolean()) {
        h.type = kTypeBool;
        h.value.varint(kValueBool, node.get<bool>() ? 1 : 0);
    } else if (node.is_number()) {
        h.type = kTypeFloat64;
        h.value.float64(kValueNumber, node.get<double>());
    } else {
        h.value.bytes(kValueString, node.is_string() ? node.get<std::string>() : node.dump());   // lists as JSON
    }
    out.push_back(std::move(h));
}

// The requested config's leaves ("trainer.batch_size"; lists are leaves), typed as the hparams
// plugin expects.
std::vector<HParam> configHparams(const std::string& config_json) {
    std::vector<HParam> out;
    const json config = json::parse(config_json, nullptr, false);
    if (config.is_object()) addLeaves(config, "", out);
    return out;
}

std::string hparamsPluginData(int field, const tb::ProtoWriter& body) {
    tb::ProtoWriter data;   // HParamsPluginData{version: 0, <field>: body}
    data.message(field, body);
    return data.data();
}

int sessionStatus(const std::string& status) {
    if (status == "completed") return kStatusSuccess;
    if (status == "failed") return kStatusFailure;
    if (status == "running") return kStatusRunning;
    return kStatusUnknown;   // stopped, interrupted
}

// What the run has, for the fields exported only when it applies (fields::When).
struct Exported {
    bool scaled = false;     // some step scaled its loss (16-mixed)
    bool validates = false;  // the run has a validation split
};

// The scalars of one event: each field with a TensorBoard tag that applies to this run.
template <typename E>
std::vector<std::string> scalars(const std::vector<fields::Field<E>>& table, const E& e, const Exported& run) {
    std::vector<std::string> values;
    for (const auto& f : table) {
        if (f.tensorboard.empty() || !f.known(e)) continue;
        if ((f.when == fields::When::Scaled && !run.scaled) || (f.when == fields::When::Validated && !run.validates))
            continue;
        values.push_back(tb::scalarValue(f.tensorboard, f.number(e)));
    }
    return values;
}

class EventLog {
public:
    void add(double wall_time, int64_t step, const std::vector<std::string>& values) {
        m_data += tb::tfRecord(tb::event(wall_time, step, values));
    }
    void addRaw(const std::string& event) { m_data += tb::tfRecord(event); }
    const std::string& data() const { return m_data; }

private:
    std::string m_data;
};

void writeFile(const fs::path& path, const std::string& content) {
    const std::string failed = writeWholeFile(path.string(), [&](std::ostream& out) { out << content; });
    if (!failed.empty()) throw ExportError("Cannot write '" + path.string() + "': " + failed + ".");
}

}  // namespace

TensorBoardExport exportTensorBoard(const RunStore& store, int64_t run_id, const std::string& out_dir) {
    const StoredRun run = loadRun(store, run_id);
    const auto steps = store.steps(run_id);
    const RunSummary& s = run.summary;
    const double start = run.started.wall_time_s > 0 ? run.started.wall_time_s : s.started_at;
    const bool validates = run.started.val_size > 0 || run.val.has_value();
    const bool scaled = std::any_of(steps.begin(), steps.end(), [](const StepMetrics& m) { return m.loss_scale > 0; });

    TensorBoardExport result;
    EventLog log;
    log.addRaw(tb::fileVersionEvent(start));

    // The hparams plugin: the experiment (what the columns are) and this session's values.
    const auto hparams = configHparams(s.config_json);
    result.hparams = static_cast<int64_t>(hparams.size());
    tb::ProtoWriter experiment, session_start;
    experiment.bytes(kExperimentName, s.name)
        .bytes(kExperimentDescription, "Hearth run #" + std::to_string(s.id))
        .float64(kExperimentTime, start);
    for (const auto& h : hparams) {
        tb::ProtoWriter info, entry;
        info.bytes(kHparamName, h.name).varint(kHparamType, static_cast<uint64_t>(h.type));
        experiment.message(kExperimentHparams, info);
        entry.bytes(kMapKey, h.name).message(kMapValue, h.value);
        session_start.message(kStartHparams, entry);
    }
    std::vector<std::pair<std::string, int>> metrics = {{"epoch/train_loss", kDatasetTraining},
                                                        {"epoch/train_accuracy", kDatasetTraining}};
    if (validates) {
        metrics.emplace_back("epoch/val_loss", kDatasetValidation);
        metrics.emplace_back("epoch/val_accuracy", kDatasetValidation);
    }
    if (run.test) {
        metrics.emplace_back("test/loss", 0);
        metrics.emplace_back("test/accuracy", 0);
    }
    for (const auto& [tag, dataset] : metrics) {
        tb::ProtoWriter name, info;
        name.bytes(kMetricNameTag, tag);
        info.message(kMetricName, name).bytes(kMetricDisplayName, tag);
        if (dataset != 0) info.varint(kMetricDataset, static_cast<uint64_t>(dataset));
        experiment.message(kExperimentMetrics, info);
    }
    session_start.float64(kStartTime, start);
    log.add(start, 0, {tb::pluginValue("_hparams_/experiment", "hparams", hparamsPluginData(kPluginDataExperiment, experiment), kNullTensor)});
    log.add(start, 0, {tb::pluginValue("_hparams_/session_start_info", "hparams",
                                       hparamsPluginData(kPluginDataSessionStart, session_start), kNullTensor)});
    const json config = json::parse(s.config_json, nullptr, false);
    log.add(start, 0, {tb::textValue("config", "```json\n" + (config.is_discarded() ? s.config_json : config.dump(2)) + "\n```")});

    // Steps and epochs in the order they happened (an epoch after its last logged step).
    double wall = start;
    int64_t last_step = 0;
    size_t e = 0;
    const Exported exported{scaled, validates};
    auto addEpoch = [&](const EpochMetrics& m) {
        log.add(wall, m.global_step, scalars(fields::epochFields(), m, exported));
        last_step = std::max(last_step, m.global_step);
        ++result.epoch_points;
    };
    for (const auto& m : steps) {
        while (e < run.epochs.size() && run.epochs[e].global_step < m.global_step) addEpoch(run.epochs[e++]);
        wall = start + m.elapsed_s;
        log.add(wall, m.global_step, scalars(fields::stepFields(), m, exported));
        last_step = std::max(last_step, m.global_step);
        ++result.step_points;
    }
    while (e < run.epochs.size()) addEpoch(run.epochs[e++]);

    // Evaluations, the report and the session's end, at the last step.
    const double end = s.finished_at > 0 ? s.finished_at : wall;
    last_step = std::max(last_step, s.global_steps);
    for (const auto* eval : {&run.val, &run.test}) {
        if (!*eval) continue;
        const auto& r = **eval;
        log.add(end, last_step, {tb::scalarValue(r.split + "/loss", r.loss),
                                 tb::scalarValue(r.split + "/accuracy", r.report.accuracy),
                                 tb::scalarValue(r.split + "/macro_f1", r.report.macro_f1),
                                 tb::scalarValue(r.split + "/weighted_f1", r.report.weighted_f1)});
    }
    log.add(end, last_step, {tb::textValue("report", runMarkdown(run))});
    if (s.status != "running") {
        tb::ProtoWriter session_end;
        session_end.varint(kEndStatus, static_cast<uint64_t>(sessionStatus(s.status))).float64(kEndTime, end);
        log.add(end, last_step, {tb::pluginValue("_hparams_/session_end_info", "hparams",
                                                 hparamsPluginData(kPluginDataSessionEnd, session_end), kNullTensor)});
    }

    const fs::path dir = fs::path(out_dir) / (std::to_string(s.id) + "-" + slug(s.name));
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw ExportError("Cannot create the directory '" + dir.string() + "': " + ec.message() + ".");
    // TensorBoard reads every file whose name holds "tfevents"; the name is fixed per run, so a
    // second export replaces the first instead of doubling its points.
    const fs::path file = dir / ("events.out.tfevents." + std::to_string(static_cast<int64_t>(start)) + ".hearth.run" +
                                 std::to_string(s.id));
    writeFile(file, log.data());
    result.run_dir = dir.string();
    result.file = file.string();
    return result;
}

}  // namespace hearth::report
