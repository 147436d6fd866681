// The subcommands of `lobench`, one file each.
#pragma once

#include <string>

#include "harness/cli/cli_fwd.hpp"

namespace lobench {

void register_list_command(CLI::App& app);                               // list_command.cpp
void register_run_command(CLI::App& app, const std::string& argv);       // run_command.cpp
void register_check_command(CLI::App& app, const std::string& argv);     // check_command.cpp
void register_schema_command(CLI::App& app);                             // schema_command.cpp
void register_merge_command(CLI::App& app, const std::string& argv);     // merge_command.cpp
void register_compare_command(CLI::App& app);                            // compare_command.cpp
void register_tune_command(CLI::App& app);                               // tune_command.cpp

// Commands report their exit status here (0 success, 1 finished with failures, 2 bad input).
void set_command_exit_code(int code);
int command_exit_code();

}  // namespace lobench
