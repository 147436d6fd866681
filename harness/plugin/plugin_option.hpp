// `--plugin PATH` (repeatable) for the commands that load plug-ins (run, list), and the loading of
// what it named: one declaration, so that the option reads the same everywhere (harness/cli/options.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace lobench::plugin {

CLI::Option* add_plugin_option(CLI::App* cmd, std::vector<std::string>& paths);

}  // namespace lobench::plugin
