// `--plugin PATH` (repeatable) for the commands that load plug-ins (run, list): one declaration, so that
// the option reads the same everywhere (its help from the shared table, options.hpp). The loading of what
// it names is harness/plugin/plugin_loader.hpp, a layer below the command line (scripts/check_layers.py).
#pragma once

#include <string>
#include <vector>

#include "harness/cli/cli_fwd.hpp"

namespace lobench::cli {

CLI::Option* add_plugin_option(CLI::App* cmd, std::vector<std::string>& paths);

}  // namespace lobench::cli
