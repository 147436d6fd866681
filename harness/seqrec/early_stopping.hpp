// Early stopping on dev (`train-seqrec --early-stop PATIENCE --select METRIC`): the best evaluated epoch
// so far by the dev selection metric (strictly higher replaces it, so a tie keeps the earlier epoch) and
// the evaluations since it; the run stops after PATIENCE evaluations in a row without a new best. Its test
// metrics are what a run reports as "test at the best dev epoch" (S3-Rec's and SASRec's protocol: select
// on dev, report test). The metric: dev HR@10 (the default) or dev NDCG@20 (S3-Rec's code, whose
// EarlyStopping watches the last of its full-ranking scores, NDCG@20, with patience 10, every epoch).
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "harness/seqrec/seqrec_run_file.hpp"

namespace lobench::seqrec {

enum class SelectionMetric { hr_at_10, ndcg_at_20 };

// "hr@10" | "ndcg@20"; std::invalid_argument naming the valid ones otherwise.
inline SelectionMetric parse_selection_metric(const std::string& s) {
  if (s == "hr@10") return SelectionMetric::hr_at_10;
  if (s == "ndcg@20") return SelectionMetric::ndcg_at_20;
  throw std::invalid_argument("train-seqrec: --select must be hr@10 or ndcg@20, got '" + s + "'");
}

// The row's dev value of the metric (NaN when the epoch was not evaluated).
inline double dev_value(const EpochRow& e, SelectionMetric m) {
  return m == SelectionMetric::hr_at_10 ? e.dev_hr_at_10 : e.dev_ndcg_at_20;
}

class EarlyStopping {
 public:
  // patience 0: never stops, still tracks the best epoch.
  explicit EarlyStopping(int64_t patience = 0, SelectionMetric metric = SelectionMetric::hr_at_10)
      : patience_(patience), metric_(metric) {}

  // One epoch's row: ignored unless it was evaluated (the dev metric not NaN). True when the run should stop.
  bool observe(const EpochRow& e) {
    const double value = dev_value(e, metric_);
    if (!std::isfinite(value)) return false;
    if (!has_best() || value > dev_value(best_, metric_)) {
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
  SelectionMetric metric() const { return metric_; }
  // The state a checkpoint kept (seqrec_checkpoint.hpp).
  void restore(const EpochRow& best, int64_t since_best) {
    best_ = best;
    since_best_ = since_best;
  }

 private:
  int64_t patience_ = 0;
  SelectionMetric metric_ = SelectionMetric::hr_at_10;
  EpochRow best_{};
  int64_t since_best_ = 0;
};

}  // namespace lobench::seqrec
