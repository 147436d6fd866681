#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/cli/commands.hpp"
#include "harness/plugin/plugin_loader.hpp"
#include "harness/sweep/python_peers.hpp"
#include "harness/cli/plugin_option.hpp"
#include "variants/variant.hpp"

namespace lobench {

void register_list_command(CLI::App& app) {
  auto plugins = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand("list", "List the registered variants, what each supports and where it comes from");
  cli::add_plugin_option(cmd, *plugins);
  cmd->callback([plugins] {
    plugin::load_plugins(*plugins);
    const Registry& registry = Registry::instance();
    fmt::print("{:<12} {:<8} {}\n", "variant", "backend", "description / supports");
    // A framework peer runs only in Python's engine; listed once, registered (loaded by it) or not.
    auto peer_line = [](const PythonPeer& p) {
      fmt::print("{:<21} Python peer: python -m lobench run --variants {} ({})\n", "", p.name, p.spec);
    };
    for (const Variant* v : registry.all()) {
      fmt::print("{:<12} {:<8} {}\n{:<21} supports: {}\n", v->name(), v->backend(), v->description(), "", v->supports());
      if (const std::string origin = registry.origin(*v); origin != "built-in") fmt::print("{:<21} origin: {}\n", "", origin);
      if (const PythonPeer* peer = find_python_peer(v->name())) peer_line(*peer);
    }
    for (const PythonPeer& p : python_peers()) {
      if (registry.find(p.name)) continue;
      fmt::print("{:<12} {:<8} {}\n", p.name, "python", p.description);
      peer_line(p);
    }
  });
}

}  // namespace lobench
