#include <fmt/format.h>

#include "harness/cli/commands.hpp"
#include "variants/variant.hpp"

namespace lobench {

namespace {
int g_exit_code = 0;
}
void set_command_exit_code(int code) { g_exit_code = code; }
int command_exit_code() { return g_exit_code; }

void register_list_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List the registered variants and what each supports");
  cmd->callback([] {
    fmt::print("{:<12} {:<8} {}\n", "variant", "backend", "description / supports");
    for (const Variant* v : Registry::instance().all())
      fmt::print("{:<12} {:<8} {}\n{:<21} supports: {}\n", v->name(), v->backend(), v->description(), "", v->supports());
  });
}

}  // namespace lobench
