// JSON reading/writing and overrides of ExperimentConfig, driven by the key table (ConfigSchema).
#include "engine/config/ExperimentConfig.h"

#include "engine/config/ConfigSchema.h"
#include "engine/config/KeyNames.h"
#include "engine/config/Spelling.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <fstream>
#include <variant>
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

void convert(const Json& j, std::string& out, const std::string& key) {
    if (!j.is_string()) throw ConfigError(key, "expected a string, got " + typeName(j));
    out = j.get<std::string>();
}
void convert(const Json& j, bool& out, const std::string& key) {
    if (!j.is_boolean()) throw ConfigError(key, "expected true or false, got " + typeName(j));
    out = j.get<bool>();
}
void convert(const Json& j, double& out, const std::string& key) {
    if (!j.is_number()) throw ConfigError(key, "expected a number, got " + typeName(j));
    out = j.get<double>();
}
void convert(const Json& j, int64_t& out, const std::string& key) {
    if (j.is_number_integer() || j.is_number_unsigned()) {
        out = j.get<int64_t>();
        return;
    }
    if (j.is_number_float() && std::floor(j.get<double>()) == j.get<double>() && std::fabs(j.get<double>()) < 9e15) {
        out = static_cast<int64_t>(j.get<double>());
        return;
    }
    throw ConfigError(key, "expected an integer, got " + typeName(j));
}
void convert(const Json& j, uint64_t& out, const std::string& key) {
    int64_t v = 0;
    convert(j, v, key);
    if (v < 0) throw ConfigError(key, "expected a non-negative integer, got " + std::to_string(v));
    out = static_cast<uint64_t>(v);
}
void convert(const Json& j, std::vector<int64_t>& out, const std::string& key) {
    if (!j.is_array()) throw ConfigError(key, "expected a list of integers, got " + typeName(j));
    out.clear();
    for (size_t i = 0; i < j.size(); ++i) {
        int64_t v = 0;
        convert(j[i], v, key + "[" + std::to_string(i) + "]");
        out.push_back(v);
    }
}
template <typename T>
void convert(const Json& j, std::optional<T>& out, const std::string& key) {
    if (j.is_null()) {
        out.reset();
        return;
    }
    T v{};
    convert(j, v, key);
    out = v;
}

std::vector<std::string> splitKey(const std::string& key) {
    std::vector<std::string> parts;
    std::stringstream in(key);
    std::string part;
    while (std::getline(in, part, '.')) parts.push_back(part);
    return parts;
}

// "unknown key (did you mean 'max_epochs'?); allowed here: ...", for `name` at `key`, with what
// it likely means here or elsewhere (configKeysMeant: trainer.lr -> 'optimizer.lr').
std::string unknownKey(const std::string& key, const std::string& name, const std::vector<std::string>& allowed) {
    const std::string group = key.substr(0, key.size() - name.size());   // "trainer." or ""
    return "unknown key" + didYouMean(configKeysMeant(name, allowed, group)) +
           (allowed.empty() ? "" : "; allowed here: " + join(allowed));
}

Json toJson(const ExperimentConfig& c) {
    Json root = Json::object();
    for (const auto& k : configSchema()) {
        Json* node = &root;
        const auto parts = splitKey(k.key);
        for (size_t i = 0; i + 1 < parts.size(); ++i) node = &(*node)[parts[i]];
        (*node)[parts.back()] = Json::parse(configValueJson(k, c));
    }
    return root;
}

// Reads one JSON object at `prefix` into `c`: leaves through the schema, groups recursively.
void readObject(const Json& object, const std::string& prefix, ExperimentConfig& c) {
    if (!object.is_object()) throw ConfigError(prefix, "expected an object ({...}), got " + typeName(object));
    const auto allowed = configChildNames(prefix);
    for (auto it = object.begin(); it != object.end(); ++it) {
        const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
        if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end())
            throw ConfigError(key, unknownKey(key, it.key(), allowed));
        if (const ConfigKey* k = findConfigKey(key)) {
            if (!k->null_word.empty() && it->is_string()) {
                // "auto" is the key's null; any other word is a mistake naming both spellings.
                if (it->get<std::string>() != k->null_word)
                    throw ConfigError(key, "expected an integer or \"" + k->null_word + "\", got \"" +
                                               it->get<std::string>() + "\"");
                std::visit([&](auto* field) { convert(Json(nullptr), *field, key); }, k->field(c));
                continue;
            }
            std::visit([&](auto* field) { convert(*it, *field, key); }, k->field(c));
        } else {
            readObject(*it, key, c);
        }
    }
}

ExperimentConfig fromJson(const Json& j) {
    ExperimentConfig c;
    readObject(j, "", c);
    return c;
}

}  // namespace

ExperimentConfig configFromJson(const std::string& json_text) {
    Json j;
    try {
        j = Json::parse(json_text);
    } catch (const Json::exception& e) {
        // nlohmann's message carries line and column ("syntax error while parsing ... at line 3, column 5"),
        // or names the number it cannot hold ("number overflow parsing '5e605'").
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
    const std::string text = buffer.str();
    if (text.find_first_not_of(" \t\r\n") == std::string::npos)
        throw ConfigError("", "config file '" + path + "' is empty: an experiment file is a JSON object "
                              "(`hearth-cli run --print-config` writes one; {} is the built-in experiment)");
    try {
        return configFromJson(text);
    } catch (const ConfigError& e) {
        // A YAML or TOML file (Lightning's and Hydra's configs are YAML) is not read as such.
        std::string ext = std::filesystem::path(path).extension().string();
        std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        const bool other_format = e.key().empty() && (ext == ".yaml" || ext == ".yml" || ext == ".toml");
        throw ConfigError(e.key(), e.message() + " (in " + path + ")" +
                                       (other_format ? "; experiment files are JSON: `hearth-cli run --print-config` "
                                                       "writes one, resources/presets/ has examples"
                                                     : ""));
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
            throw ConfigError(walked, unknownKey(walked, path[i], allowed));
        }
        node = &(*node)[path[i]];
    }
    if (node->is_object())
        throw ConfigError(key, "is a group; set one of its keys (e.g. " + key + "." + node->begin().key() + "=...)");

    Json value;
    try {
        value = Json::parse(text);
    } catch (const Json::exception&) {
        value = text;   // bare words are strings: trainer.precision=bf16-mixed (and 1e999, which no number holds)
    }
    // A string field keeps the literal text even when it parses as JSON (name=123); a key whose
    // null is spelled as a word ("auto") is not a string field.
    const ConfigKey* described = findConfigKey(key);
    const bool worded = described && !described->null_word.empty();
    if (node->is_string() && !worded && !value.is_string() && !value.is_null()) value = text;
    // A list of integers may be written as the form shows it: model.hidden=256,128 (or [256, 128]);
    // a single number is a list of one. An empty value is the empty list.
    if (described && described->type == ConfigType::IntList && !value.is_array()) {
        Json list = Json::array();
        std::stringstream items(text);
        for (std::string item; std::getline(items, item, ',');) {
            const auto first = item.find_first_not_of(" \t");
            if (first == std::string::npos) continue;
            try {
                size_t used = 0;
                const long long n = std::stoll(item.substr(first), &used);
                if (item.find_first_not_of(" \t", first + used) != std::string::npos) throw std::invalid_argument(item);
                list.push_back(n);
            } catch (const std::exception&) {
                throw ConfigError(key, "expected a list of integers such as 256,128; '" + item + "' is not an integer");
            }
        }
        value = list;
    }
    *node = value;
    config = fromJson(root);
}

std::vector<std::string> configKeys() {
    std::vector<std::string> keys;
    for (const auto& k : configSchema()) keys.push_back(k.key);
    return keys;
}

std::optional<int64_t> configuredBlocks(const ModelConfig& m) {
    if (m.name == "cnn") return static_cast<int64_t>(m.channels.size());
    if (m.name == "mlp") return static_cast<int64_t>(m.hidden.size());
    if (isResNetName(m.name)) {
        const auto layers = resnetLayers(resnetDepth(m.name));
        return std::accumulate(layers.begin(), layers.end(), int64_t{0});
    }
    if (isTransformerName(m.name) && !m.pretrained) return m.num_layers;
    return std::nullopt;
}

}  // namespace hearth
