// One option vocabulary for every command: the options that more than one command takes are defined
// here once (name, meaning, unit, default, range, help text), and a command declares such an option with
// its own variable and then hands it to shared(), which gives it the table's help and default. The same
// name therefore means the same thing everywhere; `lobench options` prints the table with the commands
// that take each option (docs/options.md is its output), and harness/cli/tests/help_walk.py checks every
// command's --help against it.
//
// Renamed options keep their old spelling for one release: deprecated() declares it, hidden from the
// table, with a note on stderr when used.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness/cli/cli_fwd.hpp"

namespace lobench::cli {

struct SharedOption {
  std::string name;     // "--threads"
  std::string meaning;  // a short phrase, for the table
  std::string unit;     // "threads", "bytes (a unit is required)", "" when none
  std::string deflt;    // the default, as --help shows it ("" when none)
  std::string range;    // valid values
  std::string help;     // the --help text, the same in every command
};

// Every shared option, in the order of docs/options.md.
const std::vector<SharedOption>& shared_options();
// The entry of `name` ("--threads"); throws std::logic_error for a name not in the table.
const SharedOption& shared_option(const std::string& name);

// Gives `opt` (a command's declaration of a shared option) the table's help text, followed by "; detail"
// when the command has something to add, and the table's default. Returns opt.
CLI::Option* shared(CLI::Option* opt, const std::string& detail = "");

// The default of `command` in a shared default that differs by command ("run: 32, train-seqrec: 8" gives
// "32" for run, "" for a command it does not name); any other default is returned as it is.
std::string default_of_command(const std::string& deflt, const std::string& command);
// Every command's --help shows its own default of such options, not every command's (call once, after
// every command is registered).
void show_each_commands_default(CLI::App& root);

// Declares `old_name` as the deprecated spelling of `new_name` on `cmd`: the value goes to `apply`, and
// a note on stderr says to use the new name. Its help starts with "deprecated:".
CLI::Option* deprecated(CLI::App* cmd, const std::string& old_name, const std::string& new_name,
                        std::function<void(const std::string&)> apply);
// The same for a flag.
CLI::Option* deprecated_flag(CLI::App* cmd, const std::string& old_name, const std::string& new_name, bool& value);

// `lobench options`: every option of every command, as Markdown (docs/options.md).
void register_options_command(CLI::App& app);

}  // namespace lobench::cli
