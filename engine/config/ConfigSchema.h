#pragma once
// The one description of every config key: its name, type, default, allowed values or range,
// label, help text and form group. The JSON reader and writer, overrides, the per-key checks of
// validate(), `hearth-cli keys`, the effective-settings list and the workbench form all derive
// from this table, so a new key is described once. No LibTorch or Qt types here.

#include "engine/config/ExperimentConfig.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace hearth {

enum class ConfigType { String, Bool, Int, UInt, Double, IntList };

// Why a key has no effect with the rest of `config` on `caps` ("only sgd uses momentum"), or ""
// when it applies. One rule per key: the form disables the key with this reason, and validate()
// warns when such a key is set away from its default.
using NoEffectRule = std::string (*)(const ExperimentConfig& config, const DeviceCapabilities& caps);

// How the form shows a key beyond what its type implies.
enum class ConfigWidget { Auto, Path, DirectoryOrFile, Fraction };

// A typed reference to the field of one ExperimentConfig that a key names.
using ConfigField = std::variant<std::string*, bool*, int64_t*, uint64_t*, double*, std::vector<int64_t>*,
                                 std::optional<std::string>*, std::optional<int64_t>*, std::optional<double>*>;

struct ConfigKey {
    std::string key;    // dotted: "trainer.precision"
    ConfigType type = ConfigType::String;
    bool nullable = false;            // null (JSON) = unset: off, all, none
    std::string group;                // form group: Experiment | Data | Model | Optimization | Speed | Devices
    std::string label;                // "Precision"
    std::string help;                 // one or two sentences: what it does, when it applies
    std::vector<std::string> choices; // allowed values of a String key; empty = any text
    std::optional<double> min, max;   // numeric bounds (each element of an IntList)
    bool min_exclusive = false, max_exclusive = false;
    std::string null_label;           // how the form shows null (or 0 where zero_is_null): "all samples"
    bool zero_is_null = false;        // the form's 0 means null / "the default"
    std::string null_word;            // JSON and --set spell null this way ("auto"); "" = JSON null
    bool toggle = false;              // a speed/technique toggle: listed in the effective settings
    ConfigWidget widget = ConfigWidget::Auto;
    NoEffectRule no_effect = nullptr; // null: the key always applies
    ConfigField (*field)(ExperimentConfig&) = nullptr;
};

// Every key, in the order of the JSON file and of the form within its group.
const std::vector<ConfigKey>& configSchema();
// The form groups in the order the form shows them (a key's JSON place may come earlier: the
// speed toggles data.padding, data.bucket_by_length and data.on_device sit in "data" but the
// Speed group).
const std::vector<std::string>& configGroups();
// nullptr for an unknown key.
const ConfigKey* findConfigKey(const std::string& key);
// The key's value in `config` as JSON text ("64", "\"bf16-mixed\"", "null", "[256, 128]").
std::string configValueJson(const ConfigKey& key, const ExperimentConfig& config);
// The value as a person reads it: 64, bf16-mixed, off/all samples for null, 256, 128.
std::string configValueText(const ConfigKey& key, const ExperimentConfig& config);
// The problem with `config`'s value of `key` against the key's type, choices and range
// ("must be at least 1, got 0"), or "" when it is allowed.
std::string checkConfigValue(const ConfigKey& key, const ExperimentConfig& config);
// Why `key` has no effect with the rest of `config` on `caps`, or "" when it applies (its
// ConfigKey::no_effect rule; a key without one always applies).
std::string noEffectReason(const ConfigKey& key, const ExperimentConfig& config, const DeviceCapabilities& caps);
// validate(config, caps) (ExperimentConfig.h), and in `warnings` the keys set away from their
// default that have no effect here, by their no_effect rule ("has no effect: ZeRO-2 shards
// gradients itself; DDP's buckets are not used"): allowed, but worth saying. A key that
// validation refuses gets its error only.
std::vector<ConfigIssue> validate(const ExperimentConfig& config, const DeviceCapabilities& caps,
                                  std::vector<ConfigIssue>* warnings);
// The values of a String key's choices that `caps` can run (what the form offers): e.g. 16-mixed
// only with CUDA or CPU float16 autocast, cuda only with a GPU, distributed strategies only when
// this build has them.
std::vector<std::string> offeredChoices(const ConfigKey& key, const DeviceCapabilities& caps);
// The largest value the form offers for an Int key on `caps` (trainer.devices: the GPU count).
std::optional<double> offeredMax(const ConfigKey& key, const DeviceCapabilities& caps);
// "trainer.batch_size  int  default 64  at least 1\n    Samples per micro-batch." for every key.
std::string describeConfigKeys(const std::string& prefix = "");

}  // namespace hearth
