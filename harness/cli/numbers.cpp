#include "harness/cli/numbers.hpp"

#include <CLI/CLI.hpp>

namespace lobench::cli {

void accept_count_notation(CLI::App& app) {
  for (CLI::Option* o : app.get_options()) {
    const std::string type = o->get_type_name();
    if (type == "FLOAT") {  // CLI11 reads 0x0.8 as 0.5: numbers on a command line are decimal
      o->transform(CLI::Validator(
          [](std::string& text) -> std::string {
            if (text.find_first_of("xXpP") == std::string::npos) return "";
            return "'" + text + "' is not a decimal number (examples: 0.5, 1e-3)";
          },
          "", "decimal"));
      continue;
    }
    if (type != "INT" && type != "UINT") continue;
    o->transform(CLI::Validator(
        [](std::string& text) -> std::string {
          const bool plain = config::all_digits(text.substr(!text.empty() && (text[0] == '-' || text[0] == '+')));
          if (plain) return "";  // left to CLI11 as before (a uint64 seed may exceed int64)
          int64_t v = 0;
          if (auto why = config::count_value(text, v)) return *why;
          text = std::to_string(v);
          return "";
        },
        "", "count"));
  }
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) accept_count_notation(*sub);
}

}  // namespace lobench::cli
