#include "harness/train/frontier_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <cmath>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <tuple>

#include "harness/io/interrupt_guard.hpp"
#include "harness/sweep/driver.hpp"
#include "harness/sweep/printers.hpp"
#include "harness/sweep/progress.hpp"
#include "harness/train/frontier_file.hpp"
#include "harness/train/frontier_search.hpp"

namespace lobench::train {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr const char* kBaselineTensor = "fp32";
constexpr const char* kBaselineRounding = "nearest_even";

// The searched metric of a run: "p@1" .. "psp@5" read from its last epoch.
struct MetricName {
  int which = 0;  // 0 p, 1 ndcg, 2 psp
  int at = 0;     // index of k in {1, 3, 5}
};
MetricName parse_metric(const std::string& name) {
  static const std::map<std::string, int> kinds = {{"p", 0}, {"ndcg", 1}, {"psp", 2}};
  static const std::map<std::string, int> ks = {{"1", 0}, {"3", 1}, {"5", 2}};
  const auto at = name.find('@');
  if (at != std::string::npos && kinds.count(name.substr(0, at)) && ks.count(name.substr(at + 1)))
    return {kinds.at(name.substr(0, at)), ks.at(name.substr(at + 1))};
  throw std::invalid_argument(fmt::format("--frontier-metric: '{}' is not one of p@k, ndcg@k, psp@k (k = 1, 3, 5)", name));
}
double metric_of(const MetricName& m, const EpochRecord& r) {
  const double* v[] = {r.p, r.ndcg, r.psp};
  return v[m.which][m.at];
}
std::string label(const std::string& metric) {
  std::string s = metric;
  if (s[0] == 'p' && s[1] == '@') s[0] = 'P';
  return s;
}
std::string pct(double x) { return std::isfinite(x) ? fmt::format("{:.2f}", 100 * x) : "n/a"; }
std::string pct_std(double mean, double std, int64_t n) {
  return std::isfinite(mean) ? fmt::format("{} ± {} % ({})", pct(mean), pct(std), n) : "-";
}

// A cell of the search: which tensor is narrow, in which format and rounding, and the seed. The fp32
// baseline's cells are (fp32, nearest_even, 0, 0, seed).
using CellKey = std::tuple<std::string, std::string, int, int, uint64_t>;
CellKey key_of(const FrontierCellRow& r) {
  return {r.tensor.str(), r.rounding.str(), int(r.exponent_bits), int(r.mantissa_bits), uint64_t(r.seed)};
}

// Raised inside a line's search when a signal arrives: the run in progress is dropped, every finished
// one is in the file.
struct StopSearch {};

// The configuration of one cell: the job's, with the narrow tensor's format and the rounding and seed
// set through the train-xmc axes (so a cell is exactly the run `train-xmc` makes of those values).
TrainConfig cell_config(const FrontierSpec& spec, const std::string& tensor, const std::string& format,
                        const std::string& rounding, uint64_t seed) {
  XmcSweepSpec s = spec.xmc;
  if (tensor == "clf") s.axes.set("clf-format", std::vector<std::string>{format});
  if (tensor == "grad") s.axes.set("grad-format", std::vector<std::string>{format});
  s.axes.set("rounding", std::vector<std::string>{rounding});
  s.axes.set("seeds", std::vector<std::string>{std::to_string(seed)});
  return expand_sweep(s).front().config;
}

std::vector<uint64_t> seeds_of(const FrontierSpec& spec) {
  std::vector<uint64_t> seeds;
  for (int64_t s : spec.xmc.axes.int_values("seeds")) seeds.push_back(uint64_t(s));
  return seeds;
}

// Predicted seconds of one run of config c: a short timed run (a few steps and one evaluation) scaled
// to the run's steps and evaluations.
double predicted_run_seconds(const data::TrainTest& d, TrainConfig c) {
  const int64_t steps_per_epoch = (d.train.rows() + c.batch - 1) / c.batch;
  int64_t steps = steps_per_epoch * c.epochs;
  if (c.max_steps > 0) steps = std::min(steps, c.max_steps);
  const int64_t evals = c.eval_every > 0 ? std::max<int64_t>(1, c.epochs / c.eval_every) : 1;
  c.epochs = 1;
  c.max_steps = std::min<int64_t>(steps_per_epoch, 8);
  c.eval_every = 0;
  const RunOutcome o = train_xmc(d, c);
  return double(steps) * o.mean_step_s + double(evals) * o.epochs.back().eval_s;
}

class FrontierJob : public sweep::SweepJob {
 public:
  FrontierJob(const FrontierSpec& spec, const Provenance& prov, std::ostream& out, std::ostream& err)
      : spec_(spec), prov_(prov), out_(out), err_(err), lines_(frontier_lines(spec)), seeds_(seeds_of(spec)),
        metric_(parse_metric(spec.metric)) {}

  int64_t size() const override { return int64_t(lines_.size()); }
  std::string describe(int64_t i) const override {
    return fmt::format("line {}: {}, m {}-{}", i, lines_[size_t(i)].describe(), spec_.mantissa_lo, spec_.mantissa_hi);
  }

  std::vector<sweep::PlannedPoint> plan(const std::vector<int64_t>& indices) override {
    std::vector<sweep::PlannedPoint> planned;
    const double runs = double(predicted_line_runs(spec_.mantissa_lo, spec_.mantissa_hi, int64_t(seeds_.size())));
    for (int64_t i : indices) planned.push_back({i, lines_[size_t(i)].describe(), runs});
    return planned;
  }

  void begin(const std::vector<sweep::PlannedPoint>& planned) override {
    data_ = load_xmc_dataset(spec_.xmc, spec_.xmc.axes.int_values("labels-total").front());
    FrontierHeader h;
    h.dataset = spec_.xmc.dataset;
    h.identity = frontier_identity(spec_);
    h.partition = spec_.xmc.partition.str();
    h.metric = spec_.metric;
    h.config = cell_config(spec_, kBaselineTensor, "fp32", kBaselineRounding, seeds_.front()).describe();
    h.lines = size();
    file_.emplace(spec_.out, prov_, h, spec_.xmc.overwrite, spec_.xmc.resume);
    for (const FrontierCellRow& r : file_->cells()) cache_[key_of(r)] = r.metric;
    for (const FrontierLineRow& r : file_->lines()) recorded_.insert(r.line);
    per_line_ = planned.empty() ? 0.0 : planned.front().work;
    for (const auto& p : planned) lines_left_ += recorded_.count(p.index) ? 0 : 1;
    int64_t baseline_left = 0;
    for (uint64_t seed : seeds_) baseline_left += cache_.count({kBaselineTensor, kBaselineRounding, 0, 0, seed}) ? 0 : 1;
    const double total = double(baseline_left) + double(lines_left_) * per_line_;
    progress_.emplace(spec_.xmc.progress ? err_ : discard(), total, int64_t(std::ceil(total)), "runs");
    out_ << fmt::format("frontier of {} on {}: {} lines of {} (partition {}), {} seeds, m {}-{} -> {}\n",
                        label(spec_.metric), spec_.xmc.dataset, planned.size(), size(), h.partition, seeds_.size(),
                        spec_.mantissa_lo, spec_.mantissa_hi, spec_.out)
         << std::flush;
  }

  bool recorded(const sweep::PlannedPoint& p) const override { return recorded_.count(p.index) > 0; }

  sweep::PointStatus execute(const sweep::PlannedPoint& p) override {
    const FrontierLine& line = lines_[size_t(p.index)];
    try {
      if (!baseline_) baseline_ = train_baseline();
      const int64_t failed_before = failed_;
      const LineSearch r = search_line(
          [&](int m, uint64_t seed) { return cell(p.index, line, m, seed); }, spec_.mantissa_lo, spec_.mantissa_hi,
          seeds_, baseline_->threshold());
      file_->append_line(line_row(p.index, line, r));
      out_ << fmt::format("line {} {}: {}\n", p.index, line.describe(), line_result(r)) << std::flush;
      --lines_left_;
      reestimate();
      return failed_ > failed_before ? sweep::PointStatus::failed : sweep::PointStatus::ok;
    } catch (const StopSearch&) {
      return sweep::PointStatus::interrupted;
    }
  }

  void end(const sweep::DriveResult& r) override {
    if (!file_) return;
    if (baseline_) {
      file_->set_attr("baseline_mean", baseline_->mean);
      file_->set_attr("baseline_std", baseline_->std);
      file_->set_attr("tolerance", baseline_->tolerance);
    }
    print_table();
    if (r.stopped_by != 0) out_kept_ = file_->close_interrupted();
    else file_->close();
  }

  std::string stopped_detail(const sweep::DriveResult& r) const override {
    if (!out_kept_)  // (--overwrite: the file is replaced only by a search that ends)
      return fmt::format("'{}' already existed and is kept as it was; this search's {} of {} finished lines are not "
                         "kept",
                         spec_.out, r.finished(), r.points);
    return fmt::format("{} of {} lines finished, every finished run kept in {}; continue with the same command and "
                       "--resume",
                       r.finished(), r.points, spec_.out);
  }

  int64_t failed_runs() const { return failed_; }

 private:
  static std::ostream& discard() {
    static std::ostream sink(nullptr);
    return sink;
  }

  // The metric of a cell: from the file when it is there, else trained now and appended.
  double cell(int64_t line, const FrontierLine& l, int m, uint64_t seed) {
    const CellKey key{l.tensor, l.rounding, l.exponent_bits, m, seed};
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    const std::string format = fmt::format("e{}m{}", l.exponent_bits, m);
    return train_cell(line, key, cell_config(spec_, l.tensor, format, l.rounding, seed));
  }

  double train_cell(int64_t line, const CellKey& key, const TrainConfig& c) {
    if (io::interrupt_signal()) throw StopSearch{};
    const auto& [tensor, rounding, e, m, seed] = key;
    FrontierCellRow row;
    row.line = line;
    row.tensor.set(tensor);
    row.rounding.set(rounding);
    row.exponent_bits = e;
    row.mantissa_bits = m;
    row.seed = int64_t(seed);
    row.metric = row.p_at_1 = row.p_at_3 = row.p_at_5 = row.ndcg_at_5 = row.psp_at_5 = row.train_loss = kNaN;
    const auto t0 = std::chrono::steady_clock::now();
    std::string why;
    try {
      const EpochFn stop_between_epochs = [](const EpochRecord&, const GradientHistogram*, const GradientHistogram*) {
        if (io::interrupt_signal()) throw StopSearch{};
      };
      const RunOutcome o = train_xmc(*data_, c, nullptr, stop_between_epochs);
      const EpochRecord& last = o.epochs.back();
      row.metric = metric_of(metric_, last);
      row.p_at_1 = last.p[0];
      row.p_at_3 = last.p[1];
      row.p_at_5 = last.p[2];
      row.ndcg_at_5 = last.ndcg[2];
      row.psp_at_5 = last.psp[2];
      row.train_loss = last.train_loss;
      row.weight_non_finite = last.weight_non_finite;
      row.status.set("ok");
    } catch (const std::exception& ex) {  // recorded as failed: its metric (NaN) fails the tolerance
      why = ex.what();
      row.status.set("failed");
      ++failed_;
    }
    row.run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    row.utc.set(utc_now());
    file_->append_cell(row);
    cache_[key] = row.metric;
    ++trained_;
    progress_->done(1.0);
    out_ << fmt::format("  {} {} {} seed {}: {} {} % ({:.1f} s){}\n", tensor,
                        tensor == kBaselineTensor ? "" : fmt::format("e{}m{}", e, m), rounding, seed,
                        label(spec_.metric), pct(row.metric), row.run_s, why.empty() ? "" : " FAILED: " + why)
         << std::flush;
    return row.metric;
  }

  FrontierBaseline train_baseline() {
    std::vector<double> metrics;
    for (uint64_t seed : seeds_) {
      const CellKey key{kBaselineTensor, kBaselineRounding, 0, 0, seed};
      auto it = cache_.find(key);
      metrics.push_back(it != cache_.end()
                            ? it->second
                            : train_cell(-1, key, cell_config(spec_, kBaselineTensor, "fp32", kBaselineRounding, seed)));
    }
    const FrontierBaseline b = frontier_baseline(metrics, spec_.k, spec_.floor);
    out_ << fmt::format("fp32 baseline: {} {} over {} seeds; tolerance {} % = max({} x std, {} %)\n",
                        label(spec_.metric), pct_std(b.mean, b.std, b.seeds), b.seeds, pct(b.tolerance), spec_.k,
                        pct(spec_.floor))
         << std::flush;
    return b;
  }

  FrontierLineRow line_row(int64_t index, const FrontierLine& l, const LineSearch& r) const {
    FrontierLineRow row;
    row.line = index;
    row.tensor.set(l.tensor);
    row.rounding.set(l.rounding);
    row.exponent_bits = l.exponent_bits;
    row.mantissa_bits = r.frontier;
    row.metric_at = r.metric_at;
    row.std_at = r.std_at;
    row.seeds_at = r.seeds_at;
    row.metric_below = r.metric_below;
    row.std_below = r.std_below;
    row.seeds_below = r.seeds_below;
    row.baseline_mean = baseline_->mean;
    row.baseline_std = baseline_->std;
    row.tolerance = baseline_->tolerance;
    row.runs = r.runs();
    return row;
  }

  std::string line_result(const LineSearch& r) const {
    if (r.frontier < 0)
      return fmt::format("no mantissa width in {}-{} keeps {} within tolerance ({} runs)", spec_.mantissa_lo,
                         spec_.mantissa_hi, label(spec_.metric), r.runs());
    return fmt::format("fewest mantissa bits {} ({} {}; one bit below: {}), {} runs", r.frontier, label(spec_.metric),
                       pct_std(r.metric_at, r.std_at, r.seeds_at), pct_std(r.metric_below, r.std_below, r.seeds_below),
                       r.runs());
  }

  // After a line: the runs in all are those trained so far plus the predicted runs of the lines left.
  void reestimate() {
    const double total = double(trained_) + double(lines_left_) * per_line_;
    progress_->set_total(total, int64_t(std::ceil(total)));
  }

  void print_table() const;

  const FrontierSpec& spec_;
  const Provenance& prov_;
  std::ostream& out_;
  std::ostream& err_;
  const std::vector<FrontierLine> lines_;
  const std::vector<uint64_t> seeds_;
  const MetricName metric_;
  std::optional<data::TrainTest> data_;
  std::optional<FrontierRunFile> file_;
  bool out_kept_ = true;  // the file holds this search's rows (false: a signal stopped an --overwrite search)
  std::optional<sweep::Progress> progress_;
  std::optional<FrontierBaseline> baseline_;
  std::map<CellKey, double> cache_;
  std::set<int64_t> recorded_;
  double per_line_ = 0;     // predicted runs of a line
  int64_t lines_left_ = 0;  // of this partition, not yet in the file
  int64_t trained_ = 0, failed_ = 0;
};

// The frontier table of the lines in the file: one row per line, then the fewest mantissa bits as
// exponent bits × (tensor, rounding).
void FrontierJob::print_table() const {
  std::vector<FrontierLineRow> rows = file_->lines();
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.line < b.line; });
  if (rows.empty()) return;
  const std::string m = label(spec_.metric);
  out_ << fmt::format("\nFrontier of {} on {} (fp32 {}; tolerance {} %):\n", m, spec_.xmc.dataset,
                      pct_std(rows[0].baseline_mean, rows[0].baseline_std, int64_t(seeds_.size())),
                      pct(rows[0].tolerance));
  out_ << fmt::format("{:<6} {:<14} {:>2} {:>8}  {:<26} {:<26} {:>4}\n", "tensor", "rounding", "e", "fewest m",
                      m + " at m", m + " at m-1", "runs");
  for (const auto& r : rows)
    out_ << fmt::format("{:<6} {:<14} {:>2} {:>8}  {:<26} {:<26} {:>4}\n", r.tensor.str(), r.rounding.str(),
                        r.exponent_bits, r.mantissa_bits < 0 ? fmt::format(">{}", spec_.mantissa_hi)
                                                             : std::to_string(r.mantissa_bits),
                        pct_std(r.metric_at, r.std_at, r.seeds_at), pct_std(r.metric_below, r.std_below, r.seeds_below),
                        r.runs);
  out_ << "\nFewest mantissa bits:\n" << fmt::format("{:<6} {:<14}", "tensor", "rounding");
  for (int e : spec_.exponents) out_ << fmt::format(" {:>4}", fmt::format("e{}", e));
  out_ << '\n';
  std::map<std::pair<std::string, std::string>, std::map<int, std::string>> grid;
  for (const auto& r : rows)
    grid[{r.tensor.str(), r.rounding.str()}][int(r.exponent_bits)] =
        r.mantissa_bits < 0 ? ">" + std::to_string(spec_.mantissa_hi) : std::to_string(r.mantissa_bits);
  for (const auto& [tr, by_e] : grid) {
    out_ << fmt::format("{:<6} {:<14}", tr.first, tr.second);
    for (int e : spec_.exponents) out_ << fmt::format(" {:>4}", by_e.count(e) ? by_e.at(e) : ".");
    out_ << '\n';
  }
  out_ << std::flush;
}

// --dry-run: the lines, the predicted runs and the seconds each (from a short timed run per tensor).
void dry_run(const FrontierSpec& spec, std::ostream& out) {
  const std::vector<FrontierLine> lines = frontier_lines(spec);
  const std::vector<int64_t> mine = sweep::partition_indices(int64_t(lines.size()), spec.xmc.partition);
  const std::vector<uint64_t> seeds = seeds_of(spec);
  const data::TrainTest d = load_xmc_dataset(spec.xmc, spec.xmc.axes.int_values("labels-total").front());
  const double fp32_s = predicted_run_seconds(d, cell_config(spec, kBaselineTensor, "fp32", kBaselineRounding, 0));
  std::map<std::string, double> narrow_s;  // a line's seconds: its tensor at the middle of the range
  const int64_t per_line = predicted_line_runs(spec.mantissa_lo, spec.mantissa_hi, int64_t(seeds.size()));
  double total_s = double(seeds.size()) * fp32_s;
  for (int64_t i : mine) {
    const FrontierLine& l = lines[size_t(i)];
    const std::string key = l.tensor + " " + l.rounding;
    if (!narrow_s.count(key)) {
      const std::string f = fmt::format("e{}m{}", l.exponent_bits, (spec.mantissa_lo + spec.mantissa_hi) / 2);
      narrow_s[key] = predicted_run_seconds(d, cell_config(spec, l.tensor, f, l.rounding, 0));
    }
    total_s += double(per_line) * narrow_s[key];
    out << fmt::format("line {}: {}: ~{} runs x {:.1f} s\n", i, l.describe(), per_line, narrow_s[key]);
  }
  const int64_t runs = int64_t(seeds.size()) + per_line * int64_t(mine.size());
  out << fmt::format("predicted: {} fp32 runs x {:.1f} s + {} lines x ~{} runs = ~{} training runs, ~{} on {} thread(s) "
                     "(seconds measured on a short run of each kind; the bisection's runs vary by line)\n",
                     seeds.size(), fp32_s, mine.size(), per_line, runs, sweep::format_duration(total_s),
                     spec.xmc.base.threads);
}

}  // namespace

std::string FrontierLine::describe() const { return fmt::format("{} {} e{}", tensor, rounding, exponent_bits); }

std::vector<FrontierLine> frontier_lines(const FrontierSpec& spec) {
  std::vector<FrontierLine> lines;
  for (const auto& t : spec.tensors)
    for (const auto& r : spec.xmc.axes.values("rounding"))
      for (int e : spec.exponents) lines.push_back({t, r, e});
  return lines;
}

void check_frontier_spec(const FrontierSpec& spec) {
  if (spec.tensors.empty()) throw std::invalid_argument("--frontier: name the tensors to search (clf, grad)");
  std::set<std::string> seen;
  for (const auto& t : spec.tensors) {
    if (t != "clf" && t != "grad")
      throw std::invalid_argument(fmt::format("--frontier: '{}' is not a tensor the search can narrow (clf: the "
                                              "classifier weights, grad: the logit gradient)", t));
    if (!seen.insert(t).second) throw std::invalid_argument(fmt::format("--frontier: '{}' is given twice", t));
    const char* axis = t == "clf" ? "clf-format" : "grad-format";
    if (spec.xmc.axes.values(axis) != std::vector<std::string>{"fp32"})
      throw std::invalid_argument(fmt::format("--frontier {}: the search sets --{} itself; do not give it", t, axis));
  }
  if (spec.exponents.empty()) throw std::invalid_argument("--frontier-exponents: give at least one exponent width");
  for (int e : spec.exponents)
    if (e < 2 || e > 8) throw std::invalid_argument(fmt::format("--frontier-exponents: {} is outside eXmY's 2-8", e));
  if (spec.mantissa_lo < 1 || spec.mantissa_hi > 23 || spec.mantissa_lo > spec.mantissa_hi)
    throw std::invalid_argument(fmt::format("--frontier-mantissas: {}-{} is not a range within eXmY's 1-23",
                                            spec.mantissa_lo, spec.mantissa_hi));
  parse_metric(spec.metric);
  if (!(spec.k >= 0) || !std::isfinite(spec.k))
    throw std::invalid_argument(fmt::format("--frontier-k: {} is not a finite number >= 0", spec.k));
  if (!(spec.floor >= 0) || !std::isfinite(spec.floor))
    throw std::invalid_argument(fmt::format("--frontier-floor: {} is not a finite number >= 0", spec.floor));
  for (const auto& axis : spec.xmc.axes.names())
    if (axis != "rounding" && axis != "seeds" && spec.xmc.axes.values(axis).size() > 1)
      throw std::invalid_argument(fmt::format("--frontier: --{} takes one value (the search sweeps the formats, "
                                              "--rounding and --seed only)", axis));
  if (spec.xmc.base.eval_every < 0)
    throw std::invalid_argument("--frontier: --eval-every -1 never evaluates; the search needs the last epoch's metric");
  // Every line's narrowest and widest cell is a valid train-xmc run (e.g. elmo_sr needs a packed format).
  for (const FrontierLine& l : frontier_lines(spec))
    for (int m : {spec.mantissa_lo, spec.mantissa_hi}) {
      try {
        cell_config(spec, l.tensor, fmt::format("e{}m{}", l.exponent_bits, m), l.rounding, 0);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(fmt::format("--frontier line {} at m = {}: {}", l.describe(), m, e.what()));
      }
    }
}

std::string frontier_identity(const FrontierSpec& s) {
  std::string tensors, exponents;
  for (const auto& t : s.tensors) tensors += (tensors.empty() ? "" : ",") + t;
  for (int e : s.exponents) exponents += fmt::format("{}{}", exponents.empty() ? "" : ",", e);
  return fmt::format("{}; frontier: tensors={}; exponents={}; mantissas={}-{}; metric={}; k={}; floor={}",
                     sweep_identity(s.xmc), tensors, exponents, s.mantissa_lo, s.mantissa_hi, s.metric, s.k, s.floor);
}

void list_frontier(const FrontierSpec& spec, std::ostream& out) {
  const Provenance none;
  const FrontierJob job(spec, none, out, out);
  sweep::list_points(job, spec.xmc.partition, out, "lines");
}

int run_frontier(const FrontierSpec& spec, const Provenance& prov, std::ostream& out, std::ostream& err) {
  check_frontier_spec(spec);
  sweep::refuse_with_resume(spec.xmc.resume, {{"--overwrite", spec.xmc.overwrite}, {"--dry-run", spec.xmc.dry_run}});
  if (spec.xmc.dry_run) {
    dry_run(spec, out);
    return 0;
  }
  if (spec.out.empty()) throw std::invalid_argument("--frontier: --out FILE is required (the search's one run file)");
  FrontierJob job(spec, prov, out, err);
  sweep::DriveSettings d;
  d.partition = spec.xmc.partition;
  d.resume = spec.xmc.resume;
  d.progress = nullptr;  // the job's own, by training run (a line's runs are known only as it goes)
  d.unit = "lines";
  const sweep::DriveResult r = sweep::drive(job, d);
  (void)r;
  return int(job.failed_runs());
}

}  // namespace lobench::train
