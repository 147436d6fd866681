// The training jobs' commands (`lobench train-xmc`, `lobench train-seqrec`, ...): one subcommand per job
// registered with LOBENCH_REGISTER_TRAINING_JOB (sweep/training_job.hpp), made from the job itself, so
// that a new job needs no line in main.cpp or commands.hpp.
#pragma once

#include "harness/cli/cli_fwd.hpp"

#include <functional>
#include <string>

namespace lobench::cli {

// Adds every registered job's command to `app`: its name, help, options and axes (TrainingJob::declare),
// a repeated option's last occurrence winning as for every lobench command; the command's callback runs
// the job (TrainingJob::run) with `argv` as its provenance and gives its exit status to `set_exit_code`.
void register_training_commands(CLI::App& app, const std::string& argv, const std::function<void(int)>& set_exit_code);

}  // namespace lobench::cli
