#include "harness/sweep/training_job.hpp"

#include <algorithm>

namespace lobench::sweep {
namespace {

std::vector<TrainingJobEntry>& registry() {
  static std::vector<TrainingJobEntry> jobs;
  return jobs;
}

}  // namespace

bool register_training_job(const TrainingJobEntry& entry) {
  io::register_job_files(entry.files());  // throws for a second job of the same name
  registry().push_back(entry);
  return true;
}

std::vector<TrainingJobEntry> training_jobs() {
  std::vector<TrainingJobEntry> jobs = registry();
  std::sort(jobs.begin(), jobs.end(),
            [](const TrainingJobEntry& a, const TrainingJobEntry& b) { return a.files().command < b.files().command; });
  return jobs;
}

}  // namespace lobench::sweep
