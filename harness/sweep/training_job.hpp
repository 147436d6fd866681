// A training job: a `lobench` command that trains one model per point of a sweep and records each point
// in its own run file (train-xmc, train-seqrec). A job is its folder (its model, its run file, its
// sweep: a sweep/run_folder_sweep.hpp job of the one driver) and one registration,
// LOBENCH_REGISTER_TRAINING_JOB, in the file that implements this interface. From the registration
//   - `lobench` makes the command (cli/training_commands.cpp): its name, help, options and axes;
//   - its run files are known by their `schema` attribute (io/job_files.hpp) to `lobench merge`,
//     `--resume` and `lobench schema` (SCHEMA.md's section for the job, generated from its tables);
//   - the Python reader (plots/lobench_results.py) reads them by the same attribute, with no list.
// docs/training.md ("Adding a training job") walks through a new job; the toy job of
// harness/tests/toy_training_job_test.cpp is the smallest complete one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness/io/job_files.hpp"

// CLI11's App, declared only: a job's declare() takes a pointer, and <CLI/CLI.hpp> (header-only, ~4 s of
// compile CPU a unit) is included by the files that define declare() and parse, not by every unit that
// registers or lists jobs (training_job.cpp, the sweeps). Declared here, not through harness/cli/cli_fwd.hpp:
// the sweep engine does not depend on the command line's folder.
namespace CLI {
class App;
}  // namespace CLI

namespace lobench::sweep {

class TrainingJob {
 public:
  virtual ~TrainingJob() = default;
  // The command's --help text.
  virtual std::string description() const = 0;
  // Declares the command's options on `cmd` (its axes through sweep::Axes::register_options, its fixed
  // options); what they parse into stays in the job until run().
  virtual void declare(CLI::App* cmd) = 0;
  // Runs what the parsed command line asks for: the sweep through sweep::drive (a run file a point,
  // --resume, --partition), or --list. `argv`: the command line, for the run files' provenance. Returns
  // the exit status (0; 1 when runs failed); throws std::invalid_argument for bad usage (exit status 2).
  virtual int run(const std::string& argv) = 0;
};

// The job's run files (name, tables, records) and a maker of a fresh job (one per `lobench` process).
struct TrainingJobEntry {
  const io::JobFiles& (*files)();
  std::unique_ptr<TrainingJob> (*make)();
};

// Registers the job and its run files (io::register_job_files). Returns true, for a static initialiser.
bool register_training_job(const TrainingJobEntry& entry);
// Every registered job, ordered by command name.
std::vector<TrainingJobEntry> training_jobs();

}  // namespace lobench::sweep

// In the job's own .cpp file (linked into the executable, so that its initialiser runs): Job has a
// default constructor and `static const io::JobFiles& run_files()`.
#define LOBENCH_REGISTER_TRAINING_JOB(Job)                                                                 \
  static const bool lobench_training_job_registered_##Job = ::lobench::sweep::register_training_job(       \
      {&Job::run_files, []() -> std::unique_ptr<::lobench::sweep::TrainingJob> { return std::make_unique<Job>(); }})
