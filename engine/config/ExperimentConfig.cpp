// JSON reading/writing and validation of ExperimentConfig.
#include "engine/config/ExperimentConfig.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

namespace hearth {

using Json = nlohmann::ordered_json;

ConfigError::ConfigError(std::string key, std::string message)
    : std::runtime_error(key.empty() ? message : key + ": " + message),
      key_(std::move(key)),
      message_(std::move(message)) {}

namespace {

std::string join(const std::vector<std::string>& items, const char* sep = ", ") {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
    return out;
}

std::string typeName(const Json& j) {
    if (j.is_null()) return "null";
    if (j.is_boolean()) return "a boolean";
    if (j.is_number_integer() || j.is_number_unsigned()) return "an integer";
    if (j.is_number()) return "a number";
    if (j.is_string()) return "a string";
    if (j.is_array()) return "a list";
    return "an object";
}

// Reads the keys of one JSON object into struct fields, remembering which keys it consumed so
// that anything left over is reported as unknown.
class ObjectReader {
public:
    ObjectReader(const Json& object, std::string prefix) : object_(object), prefix_(std::move(prefix)) {
        if (!object_.is_object())
            throw ConfigError(prefix_.empty() ? "" : prefix_,
                              "expected an object ({...}), got " + typeName(object_));
    }

    template <typename T>
    void read(const char* key, T& out) {
        known_.push_back(key);
        auto it = object_.find(key);
        if (it == object_.end()) return;
        convert(*it, out, qualified(key));
    }

    const Json* child(const char* key) {
        known_.push_back(key);
        auto it = object_.find(key);
        return it == object_.end() ? nullptr : &*it;
    }

    void rejectUnknown() const {
        for (auto it = object_.begin(); it != object_.end(); ++it) {
            if (std::find(known_.begin(), known_.end(), it.key()) == known_.end())
                throw ConfigError(qualified(it.key()),
                                  "unknown key; allowed here: " + join(known_));
        }
    }

    std::string qualified(const std::string& key) const { return prefix_.empty() ? key : prefix_ + "." + key; }

private:
    static void convert(const Json& j, std::string& out, const std::string& key) {
        if (!j.is_string()) throw ConfigError(key, "expected a string, got " + typeName(j));
        out = j.get<std::string>();
    }
    static void convert(const Json& j, bool& out, const std::string& key) {
        if (!j.is_boolean()) throw ConfigError(key, "expected true or false, got " + typeName(j));
        out = j.get<bool>();
    }
    static void convert(const Json& j, double& out, const std::string& key) {
        if (!j.is_number()) throw ConfigError(key, "expected a number, got " + typeName(j));
        out = j.get<double>();
    }
    static void convert(const Json& j, int64_t& out, const std::string& key) {
        if (j.is_number_integer() || j.is_number_unsigned()) {
            out = j.get<int64_t>();
            return;
        }
        if (j.is_number_float() && std::floor(j.get<double>()) == j.get<double>() &&
            std::fabs(j.get<double>()) < 9e15) {
            out = static_cast<int64_t>(j.get<double>());
            return;
        }
        throw ConfigError(key, "expected an integer, got " + typeName(j));
    }
    static void convert(const Json& j, uint64_t& out, const std::string& key) {
        int64_t v = 0;
        convert(j, v, key);
        if (v < 0) throw ConfigError(key, "expected a non-negative integer, got " + std::to_string(v));
        out = static_cast<uint64_t>(v);
    }
    static void convert(const Json& j, std::vector<int64_t>& out, const std::string& key) {
        if (!j.is_array()) throw ConfigError(key, "expected a list of integers, got " + typeName(j));
        out.clear();
        for (size_t i = 0; i < j.size(); ++i) {
            int64_t v = 0;
            convert(j[i], v, key + "[" + std::to_string(i) + "]");
            out.push_back(v);
        }
    }
    template <typename T>
    static void convert(const Json& j, std::optional<T>& out, const std::string& key) {
        if (j.is_null()) {
            out.reset();
            return;
        }
        T v{};
        convert(j, v, key);
        out = v;
    }

    const Json& object_;
    std::string prefix_;
    std::vector<std::string> known_;
};

template <typename T>
Json optionalToJson(const std::optional<T>& v) {
    return v ? Json(*v) : Json(nullptr);
}

Json toJson(const ExperimentConfig& c) {
    const auto& d = c.data;
    const auto& m = c.model;
    const auto& o = c.optimizer;
    const auto& s = c.scheduler;
    const auto& t = c.trainer;
    return Json{
        {"name", c.name},
        {"seed", c.seed},
        {"data", Json{{"kind", d.kind}, {"path", d.path}, {"val_path", optionalToJson(d.val_path)},
                      {"test_path", optionalToJson(d.test_path)}, {"label_column", d.label_column},
                      {"val_fraction", d.val_fraction}, {"test_fraction", d.test_fraction},
                      {"limit", optionalToJson(d.limit)}}},
        {"model", Json{{"name", m.name}, {"hidden", m.hidden}, {"channels", m.channels}, {"dropout", m.dropout}}},
        {"optimizer", Json{{"name", o.name}, {"lr", o.lr}, {"weight_decay", o.weight_decay},
                           {"momentum", o.momentum}, {"beta1", o.beta1}, {"beta2", o.beta2}, {"eps", o.eps}}},
        {"scheduler", Json{{"name", s.name}, {"step_size", s.step_size}, {"gamma", s.gamma},
                           {"warmup_steps", s.warmup_steps}, {"min_lr", s.min_lr}}},
        {"trainer",
         Json{{"max_epochs", t.max_epochs}, {"batch_size", t.batch_size}, {"precision", t.precision},
              {"accumulate_grad_batches", t.accumulate_grad_batches}, {"accelerator", t.accelerator},
              {"devices", t.devices}, {"strategy", t.strategy}, {"num_workers", t.num_workers},
              {"pin_memory", t.pin_memory}, {"prefetch_factor", t.prefetch_factor},
              {"persistent_workers", t.persistent_workers},
              {"gradient_clip_val", optionalToJson(t.gradient_clip_val)},
              {"deterministic", t.deterministic}, {"log_every_n_steps", t.log_every_n_steps},
              {"num_threads", t.num_threads}, {"cudnn_benchmark", t.cudnn_benchmark}, {"tf32", t.tf32},
              {"channels_last", t.channels_last},
              {"checkpoint", Json{{"monitor", t.checkpoint.monitor}, {"mode", t.checkpoint.mode}}}}},
    };
}

void readData(const Json& j, DataConfig& d) {
    ObjectReader r(j, "data");
    r.read("kind", d.kind);
    r.read("path", d.path);
    r.read("val_path", d.val_path);
    r.read("test_path", d.test_path);
    r.read("label_column", d.label_column);
    r.read("val_fraction", d.val_fraction);
    r.read("test_fraction", d.test_fraction);
    r.read("limit", d.limit);
    r.rejectUnknown();
}

void readModel(const Json& j, ModelConfig& m) {
    ObjectReader r(j, "model");
    r.read("name", m.name);
    r.read("hidden", m.hidden);
    r.read("channels", m.channels);
    r.read("dropout", m.dropout);
    r.rejectUnknown();
}

void readOptimizer(const Json& j, OptimizerConfig& o) {
    ObjectReader r(j, "optimizer");
    r.read("name", o.name);
    r.read("lr", o.lr);
    r.read("weight_decay", o.weight_decay);
    r.read("momentum", o.momentum);
    r.read("beta1", o.beta1);
    r.read("beta2", o.beta2);
    r.read("eps", o.eps);
    r.rejectUnknown();
}

void readScheduler(const Json& j, SchedulerConfig& s) {
    ObjectReader r(j, "scheduler");
    r.read("name", s.name);
    r.read("step_size", s.step_size);
    r.read("gamma", s.gamma);
    r.read("warmup_steps", s.warmup_steps);
    r.read("min_lr", s.min_lr);
    r.rejectUnknown();
}

void readTrainer(const Json& j, TrainerConfig& t) {
    ObjectReader r(j, "trainer");
    r.read("max_epochs", t.max_epochs);
    r.read("batch_size", t.batch_size);
    r.read("precision", t.precision);
    r.read("accumulate_grad_batches", t.accumulate_grad_batches);
    r.read("accelerator", t.accelerator);
    r.read("devices", t.devices);
    r.read("strategy", t.strategy);
    r.read("num_workers", t.num_workers);
    r.read("pin_memory", t.pin_memory);
    r.read("prefetch_factor", t.prefetch_factor);
    r.read("persistent_workers", t.persistent_workers);
    r.read("gradient_clip_val", t.gradient_clip_val);
    r.read("deterministic", t.deterministic);
    r.read("log_every_n_steps", t.log_every_n_steps);
    r.read("num_threads", t.num_threads);
    r.read("cudnn_benchmark", t.cudnn_benchmark);
    r.read("tf32", t.tf32);
    r.read("channels_last", t.channels_last);
    if (const Json* cp = r.child("checkpoint")) {
        ObjectReader cr(*cp, "trainer.checkpoint");
        cr.read("monitor", t.checkpoint.monitor);
        cr.read("mode", t.checkpoint.mode);
        cr.rejectUnknown();
    }
    r.rejectUnknown();
}

ExperimentConfig fromJson(const Json& j) {
    ExperimentConfig c;
    ObjectReader r(j, "");
    r.read("name", c.name);
    r.read("seed", c.seed);
    if (const Json* d = r.child("data")) readData(*d, c.data);
    if (const Json* m = r.child("model")) readModel(*m, c.model);
    if (const Json* o = r.child("optimizer")) readOptimizer(*o, c.optimizer);
    if (const Json* s = r.child("scheduler")) readScheduler(*s, c.scheduler);
    if (const Json* t = r.child("trainer")) readTrainer(*t, c.trainer);
    r.rejectUnknown();
    return c;
}

void flattenKeys(const Json& j, const std::string& prefix, std::vector<std::string>& out) {
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
        if (it->is_object())
            flattenKeys(*it, key, out);
        else
            out.push_back(key);
    }
}

}  // namespace

ExperimentConfig configFromJson(const std::string& json_text) {
    Json j;
    try {
        j = Json::parse(json_text);
    } catch (const Json::parse_error& e) {
        // nlohmann's message carries line and column ("syntax error while parsing ... at line 3, column 5").
        std::string what = e.what();
        const auto pos = what.find("] ");
        throw ConfigError("", "not valid JSON: " + (pos == std::string::npos ? what : what.substr(pos + 2)));
    }
    return fromJson(j);
}

std::string configToJson(const ExperimentConfig& config, int indent) { return toJson(config).dump(indent); }

ExperimentConfig loadConfigFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ConfigError("", "cannot read config file '" + path + "': no such file or not readable");
    std::stringstream buffer;
    buffer << in.rdbuf();
    try {
        return configFromJson(buffer.str());
    } catch (const ConfigError& e) {
        throw ConfigError(e.key(), e.message() + " (in " + path + ")");
    }
}

void saveConfigFile(const ExperimentConfig& config, const std::string& path) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw ConfigError("", "cannot write config file '" + path + "'");
    out << configToJson(config) << '\n';
    if (!out) throw ConfigError("", "failed writing config file '" + path + "'");
}

void applyOverride(ExperimentConfig& config, const std::string& assignment) {
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
        throw ConfigError("", "override '" + assignment + "' is not of the form key=value (e.g. trainer.max_epochs=5)");
    const std::string key = assignment.substr(0, eq);
    const std::string text = assignment.substr(eq + 1);

    Json root = toJson(config);
    Json* node = &root;
    std::string walked;
    std::stringstream parts(key);
    std::string part;
    std::vector<std::string> path;
    while (std::getline(parts, part, '.')) path.push_back(part);
    for (size_t i = 0; i < path.size(); ++i) {
        walked += (i ? "." : "") + path[i];
        if (!node->is_object() || !node->contains(path[i])) {
            std::vector<std::string> allowed;
            if (node->is_object())
                for (auto it = node->begin(); it != node->end(); ++it) allowed.push_back(it.key());
            throw ConfigError(walked, allowed.empty() ? "unknown key" : "unknown key; allowed here: " + join(allowed));
        }
        node = &(*node)[path[i]];
    }
    if (node->is_object())
        throw ConfigError(key, "is a group; set one of its keys (e.g. " + key + "." + node->begin().key() + "=...)");

    Json value;
    try {
        value = Json::parse(text);
    } catch (const Json::parse_error&) {
        value = text;   // bare words are strings: trainer.precision=bf16-mixed
    }
    // A string field keeps the literal text even when it parses as JSON (name=123).
    if (node->is_string() && !value.is_string() && !value.is_null()) value = text;
    *node = value;
    config = fromJson(root);
}

std::vector<std::string> configKeys() {
    std::vector<std::string> keys;
    flattenKeys(toJson(ExperimentConfig{}), "", keys);
    return keys;
}

}  // namespace hearth
