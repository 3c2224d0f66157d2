#pragma once
// hearth-cli's run-history subcommands: runs, show, compare, export, tag, note, rename, delete.
//
// Wiring (app/cli/main.cpp):
//     std::string db_path;                         // bound to the app's --db option
//     app.add_option("--db", db_path, "...")->envname("HEARTH_DB");
//     hearth::cli::StoreCommandContext store_context{db_path};
//     hearth::cli::registerStoreCommands(app, store_context, exit_code);
//     app.parse(argc, argv);  ...  return exit_code;
// The subcommands read the app's --db after parsing (empty = RunStore::defaultPath()) and also
// accept `--db PATH` after their own name (`hearth-cli runs --db x.sqlite`). Each command sets
// `exit_code`: 0 done, 2 bad arguments or unknown run, 3 database missing, unreadable or not a
// run database. Messages are one line on `err`, prefixed "error: ".

#include <CLI/CLI.hpp>

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

namespace hearth {
class RunStore;
}

namespace hearth::cli {

struct StoreCommandContext {
    const std::string& db_option;   // the app's --db value, read after parsing
    std::istream* in = &std::cin;   // delete's confirmation
    std::ostream* out = &std::cout;
    std::ostream* err = &std::cerr;
    std::string subcommand_db{};    // --db given after the subcommand name (wins)

    std::string databasePath() const;
};

void registerStoreCommands(CLI::App& app, StoreCommandContext& context, int& exit_code);

}  // namespace hearth::cli
