#pragma once
// The run database's schema: ordered migrations (PRAGMA user_version) and the one way to open
// a store connection safely (refuse newer schemas before writing anything, then WAL + migrate).

#include "storage/Sqlite.h"

#include <memory>
#include <string>
#include <vector>

namespace hearth::schema {

struct Migration {
    int version;            // user_version after this step
    const char* summary;
    const char* sql;        // DDL run inside one transaction
};

// All migrations in order; migrations()[i].version == i + 1.
const std::vector<Migration>& migrations();
int latestVersion();

// Opens `path` for the store: creates the folder and file when missing, refuses a database
// written by a newer Hearth (without touching it), enables WAL/foreign keys/synchronous=NORMAL,
// and applies pending migrations. Throws StoreError with a message naming the path.
std::unique_ptr<sqlite::Connection> openStore(const std::string& path);

}  // namespace hearth::schema
