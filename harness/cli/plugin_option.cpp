#include "harness/cli/plugin_option.hpp"

#include <CLI/CLI.hpp>

#include "harness/cli/options.hpp"

namespace lobench::cli {

CLI::Option* add_plugin_option(CLI::App* cmd, std::vector<std::string>& paths) {
  CLI::Option* opt = cmd->add_option("--plugin", paths, "")
                         ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
                         ->type_name("PATH")
                         ->allow_extra_args(false);
  return shared(opt);
}

}  // namespace lobench::cli
