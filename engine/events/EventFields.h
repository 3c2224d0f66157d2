#pragma once
// The field tables of the metric events: one row per field of StepMetrics, EpochMetrics (each
// with its StepBreakdown), DeviceSample, RankSummary, MemoryBreakdown and RunFinished, as
// ConfigSchema is for config keys. Each row names the field once (type, unit, JSON key, SQL column, export
// names); the JSON lines (EventJson), the store's INSERT/SELECT column lists and step blocks
// (storage/FieldSql.h, StepBlock) and the CSV, JSON and TensorBoard exports are generated from
// it. A new field is one member in Events.h and one row here.
//
// Rows are append-only where a table is stored by position (the step blocks): never reorder.
// The SQL schema itself stays in explicit migrations (storage/Schema.cpp); test_store_schema
// checks that every stored row has its column, of its type, after migrating from any version.

#include "engine/events/Events.h"

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace hearth::fields {

enum class Type { Int, Real, Bool, Text };

// When an export includes a field: always, only for runs that scale their loss (16-mixed),
// or only for runs that validate.
enum class When { Always, Scaled, Validated };

template <typename E>
struct Field {
    std::string name;          // JSON key (inside `group` when set)
    Type type = Type::Real;
    std::string unit;          // "ms", "s", "bytes", "1/s", "°C", "W", "MHz", "" (a count or ratio)
    bool nullable = false;     // -1 stands for "unknown": exports leave it empty, the column defaults to -1
    std::string group;         // JSON object the field sits in ("breakdown", "memory"); "" = top level
    std::string column;        // SQL column (or step-block slot); "" = not stored
    std::string csv;           // CSV export column; "" = not in the CSV
    std::string tensorboard;   // TensorBoard scalar tag; "" = not exported there
    When when = When::Always;  // for the exports
    // Where the field lives in an event (the tables are built from member pointers, so a row
    // cannot name a field of another type).
    void* (*address)(E&) = nullptr;

    const void* at(const E& e) const { return address(const_cast<E&>(e)); }  // NOLINT(cppcoreguidelines-pro-type-const-cast)
    void* at(E& e) const { return address(e); }
    int64_t asInt(const E& e) const { return *static_cast<const int64_t*>(at(e)); }
    double asReal(const E& e) const { return *static_cast<const double*>(at(e)); }
    bool asBool(const E& e) const { return *static_cast<const bool*>(at(e)); }
    const std::string& asText(const E& e) const { return *static_cast<const std::string*>(at(e)); }
    // A number as a double (Int and Bool converted); 0 for Text.
    double number(const E& e) const {
        switch (type) {
        case Type::Int: return static_cast<double>(asInt(e));
        case Type::Real: return asReal(e);
        case Type::Bool: return asBool(e) ? 1.0 : 0.0;
        case Type::Text: return 0.0;
        }
        return 0.0;
    }
    bool known(const E& e) const { return !nullable || number(e) >= 0.0; }

    // Chained settings, so a table row reads as one line.
    Field& withUnit(std::string u) { unit = std::move(u); return *this; }
    Field& unknownWhenNegative() { nullable = true; return *this; }
    Field& inGroup(std::string g) { group = std::move(g); return *this; }
    Field& storedAs(std::string c) { column = std::move(c); return *this; }
    Field& notStored() { column.clear(); return *this; }
    Field& inCsv(std::string c) { csv = std::move(c); return *this; }
    Field& inTensorBoard(std::string tag, When w = When::Always) { tensorboard = std::move(tag); when = w; return *this; }
};

namespace detail {

template <typename M>
struct MemberOf;
template <typename C, typename T>
struct MemberOf<T C::*> {
    using Class = C;
    using Value = T;
};

// Follows a path of member pointers (&EpochMetrics::breakdown, &StepBreakdown::step_ms).
template <auto First, auto... Rest, typename T>
auto& follow(T& object) {
    auto& next = object.*First;
    if constexpr (sizeof...(Rest) == 0) {
        return next;
    } else {
        return follow<Rest...>(next);
    }
}

template <auto First, auto... Rest>
void* addressOf(typename MemberOf<decltype(First)>::Class& e) {
    return &follow<First, Rest...>(e);
}

template <typename T>
constexpr Type typeOf() {
    if constexpr (std::is_same_v<T, int64_t>) return Type::Int;
    else if constexpr (std::is_same_v<T, double>) return Type::Real;
    else if constexpr (std::is_same_v<T, bool>) return Type::Bool;
    else {
        static_assert(std::is_same_v<T, std::string>, "a field is int64_t, double, bool or std::string");
        return Type::Text;
    }
}

}  // namespace detail

// A row for the member at the end of `Path` (one member pointer, or a path into a nested
// struct), named `name`; stored in the column of the same name unless told otherwise.
template <auto First, auto... Path>
Field<typename detail::MemberOf<decltype(First)>::Class> field(const std::string& name) {
    using E = typename detail::MemberOf<decltype(First)>::Class;
    using V = std::remove_reference_t<decltype(detail::follow<First, Path...>(std::declval<E&>()))>;
    Field<E> f;
    f.type = detail::typeOf<V>();
    f.column = name;
    f.name = name;
    f.address = &detail::addressOf<First, Path...>;
    return f;
}

// The tables, in their stored order.
const std::vector<Field<StepMetrics>>& stepFields();
const std::vector<Field<EpochMetrics>>& epochFields();
const std::vector<Field<DeviceSample>>& deviceFields();
const std::vector<Field<RankSummary>>& rankFields();
const std::vector<Field<MemoryBreakdown>>& memoryFields();
const std::vector<Field<RunFinished>>& finishedFields();

// The rows of `table` that are stored (have a column), in order.
template <typename E>
std::vector<const Field<E>*> stored(const std::vector<Field<E>>& table) {
    std::vector<const Field<E>*> out;
    for (const auto& f : table)
        if (!f.column.empty()) out.push_back(&f);
    return out;
}

}  // namespace hearth::fields
