// `lobench train-xmc --frontier TENSORS`: the precision frontier of a train-xmc job, found by search
// instead of a hand-made grid. For each line (tensor × rounding × exponent width) the fewest mantissa
// bits whose metric stays within tolerance of fp32's (frontier_search.hpp: bisection, the boundary
// checked on every seed). Every cell is one train-xmc run (the same configuration expand_sweep makes,
// trained by train_xmc) recorded as a row of one run file (frontier_file.hpp).
//
// A line is a point of the one sweep driver (sweep/driver.hpp), so `--partition K/N` deals whole lines
// (the bisection is sequential within a line), `--resume` keeps the lines and cells already in the file
// (a cell there is never trained again), a signal stops between runs with every finished run kept, and
// `--list` prints the lines. Every partition trains the fp32 baseline itself (the same seeds give the
// same runs, bit for bit). --dry-run trains nothing beyond a short timing run and prints the predicted
// work: runs × seconds each.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "harness/provenance.hpp"
#include "harness/train/xmc_sweep.hpp"

namespace lobench::train {

struct FrontierSpec {
  // The train-xmc job: dataset, fixed options (one value per axis), threads, partition, resume,
  // overwrite, dry_run, progress. Its `rounding` axis lists the roundings searched and its `seeds` the
  // seeds of the baseline and of the boundary (the first seed alone probes the bisection).
  XmcSweepSpec xmc;
  std::vector<std::string> tensors = {"clf"};  // clf (the classifier weights) | grad (the logit gradient)
  std::vector<int> exponents = {2, 3, 4, 5};
  int mantissa_lo = 1, mantissa_hi = 10;
  std::string metric = "p@1";  // p@k, ndcg@k, psp@k with k in 1, 3, 5: at the last epoch
  double k = 2.0;              // tolerance = max(k × fp32's seed std, floor)
  double floor = 0.005;
  std::string out;  // the run file
};

// One line of the search.
struct FrontierLine {
  std::string tensor, rounding;
  int exponent_bits = 0;
  std::string describe() const;  // "clf stochastic e3"
};
std::vector<FrontierLine> frontier_lines(const FrontierSpec& spec);

// Throws std::invalid_argument naming the option for a spec that cannot be searched (a swept axis other
// than rounding and seeds, an axis the search sets given explicitly, formats outside eXmY's range, an
// unknown metric or tensor, no evaluation).
void check_frontier_spec(const FrontierSpec& spec);

// What makes two frontier processes parts of the same search (recorded as the file's `frontier`).
std::string frontier_identity(const FrontierSpec& spec);

// --list: the lines of spec's partition, then "N lines".
void list_frontier(const FrontierSpec& spec, std::ostream& out);

// Runs the search (or with dry_run predicts it). Returns the number of failed training runs.
int run_frontier(const FrontierSpec& spec, const Provenance& prov, std::ostream& out, std::ostream& err);

}  // namespace lobench::train
