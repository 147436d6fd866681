// `lobench compare BASE CANDIDATE`: the performance gate's comparison of two benchmark runs (Google
// Benchmark JSON or lobench run files), per benchmark the ratio of medians, its bootstrap interval, the
// Mann–Whitney p-value and a verdict, exit status 1 when one is slower beyond the threshold.
//
// The statistics live once, in Python (plots/perf_stats.py, read through plots/perf_runs.py and printed
// by plots/perf_compare.py), because the dashboard's regression markers and scripts/bench_check.sh use the
// same test on the same metric: a second implementation here could drift from them, and then the gate and
// the dashboard would disagree about the same pair of runs. This command checks its options, then runs
// that script ($LOBENCH_PYTHON, default python3) and waits for it. The script is asked to end with 10 + its
// status (--exit-offset 10); any other ending, a traceback's 1, a signal or a "Python" that does nothing
// and exits 0 (LOBENCH_PYTHON=/bin/true), is not a verdict: exit 2 with one line saying so. (Without this,
// a crash would read as "slower" and a missing interpreter as "pass".)
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/cli/args_file.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/options.hpp"

namespace lobench {
namespace {

struct CompareOptions {
  std::string base, candidate, format = "text", filter, clock = "cpu";
  double threshold = 10.0, alpha = 0.05;
  bool allow_untested = false;
};

constexpr int kExitOffset = 10;

int run_compare_script(const CompareOptions& o) {
  const char* python_env = std::getenv("LOBENCH_PYTHON");
  const std::string python = python_env && *python_env ? python_env : "python3";
  const std::string script = repository_path("plots/perf_compare.py");
  std::vector<std::string> words = {python, script, o.base, o.candidate, "--threshold", fmt::format("{}", o.threshold),
                                    "--alpha", fmt::format("{}", o.alpha), "--format", o.format,
                                    "--clock", o.clock, "--exit-offset", std::to_string(kExitOffset)};
  if (!o.filter.empty()) words.insert(words.end(), {"--filter", o.filter});
  if (o.allow_untested) words.push_back("--allow-untested");
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(fmt::format("compare: cannot start {} ({})", python, std::strerror(errno)));
  if (pid == 0) {
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "lobench compare: cannot run %s (%s); set LOBENCH_PYTHON to a Python with numpy, h5py and pandas\n",
                 python.c_str(), std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(fmt::format("compare: waiting for {}: {}", python, std::strerror(errno)));
  }
  if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    if (code >= kExitOffset && code <= kExitOffset + 2) return code - kExitOffset;
    if (code == 2) return 2;  // the script's own usage refusal before it parsed --exit-offset (e.g. no numpy)
    std::fprintf(stderr, "lobench compare: no verdict: %s %s ended with exit status %d without finishing the comparison\n",
                 python.c_str(), script.c_str(), code);
    return 2;
  }
  std::fprintf(stderr, "lobench compare: no verdict: %s %s was killed by signal %d\n", python.c_str(), script.c_str(),
               WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return 2;
}

}  // namespace

void register_compare_command(CLI::App& app) {
  auto o = std::make_shared<CompareOptions>();
  auto* cmd = app.add_subcommand(
      "compare",
      "Compare the repetitions of the same benchmarks in a baseline and a candidate run (Google Benchmark JSON, e.g.\n"
      "step_bench's, or lobench run files), each as time relative to the yardstick measured in its own run. Per\n"
      "benchmark: the ratio of medians CANDIDATE / BASE, its 95 % bootstrap interval, the Mann-Whitney U p-value,\n"
      "the noise of each side and a verdict: slower (ratio > 1 + threshold and p < alpha), faster, same.\n"
      "Exit status: 0 none slower, 1 a benchmark slower, 2 usage (bad file, nothing in common, too few repetitions).");
  cmd->add_option("BASE", o->base, "the baseline run")->required();
  cmd->add_option("CANDIDATE", o->candidate, "the candidate run")->required();
  cmd->add_option("--threshold", o->threshold, "percent slower that fails (default 10)")->check(CLI::Range(0.0, 999.0));
  cmd->add_option("--alpha", o->alpha, "significance level of the U test (default 0.05)")
      ->check(CLI::Range(1e-9, 0.999999));
  // --format means what stdout gets, as in every command (harness/cli/options: its help and default).
  cli::shared(cmd->add_option("--format", o->format, "")->check(CLI::IsMember({"text", "csv", "jsonl", "markdown"})),
              "or markdown (a PR comment)");
  cmd->add_option("--clock", o->clock, "step_bench JSON: process CPU time (cpu, default) or wall time (wall)")
      ->check(CLI::IsMember({"cpu", "wall"}));
  cmd->add_option("--filter", o->filter, "only benchmarks whose name contains this");
  cmd->add_flag("--allow-untested", o->allow_untested,
                "exit 0 rather than 2 when benchmarks have too few repetitions to be tested");
  cmd->callback([o] { set_command_exit_code(run_compare_script(*o)); });
}

}  // namespace lobench
