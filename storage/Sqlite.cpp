#include "storage/Sqlite.h"

#include <cctype>
#include <chrono>
#include <thread>

namespace hearth::sqlite {
namespace {

// Long enough for the other process's largest transaction (a report with its predictions).
constexpr int kBusyTimeoutMs = 10000;
// After busy_timeout expired, BEGIN IMMEDIATE is tried again this many times before giving up:
// a writer committing once a second must never surface "database is locked" to the user.
constexpr int kBeginRetries = 30;

}  // namespace

std::string describe(int code, const std::string& path) {
    switch (code & 0xff) {
    case SQLITE_NOTADB:
        return "'" + path + "' is not a Hearth run database (the file is not a SQLite database)";
    case SQLITE_CORRUPT:
        return "the run database '" + path + "' is damaged (SQLite reports corruption)";
    case SQLITE_FULL:
        return "the run database '" + path + "' is full: the disk has no space left or the "
               "database reached its size limit";
    case SQLITE_READONLY:
        return "the run database '" + path + "' is in a read-only location: Hearth needs write "
               "access to the file and its folder";
    case SQLITE_CANTOPEN:
        return "cannot open the run database '" + path + "': check that its folder exists and is "
               "writable";
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return "the run database '" + path + "' stayed locked by another process for too long";
    case SQLITE_IOERR:
        return "input/output error on the run database '" + path + "'";
    case SQLITE_PERM:
    case SQLITE_AUTH:
        return "no permission to access the run database '" + path + "'";
    default:
        return "the run database '" + path + "' reported: " + sqlite3_errstr(code);
    }
}

// --- Statement ---------------------------------------------------------------------------

Statement::Statement(Connection& connection, const std::string& sql) : connection_(connection) {
    const int rc = sqlite3_prepare_v3(connection.handle(), sql.c_str(), static_cast<int>(sql.size()),
                                      SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
    if (rc != SQLITE_OK) connection.fail(rc, "prepare: " + sql);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int index, int64_t value) {
    sqlite3_bind_int64(stmt_, index, value);
    return *this;
}

Statement& Statement::bind(int index, double value) {
    sqlite3_bind_double(stmt_, index, value);
    return *this;
}

Statement& Statement::bind(int index, const std::string& value) {
    sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    return *this;
}

Statement& Statement::bind(int index, std::optional<double> value) {
    return value ? bind(index, *value) : bindNull(index);
}

Statement& Statement::bind(int index, std::optional<int64_t> value) {
    return value ? bind(index, *value) : bindNull(index);
}

Statement& Statement::bindBlob(int index, const void* data, size_t bytes) {
    sqlite3_bind_blob64(stmt_, index, data, bytes, SQLITE_TRANSIENT);
    return *this;
}

Statement& Statement::bindNull(int index) {
    sqlite3_bind_null(stmt_, index);
    return *this;
}

bool Statement::step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    sqlite3_reset(stmt_);
    connection_.fail(rc, sqlite3_sql(stmt_));
}

void Statement::run() {
    StatementUse use(*this);
    step();
}

void Statement::reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

std::string Statement::text(int column) const {
    const auto* p = sqlite3_column_text(stmt_, column);
    if (!p) return {};
    return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::optional<double> Statement::optReal(int column) const {
    if (isNull(column)) return std::nullopt;
    return real(column);
}

std::optional<int64_t> Statement::optInt64(int column) const {
    if (isNull(column)) return std::nullopt;
    return int64(column);
}

// --- Connection --------------------------------------------------------------------------

Connection::Connection(const std::string& path, bool read_only) : path_(path) {
    const int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    const int rc = sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        sqlite3_close(db_);
        db_ = nullptr;
        std::string message = describe(rc, path);
        message[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(message[0])));
        throw StoreError(message + ".");
    }
    sqlite3_extended_result_codes(db_, 1);
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);
}

Connection::~Connection() {
    cache_.clear();   // finalize statements before closing
    sqlite3_close(db_);
}

void Connection::exec(const std::string& sql) {
    char* message = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
    sqlite3_free(message);
    if (rc != SQLITE_OK) fail(rc, sql);
}

Statement& Connection::cached(const std::string& sql) {
    auto it = cache_.find(sql);
    if (it == cache_.end()) it = cache_.emplace(sql, std::make_unique<Statement>(*this, sql)).first;
    return *it->second;
}

int64_t Connection::queryInt(const std::string& sql) {
    StatementUse use(cached(sql));
    return use->step() ? use->int64(0) : 0;
}

void Connection::fail(int code, const std::string& what) const {
    std::string message = describe(code, path_);
    switch (code & 0xff) {
    case SQLITE_NOTADB: case SQLITE_CORRUPT: case SQLITE_FULL: case SQLITE_READONLY: case SQLITE_CANTOPEN:
    case SQLITE_BUSY: case SQLITE_LOCKED: case SQLITE_IOERR: case SQLITE_PERM: case SQLITE_AUTH:
        break;   // the sentence says it all
    default:
        // Constraint or schema errors are bugs or foreign edits: name the detail and the statement.
        if (db_ != nullptr) message += " (" + std::string(sqlite3_errmsg(db_)) + ")";
        message += " while running: " + what.substr(0, 120);
    }
    message[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(message[0])));
    throw StoreError(message + ".");
}

// --- Transaction -------------------------------------------------------------------------

Transaction::Transaction(Connection& connection) : connection_(connection) {
    for (int attempt = 0;; ++attempt) {
        const int rc = sqlite3_exec(connection.handle(), "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
        if (rc == SQLITE_OK) break;
        const int primary = rc & 0xff;
        if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) || attempt >= kBeginRetries)
            connection.fail(rc, "BEGIN IMMEDIATE");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    open_ = true;
}

Transaction::~Transaction() {
    if (open_) sqlite3_exec(connection_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
    const int rc = sqlite3_exec(connection_.handle(), "COMMIT", nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) connection_.fail(rc, "COMMIT");   // destructor rolls back
    open_ = false;
}

}  // namespace hearth::sqlite
