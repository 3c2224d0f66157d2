#include "engine/events/RunJson.h"

#include <nlohmann/json.hpp>

namespace hearth::runjson {
namespace {

using nlohmann::json;

// Stored JSON is ours, but a damaged or hand-edited value must not take the viewer down.
// Text that is not valid UTF-8 (a path or label from a user's file) is stored with U+FFFD in
// place of the bad bytes rather than failing the write.
std::string dumpText(const json& j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json parseOrEmpty(const std::string& text) {
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    return j.is_object() ? j : json::object();
}

}  // namespace

std::string environmentToJson(const EnvironmentInfo& env) {
    json j{{"hearth_version", env.hearth_version},
           {"git_revision", env.git_revision},
           {"libtorch_version", env.libtorch_version},
           {"cuda_support", env.cuda_support},
           {"os", env.os},
           {"cpu", env.cpu},
           {"cpu_threads", env.cpu_threads},
           {"intra_op_threads", env.intra_op_threads},
           {"devices", env.devices}};
    return dumpText(j);
}

EnvironmentInfo environmentFromJson(const std::string& text) {
    const json j = parseOrEmpty(text);
    EnvironmentInfo env;
    env.hearth_version = j.value("hearth_version", "");
    env.git_revision = j.value("git_revision", "");
    env.libtorch_version = j.value("libtorch_version", "");
    env.cuda_support = j.value("cuda_support", "");
    env.os = j.value("os", "");
    env.cpu = j.value("cpu", "");
    env.cpu_threads = j.value("cpu_threads", int64_t{0});
    env.intra_op_threads = j.value("intra_op_threads", int64_t{0});
    env.devices = j.value("devices", std::vector<std::string>{});
    return env;
}

std::string effectiveToJson(const std::map<std::string, std::string>& effective) {
    return dumpText(json(effective));
}

std::map<std::string, std::string> effectiveFromJson(const std::string& text) {
    std::map<std::string, std::string> out;
    const json j = parseOrEmpty(text);   // named: items() refers into it
    for (const auto& [key, value] : j.items())
        out[key] = value.is_string() ? value.get<std::string>() : dumpText(value);
    return out;
}

std::string setupToJson(const RunStarted& s) {
    json j{{"train_size", s.train_size}, {"val_size", s.val_size}, {"test_size", s.test_size},
           {"batches_per_epoch", s.batches_per_epoch}, {"max_epochs", s.max_epochs},
           {"class_names", s.class_names}, {"model_summary", s.model_summary},
           {"parameter_count", s.parameter_count}, {"wall_time_s", s.wall_time_s}};
    return dumpText(j);
}

void setupFromJson(const std::string& text, RunStarted& s) {
    const json j = parseOrEmpty(text);
    s.train_size = j.value("train_size", int64_t{0});
    s.val_size = j.value("val_size", int64_t{0});
    s.test_size = j.value("test_size", int64_t{0});
    s.batches_per_epoch = j.value("batches_per_epoch", int64_t{0});
    s.max_epochs = j.value("max_epochs", int64_t{0});
    s.class_names = j.value("class_names", std::vector<std::string>{});
    s.model_summary = j.value("model_summary", std::vector<std::string>{});
    s.parameter_count = j.value("parameter_count", int64_t{0});
    s.wall_time_s = j.value("wall_time_s", 0.0);
}

const char* levelName(LogLine::Level level) {
    switch (level) {
    case LogLine::Level::Debug: return "debug";
    case LogLine::Level::Info: return "info";
    case LogLine::Level::Warning: return "warning";
    case LogLine::Level::Error: return "error";
    }
    return "info";
}

LogLine::Level levelFromName(const std::string& name) {
    if (name == "debug") return LogLine::Level::Debug;
    if (name == "warning") return LogLine::Level::Warning;
    if (name == "error") return LogLine::Level::Error;
    return LogLine::Level::Info;
}

}  // namespace hearth::runjson
