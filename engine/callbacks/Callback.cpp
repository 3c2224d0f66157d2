#include "engine/callbacks/Callback.h"

#include <nlohmann/json.hpp>

namespace hearth {

std::string callbackStates(const std::vector<std::shared_ptr<Callback>>& callbacks) {
    nlohmann::json states = nlohmann::json::object();
    for (const auto& callback : callbacks) {
        const std::string key = callback->stateKey();
        if (!key.empty()) states[key] = nlohmann::json::parse(callback->stateJson());
    }
    return states.dump();
}

void loadCallbackStates(const std::vector<std::shared_ptr<Callback>>& callbacks, TrainerContext& ctx,
                        const std::string& json) {
    const auto states = nlohmann::json::parse(json);
    for (const auto& callback : callbacks) {
        const std::string key = callback->stateKey();
        if (!key.empty() && states.contains(key)) callback->loadState(ctx, states[key].dump());
    }
}

}  // namespace hearth
