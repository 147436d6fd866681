#include "harness/cli/training_commands.hpp"

#include <CLI/CLI.hpp>

#include <memory>

#include "harness/sweep/training_job.hpp"

namespace lobench::cli {

void register_training_commands(CLI::App& app, const std::string& argv, const std::function<void(int)>& set_exit_code) {
  for (const sweep::TrainingJobEntry& entry : sweep::training_jobs()) {
    std::shared_ptr<sweep::TrainingJob> job = entry.make();  // lives as long as its command's callback
    auto* cmd = app.add_subcommand(entry.files().command, job->description());
    cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    job->declare(cmd);
    cmd->callback([job, argv, set_exit_code] { set_exit_code(job->run(argv)); });
  }
}

}  // namespace lobench::cli
