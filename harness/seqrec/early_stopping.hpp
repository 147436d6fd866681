// Early stopping on dev (`train-seqrec --early-stop PATIENCE`): the best evaluated epoch so far by dev
// HR@10 (strictly higher replaces it, so a tie keeps the earlier epoch) and the evaluations since it; the
// run stops after PATIENCE evaluations in a row without a new best. Its test metrics are what a run
// reports as "test at the best dev epoch" (S3-Rec's and SASRec's protocol: select on dev, report test).
#pragma once

#include <cmath>
#include <cstdint>

#include "harness/seqrec/seqrec_run_file.hpp"

namespace lobench::seqrec {

class EarlyStopping {
 public:
  // patience 0: never stops, still tracks the best epoch.
  explicit EarlyStopping(int64_t patience = 0) : patience_(patience) {}

  // One epoch's row: ignored unless it was evaluated (dev HR@10 not NaN). True when the run should stop.
  bool observe(const EpochRow& e) {
    if (!std::isfinite(e.dev_hr_at_10)) return false;
    if (!has_best() || e.dev_hr_at_10 > best_.dev_hr_at_10) {
      best_ = e;
      since_best_ = 0;
      return false;
    }
    ++since_best_;
    return patience_ > 0 && since_best_ >= patience_;
  }
  bool has_best() const { return best_.epoch > 0; }
  const EpochRow& best() const { return best_; }   // epoch 0 when none
  int64_t since_best() const { return since_best_; }  // evaluations without a new best
  int64_t patience() const { return patience_; }
  // The state a checkpoint kept (seqrec_checkpoint.hpp).
  void restore(const EpochRow& best, int64_t since_best) {
    best_ = best;
    since_best_ = since_best;
  }

 private:
  int64_t patience_ = 0;
  EpochRow best_{};
  int64_t since_best_ = 0;
};

}  // namespace lobench::seqrec
