#pragma once
// JSON forms of an event from its field table (EventFields.h): the event lines of
// `hearth-cli --events` and the run's JSON export write the same keys.

#include "engine/events/EventFields.h"

#include <nlohmann/json.hpp>

namespace hearth::fields {

// Which fields toJson writes: all (an event line), or those the store keeps (an export of a
// stored run, where the others were never kept).
enum class Which { All, Stored };

// Adds the fields of `e` to the object `out` (a grouped field inside out[group]).
template <typename E>
void toJson(const std::vector<Field<E>>& table, const E& e, nlohmann::json& out, Which which = Which::All) {
    for (const auto& f : table) {
        if (which == Which::Stored && f.column.empty()) continue;
        nlohmann::json& target = f.group.empty() ? out : out[f.group];
        switch (f.type) {
        case Type::Int: target[f.name] = f.asInt(e); break;
        case Type::Real: target[f.name] = f.asReal(e); break;
        case Type::Bool: target[f.name] = f.asBool(e); break;
        case Type::Text: target[f.name] = f.asText(e); break;
        }
    }
}

template <typename E>
nlohmann::json toJson(const std::vector<Field<E>>& table, const E& e, Which which = Which::All) {
    nlohmann::json out = nlohmann::json::object();
    toJson(table, e, out, which);
    return out;
}

// Reads the fields present in `j` into `e`; a missing field (an older writer's line) keeps its
// value. Throws nlohmann::json::exception for a field of the wrong type.
template <typename E>
void fromJson(const std::vector<Field<E>>& table, const nlohmann::json& j, E& e) {
    for (const auto& f : table) {
        const nlohmann::json* source = &j;
        if (!f.group.empty()) {
            const auto group = j.find(f.group);
            if (group == j.end() || !group->is_object()) continue;
            source = &*group;
        }
        const auto value = source->find(f.name);
        if (value == source->end() || value->is_null()) continue;
        switch (f.type) {
        case Type::Int: *static_cast<int64_t*>(f.at(e)) = value->template get<int64_t>(); break;
        case Type::Real: *static_cast<double*>(f.at(e)) = value->template get<double>(); break;
        case Type::Bool: *static_cast<bool*>(f.at(e)) = value->template get<bool>(); break;
        case Type::Text: *static_cast<std::string*>(f.at(e)) = value->template get<std::string>(); break;
        }
    }
}

}  // namespace hearth::fields
