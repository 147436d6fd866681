#include "harness/cli/options.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <regex>
#include <stdexcept>

#include "harness/cli/commands.hpp"

namespace lobench::cli {

const std::vector<SharedOption>& shared_options() {
  static const std::vector<SharedOption> table = {
      // Output and the run's files
      {"--out", "the file to write", "path", "", "a path that is not an input", "the file to write"},
      {"--out-dir", "the folder of the run files", "path", "", "a folder",
       "the folder of the run files, one HDF5 file per run"},
      {"--overwrite", "replace existing outputs", "", "off", "",
       "replace output files that exist instead of refusing before anything runs"},
      {"--resume", "continue a sweep", "", "off", "",
       "continue an interrupted sweep: keep what its run file(s) hold, run the rest"},
      {"--format", "what stdout gets", "", "text", "text, csv, jsonl (compare: also markdown)",
       "what stdout gets: text (a table for people), csv or jsonl (one line per row, for scripts)"},
      {"--quiet", "no progress lines", "", "off", "", "no progress lines on stderr"},
      {"--list", "print the sweep and exit", "", "off", "",
       "print what the sweep would run, one line each, and exit; writes nothing"},
      {"--dry-run", "predict, do not run", "", "off", "",
       "predict every run's memory and record it (in the command's output file or folder, when given) without "
       "running anything"},
      {"--partition", "one part of a job array", "K/N", "0/1", "0 <= K < N",
       "make only the runs i of the sweep with i % N == K (one part of a job array; `lobench merge` joins the parts)"},
      {"--plugin", "load a plug-in library", "path", "", "a shared library defining lobench_register_v1",
       "load the variants of a plug-in (a shared library built with lobench_add_plugin; docs/plugins.md); "
       "repeat it for several (LOBENCH_PLUGIN_PATH adds more)"},
      {"--shard", "split each run over MPI ranks", "", "", "see the command",
       "split each run over the MPI ranks of `mpirun -np R lobench ...`; rank 0 writes the files"},
      // Resources
      {"--threads", "threads of each step", "threads", "all cores", "1 to 1024", "threads of each step"},
      {"--mem-limit", "host memory limit", "bytes, a unit required: 20G, 512M, 1.5GiB", "memory available now minus max(1 GiB, 10 %)",
       "1B to 1P",
       "work predicted to need more host memory than this is skipped (sweeps: recorded as skipped with its "
       "prediction) or refused (check, quantize)"},
      {"--gpu-mem-limit", "GPU memory limit", "bytes, a unit required: 80G", "the device's free memory at start minus max(1 GiB, 5 % of its total)",
       "1B to 1P", "GPU variants: points whose device bytes (working set, inputs and outputs) exceed this are skipped"},
      // Randomness and data
      {"--seed", "seed of the random draws", "", "0", "integers >= 0",
       "seed of every random draw (inputs or initialisation, shuffling, dropout, stochastic rounding): the same "
       "seed, the same numbers"},
      {"--dataset", "the training data", "", "", "a public set, a path, synthetic:PRESET",
       "the training data: a public set's name (read under --data-dir and verified), a file path, or synthetic:PRESET"},
      {"--data-dir", "the data folder", "path", "$LOBENCH_DATA", "an existing folder",
       "the data folder holding the public sets (or their kind's folder itself); no other folder is looked at"},
      {"--no-verify", "skip the data sets' checksums", "", "off (LOBENCH_NO_VERIFY=1: on)", "",
       "do not check a public set's files against their published sizes and SHA-256 (a modified copy)"},
      {"--syn-scale", "size of synthetic data", "fraction", "train-xmc: 0.01, train-seqrec: 1", "> 0",
       "synthetic data: the fraction of the preset's size to generate"},
      {"--in", "the input file", "path", "", "an HDF5 file", "the input HDF5 file"},
      // The problem's shape and the loss
      {"--B", "batch", "sequences", "run: 32, train-seqrec: 8", ">= 1", "sequences per step (positions P = B·N)"},
      {"--N", "sequence length", "positions", "run: 32, train-seqrec: 256", ">= 1", "positions per sequence"},
      {"--D", "hidden size", "", "run: 128, train-seqrec: 256", ">= 1", "hidden size: the width of A and E"},
      {"--L", "targets per position", "", "8", ">= 1", "target ids per position"},
      {"--variant", "the loss variant", "", "", "`lobench list`",
       "the loss variant (dense, chunked, fused, ...; `lobench list` shows them)"},
      {"--reduction", "the loss's reduction", "", "mean", "mean, sum (train-seqrec: also mean_positions)",
       "mean (over positions and V: Keras, Cut BCE) or sum (ELMO) of the per-entry losses"},
      {"--block-v", "vocabulary block", "entries of V", "0", ">= 0", "the loss variant's vocabulary block (0: the variant chooses)"},
      {"--rounding", "rounding into a number format", "", "nearest_even (rne)", "see the command",
       "rounding into the number format: nearest (nearest_even) or stochastic, among others"},
      {"--operand", "precision of the products' operands", "", "fp32",
       "fp32, bf16, e4m3, e5m2 (run: also tf32; train-seqrec: fp32, bf16)",
       "precision of the products' operands, accumulated in float32: fp32, or bf16 (the embeddings or hidden states, "
       "the weights or output table and the logit gradient rounded to bfloat16, nearest-even; on the CPU through "
       "AVX512_BF16 or AMX-BF16, recorded as skipped with the reason where the CPU has neither), or e4m3 / e5m2 (OCP "
       "FP8 E4M3 (e4m3fn, max 448) / E5M2: each of the two matrices scaled by a power of two from its max |value| and "
       "rounded nearest-even, the logit gradient bfloat16, the same bf16 products; docs/method.md); not a storage "
       "format"},
      // Training
      {"--epochs", "epochs", "epochs", "train-xmc: 20, train-seqrec: 1", ">= 1", "epochs over the training data"},
      {"--eval-every", "evaluation period", "epochs", "1", ">= -1", "evaluate every N epochs (0: the last only, -1: never)"},
      {"--dropout", "dropout probability", "probability", "train-xmc: 0.5, train-seqrec: 0.1", "[0, 1)",
       "dropout probability"},
      {"--warmup-steps", "learning-rate warm-up", "optimizer steps", "0", ">= 0",
       "linear learning-rate warm-up over this many optimizer steps"},
  };
  return table;
}

const SharedOption& shared_option(const std::string& name) {
  for (const SharedOption& o : shared_options())
    if (o.name == name) return o;
  throw std::logic_error("no shared option " + name);
}

std::string default_of_command(const std::string& deflt, const std::string& command) {
  // "run: 32, train-seqrec: 8": every part "COMMAND: VALUE"; anything else is one default for all.
  static const std::regex part(R"(([a-z][a-z-]*): ([^,]+)(, |$))");
  std::string mine;
  size_t at = 0;
  for (std::sregex_iterator it(deflt.begin(), deflt.end(), part), end; it != end; ++it) {
    if (size_t(it->position()) != at) return deflt;
    if ((*it)[1] == command) mine = (*it)[2];
    at = it->position() + it->length();
  }
  return at == deflt.size() && at > 0 ? mine : deflt;
}

void show_each_commands_default(CLI::App& root) {
  for (CLI::App* cmd : root.get_subcommands([](const CLI::App*) { return true; }))
    for (CLI::Option* opt : cmd->get_options()) {
      if (opt->get_lnames().empty()) continue;
      const auto it = std::find_if(shared_options().begin(), shared_options().end(),
                                   [&](const SharedOption& s) { return s.name == "--" + opt->get_lnames().front(); });
      if (it == shared_options().end()) continue;
      const std::string all = " (default: " + it->deflt + ")", mine = default_of_command(it->deflt, cmd->get_name());
      std::string help = opt->get_description();
      if (mine == it->deflt || help.size() < all.size() || help.compare(help.size() - all.size(), all.size(), all) != 0)
        continue;
      help.resize(help.size() - all.size());
      opt->description(mine.empty() ? help : help + " (default: " + mine + ")");
    }
}

CLI::Option* shared(CLI::Option* opt, const std::string& detail) {
  const SharedOption& s = shared_option("--" + opt->get_lnames().front());
  std::string help = s.help;
  if (!detail.empty()) help += "; " + detail;
  if (!s.deflt.empty() && s.deflt != "off") help += " (default: " + s.deflt + ")";
  opt->description(help);
  opt->default_str("");  // the default is the table's, in the help text
  return opt;
}

CLI::Option* deprecated(CLI::App* cmd, const std::string& old_name, const std::string& new_name,
                        std::function<void(const std::string&)> apply) {
  const std::string name = cmd->get_name();
  return cmd->add_option_function<std::string>(
      old_name,
      [=](const std::string& v) {
        fmt::print(stderr, "lobench {}: {} is deprecated and will be removed in the next release; use {}\n", name,
                   old_name, new_name);
        apply(v);
      },
      "deprecated: the old spelling of " + new_name);
}

CLI::Option* deprecated_flag(CLI::App* cmd, const std::string& old_name, const std::string& new_name, bool& value) {
  const std::string name = cmd->get_name();
  return cmd->add_flag_callback(
      old_name,
      [=, &value] {
        fmt::print(stderr, "lobench {}: {} is deprecated and will be removed in the next release; use {}\n", name,
                   old_name, new_name);
        value = true;
      },
      "deprecated: the old spelling of " + new_name);
}

namespace {

std::string cell(std::string s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
  return out;
}

// name -> the commands that declare it (in the order of `lobench --help`).
std::map<std::string, std::vector<const CLI::Option*>> options_by_name(const CLI::App& root,
                                                                      std::map<const CLI::Option*, std::string>& owner) {
  std::map<std::string, std::vector<const CLI::Option*>> by_name;
  for (const CLI::App* sub : root.get_subcommands([](const CLI::App*) { return true; }))
    for (const CLI::Option* o : sub->get_options()) {
      if (o->get_lnames().empty() || o->get_lnames().front() == "help") continue;
      by_name["--" + o->get_lnames().front()].push_back(o);
      owner[o] = sub->get_name();
    }
  return by_name;
}

std::string commands_of(const std::vector<const CLI::Option*>& opts, std::map<const CLI::Option*, std::string>& owner) {
  std::string out;
  for (const CLI::Option* o : opts)
    if (o->get_description().rfind("deprecated:", 0) != 0) out += (out.empty() ? "" : ", ") + owner[o];
  return out;
}

void print_table(const CLI::App& root) {
  std::map<const CLI::Option*, std::string> owner;
  auto by_name = options_by_name(root, owner);
  fmt::print("## Shared options\n\nThe same name means the same thing in every command that takes it; a command may "
             "add a detail after the shared help (`lobench COMMAND --help`).\n\n"
             "| option | commands | meaning | unit | default | range | help |\n|---|---|---|---|---|---|---|\n");
  for (const SharedOption& s : shared_options()) {
    const auto it = by_name.find(s.name);
    fmt::print("| `{}` | {} | {} | {} | {} | {} | {} |\n", s.name,
               it == by_name.end() ? "" : commands_of(it->second, owner), cell(s.meaning), cell(s.unit),
               cell(s.deflt), cell(s.range), cell(s.help));
  }
  fmt::print("\n## Options of one command\n\n| option | command | default | help |\n|---|---|---|---|\n");
  std::vector<std::pair<std::string, std::string>> old;
  for (const auto& [name, opts] : by_name) {
    const bool is_shared = std::any_of(shared_options().begin(), shared_options().end(),
                                       [&](const SharedOption& s) { return s.name == name; });
    for (const CLI::Option* o : opts) {
      if (o->get_description().rfind("deprecated:", 0) == 0) {
        old.emplace_back(name, owner[o] + ": " + o->get_description().substr(12));
        continue;
      }
      if (is_shared) continue;
      fmt::print("| `{}` | {} | {} | {} |\n", name, owner[o], cell(o->get_default_str()), cell(o->get_description()));
    }
  }
  fmt::print("\n## Old spellings\n\nAccepted for one release with a note on stderr.\n\n| old | now |\n|---|---|\n");
  for (const auto& [name, now] : old) fmt::print("| `{}` | {} |\n", name, cell(now));
}

}  // namespace

void register_options_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("options",
                                 "Print every option of every command as Markdown (what docs/options.md holds): the "
                                 "shared ones once, with the commands that take them.");
  cmd->callback([cmd] {
    print_table(*cmd->get_parent());
    set_command_exit_code(0);
  });
}

}  // namespace lobench::cli
