#pragma once
// SQL for an event's stored fields, from its field table (engine/events/EventFields.h): the
// INSERT and SELECT column lists, binding and reading by position. The tables' columns
// themselves are created by the explicit migrations in Schema.cpp; test_store_schema checks
// that each stored field has its column after migrating from any version.

#include "engine/events/EventFields.h"
#include "storage/Sqlite.h"

#include <string>

namespace hearth::fieldsql {

// "a, b, c": the stored fields' columns, in table order.
template <typename E>
std::string columns(const std::vector<fields::Field<E>>& table) {
    std::string out;
    for (const auto* f : fields::stored(table)) out += (out.empty() ? "" : ", ") + f->column;
    return out;
}

// INSERT (or INSERT OR REPLACE, `verb`) INTO `sql_table` (key columns..., stored fields...):
// the keys are bound first (?1...), then the fields (bindFields at keys + 1).
template <typename E>
std::string insert(const std::string& verb, const std::string& sql_table, const std::vector<std::string>& keys,
                   const std::vector<fields::Field<E>>& table) {
    std::string names, values;
    int index = 0;
    auto add = [&](const std::string& column) {
        const std::string separator = index ? ", " : "";
        ++index;
        names += separator + column;
        values += separator + "?" + std::to_string(index);
    };
    for (const auto& key : keys) add(key);
    for (const auto* f : fields::stored(table)) add(f->column);
    return verb + " INTO " + sql_table + " (" + names + ") VALUES (" + values + ")";
}

// Binds the stored fields of `e` from parameter `first` on.
template <typename E>
void bindFields(sqlite::Statement& statement, int first, const std::vector<fields::Field<E>>& table, const E& e) {
    int index = first;
    for (const auto& f : table) {
        if (f.column.empty()) continue;
        switch (f.type) {
        case fields::Type::Int: statement.bind(index++, f.asInt(e)); break;
        case fields::Type::Real: statement.bind(index++, f.asReal(e)); break;
        case fields::Type::Bool: statement.bind(index++, int64_t{f.asBool(e) ? 1 : 0}); break;
        case fields::Type::Text: statement.bind(index++, f.asText(e)); break;
        }
    }
}

// Reads the stored fields into `e` from result column `first` on (a SELECT of columns()).
template <typename E>
void readFields(const sqlite::Statement& row, int first, const std::vector<fields::Field<E>>& table, E& e) {
    int column = first;
    for (const auto& f : table) {
        if (f.column.empty()) continue;
        void* target = f.at(e);
        switch (f.type) {
        case fields::Type::Int: *static_cast<int64_t*>(target) = row.int64(column++); break;
        case fields::Type::Real: *static_cast<double*>(target) = row.real(column++); break;
        case fields::Type::Bool: *static_cast<bool*>(target) = row.int64(column++) != 0; break;
        case fields::Type::Text: *static_cast<std::string*>(target) = row.text(column++); break;
        }
    }
}

// The SQL type a field's column has ("INTEGER", "REAL", "TEXT").
inline const char* sqlType(fields::Type type) {
    switch (type) {
    case fields::Type::Int:
    case fields::Type::Bool: return "INTEGER";
    case fields::Type::Real: return "REAL";
    case fields::Type::Text: return "TEXT";
    }
    return "TEXT";
}

}  // namespace hearth::fieldsql
