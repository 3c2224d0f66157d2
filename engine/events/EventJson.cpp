#include "engine/events/EventJson.h"

#include "engine/events/FieldJson.h"
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

// An event line of a table-described kind: {"event": kind, ...its fields}.
template <typename E>
json tagged(const char* kind, const std::vector<fields::Field<E>>& table, const E& e) {
    json j{{"event", kind}};
    fields::toJson(table, e, j);
    return j;
}

template <typename E>
std::optional<Event> decoded(const std::vector<fields::Field<E>>& table, const json& j) {
    E e;
    fields::fromJson(table, j, e);
    return e;
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
            [](const StepMetrics& e) { return tagged("step", fields::stepFields(), e); },
            [](const EpochMetrics& e) { return tagged("epoch", fields::epochFields(), e); },
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
            [](const DeviceSample& e) { return tagged("device", fields::deviceFields(), e); },
            [](const RankSummary& e) { return tagged("rank", fields::rankFields(), e); },
            [](const LogLine& e) {
                return json{{"event", "log"}, {"level", runjson::levelName(e.level)}, {"text", e.text}};
            },
            [](const RunFinished& e) { return tagged("finished", fields::finishedFields(), e); },
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
    if (kind == "step") return decoded<StepMetrics>(fields::stepFields(), j);
    if (kind == "epoch") return decoded<EpochMetrics>(fields::epochFields(), j);
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
    if (kind == "device") return decoded<DeviceSample>(fields::deviceFields(), j);
    if (kind == "rank") return decoded<RankSummary>(fields::rankFields(), j);
    if (kind == "log") {
        LogLine e;
        e.level = runjson::levelFromName(j.value("level", "info"));
        read(j, "text", e.text);
        return e;
    }
    if (kind == "finished") return decoded<RunFinished>(fields::finishedFields(), j);
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
