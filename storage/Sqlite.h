#pragma once
// Small RAII layer over SQLite's C API for the run store: a connection, cached prepared
// statements, and write transactions that wait (busy_timeout + retry) instead of failing.

#include "storage/RunStore.h"

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace hearth::sqlite {

class Connection;

// A prepared statement: bind by 1-based index, step through rows, reset for the next use.
class Statement final {
public:
    Statement(Connection& connection, const std::string& sql);
    ~Statement();
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    Statement& bind(int index, int64_t value);
    Statement& bind(int index, int value) { return bind(index, static_cast<int64_t>(value)); }
    Statement& bind(int index, double value);
    Statement& bind(int index, const std::string& value);
    Statement& bind(int index, const char* value) { return bind(index, std::string(value)); }
    Statement& bind(int index, std::optional<double> value);
    Statement& bind(int index, std::optional<int64_t> value);
    Statement& bindBlob(int index, const void* data, size_t bytes);
    Statement& bindNull(int index);

    // True while a row is available; false when done. Throws StoreError on errors.
    bool step();
    // Runs a statement that returns no rows, then resets it.
    void run();
    void reset();   // also clears bindings

    int64_t int64(int column) const { return sqlite3_column_int64(stmt_, column); }
    double real(int column) const { return sqlite3_column_double(stmt_, column); }
    std::string text(int column) const;
    bool isNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
    std::optional<double> optReal(int column) const;
    std::optional<int64_t> optInt64(int column) const;
    const void* blob(int column) const { return sqlite3_column_blob(stmt_, column); }
    int blobBytes(int column) const { return sqlite3_column_bytes(stmt_, column); }

private:
    Connection& connection_;
    sqlite3_stmt* stmt_ = nullptr;
};

// Resets a cached statement when leaving scope, so an exception never leaves it mid-step
// (a statement left stepping keeps a read transaction open and blocks checkpoints).
class StatementUse final {
public:
    explicit StatementUse(Statement& statement) : statement_(statement) {}
    ~StatementUse() { statement_.reset(); }
    Statement* operator->() { return &statement_; }
    Statement& operator*() { return statement_; }
    StatementUse(const StatementUse&) = delete;
    StatementUse& operator=(const StatementUse&) = delete;
private:
    Statement& statement_;
};

// One connection with the store's pragmas and a cache of prepared statements.
class Connection final {
public:
    // Opens read-write (creating the file) or read-only. Throws StoreError naming the path.
    Connection(const std::string& path, bool read_only);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    sqlite3* handle() const { return db_; }
    const std::string& path() const { return path_; }

    // Runs one or more statements without results (DDL, pragmas). Throws StoreError.
    void exec(const std::string& sql);
    // A prepared statement kept for the life of the connection; wrap uses in StatementUse.
    Statement& cached(const std::string& sql);
    int64_t queryInt(const std::string& sql);

    // Turns an SQLite result code into a StoreError with a message a user can act on.
    [[noreturn]] void fail(int code, const std::string& what) const;

private:
    std::string path_;
    sqlite3* db_ = nullptr;
    std::map<std::string, std::unique_ptr<Statement>> cache_;
};

// BEGIN IMMEDIATE (takes the write lock up front, so a transaction never fails half-way with
// "database is locked"); retried on SQLITE_BUSY beyond busy_timeout. Rolls back unless committed.
class Transaction final {
public:
    explicit Transaction(Connection& connection);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit();
private:
    Connection& connection_;
    bool open_ = false;
};

// The message for a result code in the user's terms ("disk is full", "not a database").
std::string describe(int code, const std::string& path);

}  // namespace hearth::sqlite
