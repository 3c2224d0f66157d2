#include "engine/events/EventJson.h"

#include "engine/events/Overloaded.h"
#include "engine/events/RunJson.h"

#include <nlohmann/json.hpp>

namespace hearth::eventjson {
namespace {

using nlohmann::json;

json parsed(const std::string& text) {
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    return j.is_discarded() ? json::object() : j;
}

json encodeBreakdown(const StepBreakdown& b) {
    return json{{"data_wait_ms", b.data_wait_ms}, {"host_to_device_ms", b.host_to_device_ms},
                {"forward_ms", b.forward_ms},     {"backward_ms", b.backward_ms},
                {"comm_wait_ms", b.comm_wait_ms}, {"optimizer_ms", b.optimizer_ms},
                {"sync_ms", b.sync_ms},           {"step_ms", b.step_ms},
                {"profiled", b.profiled}};
}

StepBreakdown decodeBreakdown(const json& j) {
    StepBreakdown b;
    if (!j.is_object()) return b;
    b.data_wait_ms = j.value("data_wait_ms", 0.0);
    b.host_to_device_ms = j.value("host_to_device_ms", 0.0);
    b.forward_ms = j.value("forward_ms", 0.0);
    b.backward_ms = j.value("backward_ms", 0.0);
    b.comm_wait_ms = j.value("comm_wait_ms", 0.0);
    b.optimizer_ms = j.value("optimizer_ms", 0.0);
    b.sync_ms = j.value("sync_ms", 0.0);
    b.step_ms = j.value("step_ms", 0.0);
    b.profiled = j.value("profiled", int64_t{0});
    return b;
}

json encodeMemory(const MemoryBreakdown& m) {
    return json{{"device", m.device},
                {"parameters_bytes", m.parameters_bytes},
                {"gradients_bytes", m.gradients_bytes},
                {"optimizer_state_bytes", m.optimizer_state_bytes},
                {"activations_bytes", m.activations_bytes},
                {"reserved_unused_bytes", m.reserved_unused_bytes},
                {"other_bytes", m.other_bytes},
                {"peak_bytes", m.peak_bytes}};
}

MemoryBreakdown decodeMemory(const json& j) {
    MemoryBreakdown m;
    if (!j.is_object()) return m;
    m.device = j.value("device", "");
    m.parameters_bytes = j.value("parameters_bytes", int64_t{0});
    m.gradients_bytes = j.value("gradients_bytes", int64_t{0});
    m.optimizer_state_bytes = j.value("optimizer_state_bytes", int64_t{0});
    m.activations_bytes = j.value("activations_bytes", int64_t{0});
    m.reserved_unused_bytes = j.value("reserved_unused_bytes", int64_t{0});
    m.other_bytes = j.value("other_bytes", int64_t{0});
    m.peak_bytes = j.value("peak_bytes", int64_t{0});
    return m;
}

json encode(const Event& event) {
    return std::visit(
        Overloaded{
            [](const RunStarted& e) {
                return json{{"event", "started"},
                            {"run_name", e.run_name},
                            {"config", e.config_json},
                            {"effective", e.effective},
                            {"environment", parsed(runjson::environmentToJson(e.environment))},
                            {"device", e.device},
                            {"setup", parsed(runjson::setupToJson(e))}};
            },
            [](const StepMetrics& e) {
                return json{{"event", "step"}, {"epoch", e.epoch}, {"batch", e.batch},
                            {"batches_per_epoch", e.batches_per_epoch}, {"global_step", e.global_step},
                            {"loss", e.loss}, {"accuracy", e.accuracy}, {"lr", e.lr}, {"loss_scale", e.loss_scale},
                            {"samples_per_sec", e.samples_per_sec}, {"step_time_ms", e.step_time_ms},
                            {"data_wait_ms", e.data_wait_ms}, {"elapsed_s", e.elapsed_s}, {"eta_s", e.eta_s},
                            {"breakdown", encodeBreakdown(e.breakdown)}};
            },
            [](const EpochMetrics& e) {
                return json{{"event", "epoch"}, {"epoch", e.epoch}, {"global_step", e.global_step},
                            {"train_loss", e.train_loss}, {"train_accuracy", e.train_accuracy},
                            {"val_loss", e.val_loss}, {"val_accuracy", e.val_accuracy}, {"lr", e.lr},
                            {"epoch_time_s", e.epoch_time_s}, {"samples_per_sec", e.samples_per_sec},
                            {"data_wait_share", e.data_wait_share}, {"skipped_steps", e.skipped_steps},
                            {"is_best", e.is_best}, {"breakdown", encodeBreakdown(e.breakdown)}};
            },
            [](const EvalReport& e) {
                return json{{"event", "report"}, {"split", e.split}, {"loss", e.loss},
                            {"report", parsed(e.report.toJson())}};
            },
            [](const PredictionsReady& e) {
                json rows = json::array();
                for (const auto& p : e.predictions) rows.push_back({p.index, p.true_label, p.predicted, p.confidence});
                return json{{"event", "predictions"}, {"split", e.split}, {"rows", std::move(rows)}};
            },
            [](const CheckpointSaved& e) {
                return json{{"event", "checkpoint"}, {"path", e.path}, {"epoch", e.epoch},
                            {"monitor", e.monitor}, {"value", e.value}, {"bytes", e.bytes}, {"kind", e.kind},
                            {"removed", e.removed}};
            },
            [](const DeviceSample& e) {
                return json{{"event", "device"}, {"elapsed_s", e.elapsed_s}, {"device", e.device},
                            {"name", e.name}, {"allocated_bytes", e.allocated_bytes},
                            {"reserved_bytes", e.reserved_bytes}, {"peak_bytes", e.peak_bytes},
                            {"total_bytes", e.total_bytes}, {"utilization", e.utilization}, {"rank", e.rank},
                            {"relayed", e.relayed}, {"driver_used_bytes", e.driver_used_bytes},
                            {"temperature_c", e.temperature_c}, {"power_w", e.power_w},
                            {"power_limit_w", e.power_limit_w}, {"sm_clock_mhz", e.sm_clock_mhz}};
            },
            [](const RankSummary& e) {
                return json{{"event", "rank"}, {"rank", e.rank}, {"world_size", e.world_size},
                            {"backend", e.backend}, {"device", e.device}, {"pid", e.pid},
                            {"samples", e.samples}, {"train_time_s", e.train_time_s},
                            {"samples_per_sec", e.samples_per_sec}, {"data_wait_s", e.data_wait_s},
                            {"peak_memory_bytes", e.peak_memory_bytes}, {"log_path", e.log_path},
                            {"steps", e.steps}, {"comm_steps", e.comm_steps}, {"comm_ms", e.comm_ms},
                            {"overlap_ms", e.overlap_ms}, {"final", e.final}};
            },
            [](const LogLine& e) {
                return json{{"event", "log"}, {"level", runjson::levelName(e.level)}, {"text", e.text}};
            },
            [](const RunFinished& e) {
                return json{{"event", "finished"}, {"status", e.status}, {"train_time_s", e.train_time_s},
                            {"total_time_s", e.total_time_s}, {"best_val_accuracy", e.best_val_accuracy},
                            {"test_accuracy", e.test_accuracy}, {"test_loss", e.test_loss},
                            {"samples_per_sec", e.samples_per_sec}, {"peak_memory_bytes", e.peak_memory_bytes},
                            {"epochs_completed", e.epochs_completed}, {"global_steps", e.global_steps},
                            {"memory", encodeMemory(e.memory)}, {"stop_reason", e.stop_reason}};
            },
            [](const RunFailed& e) {
                return json{{"event", "failed"},
                            {"kind", failureKindName(e.kind)},
                            {"message", e.message},
                            {"suggestion", e.suggestion}};
            },
        },
        event);
}

// Reads `name` into `out` when present with a fitting type (a missing field keeps the default).
template <typename T>
void read(const json& j, const char* name, T& out) {
    out = j.value(name, out);
}

std::optional<Event> decode(const json& j) {
    const std::string kind = j.value("event", "");
    if (kind == "started") {
        RunStarted e;
        read(j, "run_name", e.run_name);
        read(j, "config", e.config_json);
        if (j.contains("effective") && j["effective"].is_object())
            for (const auto& [k, v] : j["effective"].items()) e.effective[k] = v.is_string() ? v.get<std::string>() : v.dump();
        e.environment = runjson::environmentFromJson(j.value("environment", json::object()).dump());
        read(j, "device", e.device);
        runjson::setupFromJson(j.value("setup", json::object()).dump(), e);
        return e;
    }
    if (kind == "step") {
        StepMetrics e;
        read(j, "epoch", e.epoch); read(j, "batch", e.batch); read(j, "batches_per_epoch", e.batches_per_epoch);
        read(j, "global_step", e.global_step); read(j, "loss", e.loss); read(j, "accuracy", e.accuracy);
        read(j, "lr", e.lr); read(j, "loss_scale", e.loss_scale); read(j, "samples_per_sec", e.samples_per_sec);
        read(j, "step_time_ms", e.step_time_ms); read(j, "data_wait_ms", e.data_wait_ms);
        read(j, "elapsed_s", e.elapsed_s); read(j, "eta_s", e.eta_s);
        e.breakdown = decodeBreakdown(j.value("breakdown", json::object()));
        return e;
    }
    if (kind == "epoch") {
        EpochMetrics e;
        read(j, "epoch", e.epoch); read(j, "global_step", e.global_step); read(j, "train_loss", e.train_loss);
        read(j, "train_accuracy", e.train_accuracy); read(j, "val_loss", e.val_loss);
        read(j, "val_accuracy", e.val_accuracy); read(j, "lr", e.lr); read(j, "epoch_time_s", e.epoch_time_s);
        read(j, "samples_per_sec", e.samples_per_sec); read(j, "data_wait_share", e.data_wait_share);
        read(j, "skipped_steps", e.skipped_steps); read(j, "is_best", e.is_best);
        e.breakdown = decodeBreakdown(j.value("breakdown", json::object()));
        return e;
    }
    if (kind == "report") {
        EvalReport e;
        read(j, "split", e.split); read(j, "loss", e.loss);
        e.report = ClassificationReport::fromJson(j.value("report", json::object()).dump());
        return e;
    }
    if (kind == "predictions") {
        PredictionsReady e;
        read(j, "split", e.split);
        for (const auto& row : j.value("rows", json::array())) {
            if (!row.is_array() || row.size() != 4) continue;
            e.predictions.push_back(Prediction{row[0].get<int64_t>(), row[1].get<int64_t>(), row[2].get<int64_t>(),
                                               row[3].get<double>()});
        }
        return e;
    }
    if (kind == "checkpoint") {
        CheckpointSaved e;
        read(j, "path", e.path); read(j, "epoch", e.epoch); read(j, "monitor", e.monitor);
        read(j, "value", e.value); read(j, "bytes", e.bytes); read(j, "kind", e.kind);
        if (const auto removed = j.find("removed"); removed != j.end() && removed->is_array())
            for (const auto& path : *removed)
                if (path.is_string()) e.removed.push_back(path.get<std::string>());
        return e;
    }
    if (kind == "device") {
        DeviceSample e;
        read(j, "elapsed_s", e.elapsed_s); read(j, "device", e.device); read(j, "name", e.name);
        read(j, "allocated_bytes", e.allocated_bytes); read(j, "reserved_bytes", e.reserved_bytes);
        read(j, "peak_bytes", e.peak_bytes); read(j, "total_bytes", e.total_bytes);
        read(j, "utilization", e.utilization); read(j, "rank", e.rank); read(j, "relayed", e.relayed);
        read(j, "driver_used_bytes", e.driver_used_bytes); read(j, "temperature_c", e.temperature_c);
        read(j, "power_w", e.power_w); read(j, "power_limit_w", e.power_limit_w);
        read(j, "sm_clock_mhz", e.sm_clock_mhz);
        return e;
    }
    if (kind == "rank") {
        RankSummary e;
        read(j, "rank", e.rank); read(j, "world_size", e.world_size); read(j, "backend", e.backend);
        read(j, "device", e.device); read(j, "pid", e.pid); read(j, "samples", e.samples);
        read(j, "train_time_s", e.train_time_s); read(j, "samples_per_sec", e.samples_per_sec);
        read(j, "data_wait_s", e.data_wait_s); read(j, "peak_memory_bytes", e.peak_memory_bytes);
        read(j, "log_path", e.log_path); read(j, "steps", e.steps); read(j, "comm_steps", e.comm_steps);
        read(j, "comm_ms", e.comm_ms); read(j, "overlap_ms", e.overlap_ms); read(j, "final", e.final);
        return e;
    }
    if (kind == "log") {
        LogLine e;
        e.level = runjson::levelFromName(j.value("level", "info"));
        read(j, "text", e.text);
        return e;
    }
    if (kind == "finished") {
        RunFinished e;
        read(j, "status", e.status); read(j, "train_time_s", e.train_time_s); read(j, "total_time_s", e.total_time_s);
        read(j, "best_val_accuracy", e.best_val_accuracy); read(j, "test_accuracy", e.test_accuracy);
        read(j, "test_loss", e.test_loss); read(j, "samples_per_sec", e.samples_per_sec);
        read(j, "peak_memory_bytes", e.peak_memory_bytes); read(j, "epochs_completed", e.epochs_completed);
        read(j, "global_steps", e.global_steps);
        e.memory = decodeMemory(j.value("memory", json::object()));
        read(j, "stop_reason", e.stop_reason);
        return e;
    }
    if (kind == "failed") {
        RunFailed e;
        e.kind = failureKindFromName(j.value("kind", "training"));
        read(j, "message", e.message); read(j, "suggestion", e.suggestion);
        return e;
    }
    return std::nullopt;
}

}  // namespace

std::string toLine(const Event& event) {
    return encode(event).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<Event> fromLine(const std::string& line) {
    const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return std::nullopt;
    try {
        return decode(j);
    } catch (const json::exception&) {
        return std::nullopt;  // a field of the wrong type: not one of our lines
    }
}

const char* failureKindName(FailureKind kind) {
    switch (kind) {
    case FailureKind::Config: return "config";
    case FailureKind::Data: return "data";
    case FailureKind::Training: return "training";
    }
    return "training";
}

FailureKind failureKindFromName(const std::string& name) {
    return name == "config" ? FailureKind::Config : name == "data" ? FailureKind::Data : FailureKind::Training;
}

std::string runLine(int64_t run_id) {
    return json{{"event", "run"}, {"run_id", run_id}}.dump();
}

namespace {

// The id a line of kind `kind` carries under `key` ({"event": "run", "run_id": 7}).
std::optional<int64_t> idFromLine(const std::string& line, const char* kind, const char* key) {
    const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || j.value("event", "") != kind || !j.contains(key) || !j[key].is_number_integer())
        return std::nullopt;
    return j[key].get<int64_t>();
}

}  // namespace

std::optional<int64_t> runIdFromLine(const std::string& line) {
    return idFromLine(line, "run", "run_id");
}

std::string sweepLine(int64_t sweep_id) {
    return json{{"event", "sweep"}, {"sweep_id", sweep_id}}.dump();
}

std::optional<int64_t> sweepIdFromLine(const std::string& line) {
    return idFromLine(line, "sweep", "sweep_id");
}

}  // namespace hearth::eventjson
