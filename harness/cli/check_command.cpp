#include <fmt/format.h>

#include <memory>

#include "harness/check.hpp"
#include "harness/cli/commands.hpp"

namespace lobench {

void register_check_command(CLI::App& app, const std::string& argv) {
  struct Opts {
    std::string in, variant, out;
    int threads = 2;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "check",
      "Run one variant on your own inputs and write its outputs, to compare with your framework.\n"
      "IN: A float32 [P,D], E float32 [V,D], targets int32 [P,L] (ids outside [0,V) are padding),\n"
      "    optional weights float32 [P], optional string attribute 'reduction' (mean|sum, default mean).\n"
      "OUT: loss float64 scalar, per_position_loss float64 [P], dA float32 [P,D], dE float32 [V,D],\n"
      "     counts int64 [P,4] (TP, FP, FN, TN at logit > 0). On any error no OUT is left behind.");
  cmd->add_option("--in", o->in, "input HDF5 file")->required();
  cmd->add_option("--variant", o->variant, "variant to run (see `lobench list`)")->required();
  cmd->add_option("--out", o->out, "output HDF5 file")->required();
  cmd->add_option("--threads", o->threads, "threads")->capture_default_str();
  cmd->callback([o, argv] {
    run_check(o->in, o->variant, o->out, o->threads, argv);
    fmt::print("wrote {} (variant {})\n", o->out, o->variant);
  });
}

}  // namespace lobench
