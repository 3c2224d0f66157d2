#pragma once
// RunStore's private state, shared by its translation units (runs vs per-run series).

#include "storage/RunStore.h"
#include "storage/Sqlite.h"

#include <memory>
#include <mutex>
#include <string>

namespace hearth {

struct RunStore::Impl {
    std::string path;
    std::unique_ptr<sqlite::Connection> db;
    // One connection, used from whichever thread calls: serialise (statements are cached).
    mutable std::mutex mutex;
    int64_t own_writes = 0;
    mutable int64_t seen_data_version = -1;
    mutable int64_t external_changes = 0;
};

// "<db>.artifacts" — the folder holding every run's files next to the database.
std::string artifactsRootFor(const std::string& db_path);

}  // namespace hearth
