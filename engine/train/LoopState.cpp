#include "engine/train/LoopState.h"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace hearth {
namespace {

using Json = nlohmann::ordered_json;

template <typename T>
T field(const Json& j, const char* key) {
    if (!j.contains(key)) throw std::invalid_argument(std::string("loop state: missing '") + key + "'");
    try {
        return j.at(key).get<T>();
    } catch (const Json::exception&) {
        throw std::invalid_argument(std::string("loop state: '") + key + "' has the wrong type");
    }
}

}  // namespace

bool LoopState::operator==(const LoopState& o) const {
    return epoch == o.epoch && batch_in_epoch == o.batch_in_epoch && global_step == o.global_step &&
           micro_batches == o.micro_batches && epochs_completed == o.epochs_completed &&
           best_value == o.best_value && best_epoch == o.best_epoch && lr == o.lr && finish_reason == o.finish_reason;
}

std::string loopStateToJson(const LoopState& s) {
    Json j;
    j["epoch"] = s.epoch;
    j["batch_in_epoch"] = s.batch_in_epoch;
    j["global_step"] = s.global_step;
    j["micro_batches"] = s.micro_batches;
    j["epochs_completed"] = s.epochs_completed;
    j["best_value"] = s.best_value ? Json(*s.best_value) : Json(nullptr);
    j["best_epoch"] = s.best_epoch;
    j["lr"] = s.lr;
    if (!s.finish_reason.empty()) j["finish_reason"] = s.finish_reason;
    return j.dump();
}

LoopState loopStateFromJson(const std::string& text) {
    Json j;
    try {
        j = Json::parse(text);
    } catch (const Json::exception& e) {
        throw std::invalid_argument(std::string("loop state: not JSON (") + e.what() + ")");
    }
    if (!j.is_object()) throw std::invalid_argument("loop state: not a JSON object");
    LoopState s;
    s.epoch = field<int64_t>(j, "epoch");
    s.batch_in_epoch = field<int64_t>(j, "batch_in_epoch");
    s.global_step = field<int64_t>(j, "global_step");
    s.micro_batches = field<int64_t>(j, "micro_batches");
    s.epochs_completed = field<int64_t>(j, "epochs_completed");
    if (j.contains("best_value") && !j.at("best_value").is_null()) s.best_value = field<double>(j, "best_value");
    s.best_epoch = field<int64_t>(j, "best_epoch");
    s.lr = field<double>(j, "lr");
    if (j.contains("finish_reason")) s.finish_reason = field<std::string>(j, "finish_reason");
    return s;
}

}  // namespace hearth
