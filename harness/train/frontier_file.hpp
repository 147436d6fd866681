// The run file of a precision-frontier search (`lobench train-xmc --frontier`): one HDF5 file with
// provenance and the search's settings as root attributes, `/cells` (one row per training run: the
// fp32 baseline's and every cell the bisections asked for, appended, flushed and fsynced as each run
// ends) and `/frontier` (one row per finished line: the fewest mantissa bits with the metric at them
// and one bit below). Written by the one run-file writer (io/run_file_writer.hpp, Publish::at_start:
// readable while the search goes on); --resume copies it, keeps its cells (they are not trained again)
// and appends to the copy. Layout for readers: docs/formats.md ("The precision frontier").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness/io/fixed_text.hpp"
#include "harness/io/run_file_writer.hpp"
#include "harness/io/table_row.hpp"
#include "harness/provenance.hpp"

namespace lobench::train {

inline constexpr const char* kFrontierSchema = "lobench train-xmc frontier, version 1";

// /cells: X(type, name, default, unit, meaning). line -1 is the fp32 baseline.
#define LOBENCH_FRONTIER_CELL_COLUMNS(X)                                                                   \
  X(int64_t, line, 0, "", "the line (tensor, rounding, exponent bits) in the search's order; -1: fp32")     \
  X(io::FixedText<8>, tensor, {}, "", "clf (classifier weights) | grad (logit gradient) | fp32")            \
  X(io::FixedText<16>, rounding, {}, "", "the rounding of the narrow tensor")                               \
  X(int64_t, exponent_bits, 0, "", "of the narrow tensor's eXmY (0: fp32)")                                  \
  X(int64_t, mantissa_bits, 0, "", "of the narrow tensor's eXmY (0: fp32)")                                  \
  X(int64_t, seed, 0, "", "the run's seed")                                                                 \
  X(double, metric, 0, "", "the searched metric at the last epoch (NaN: the run failed)")                   \
  X(double, p_at_1, 0, "", "test precision@1")                                                             \
  X(double, p_at_3, 0, "", "test precision@3")                                                             \
  X(double, p_at_5, 0, "", "test precision@5")                                                             \
  X(double, ndcg_at_5, 0, "", "test nDCG@5")                                                               \
  X(double, psp_at_5, 0, "", "test propensity-scored precision@5")                                         \
  X(double, train_loss, 0, "nats/row", "last epoch's training loss")                                        \
  X(int64_t, weight_non_finite, 0, "", "classifier weights NaN or infinite at the end")                     \
  X(double, run_s, 0, "s", "wall time of the training run")                                                 \
  X(io::FixedText<8>, status, {}, "", "ok | failed")                                                        \
  X(io::FixedText<24>, utc, {}, "", "when the run ended (ISO 8601 UTC)")

struct FrontierCellRow {
  LOBENCH_ROW_MEMBERS(LOBENCH_FRONTIER_CELL_COLUMNS)
  static const std::vector<io::Column>& columns();
};

// /frontier: one row per line whose search finished.
#define LOBENCH_FRONTIER_LINE_COLUMNS(X)                                                                   \
  X(int64_t, line, 0, "", "the line in the search's order")                                                \
  X(io::FixedText<8>, tensor, {}, "", "clf | grad")                                                         \
  X(io::FixedText<16>, rounding, {}, "", "the rounding")                                                    \
  X(int64_t, exponent_bits, 0, "", "exponent bits of the line")                                             \
  X(int64_t, mantissa_bits, 0, "", "the fewest mantissa bits within tolerance; -1: none in the range")       \
  X(double, metric_at, 0, "", "mean metric over the seeds at mantissa_bits (NaN: none)")                   \
  X(double, std_at, 0, "", "its sample std over the seeds")                                                 \
  X(int64_t, seeds_at, 0, "", "seeds run at mantissa_bits")                                                 \
  X(double, metric_below, 0, "", "mean metric at mantissa_bits - 1 (NaN: below the range, or none)")        \
  X(double, std_below, 0, "", "its sample std")                                                             \
  X(int64_t, seeds_below, 0, "", "seeds run at mantissa_bits - 1")                                          \
  X(double, baseline_mean, 0, "", "fp32's mean metric over the seeds")                                      \
  X(double, baseline_std, 0, "", "fp32's sample std")                                                       \
  X(double, tolerance, 0, "", "max(k x baseline_std, floor): a cell passes at mean >= baseline_mean - tolerance") \
  X(int64_t, runs, 0, "", "training runs the line's search asked for (cells already in the file included)")

struct FrontierLineRow {
  LOBENCH_ROW_MEMBERS(LOBENCH_FRONTIER_LINE_COLUMNS)
  static const std::vector<io::Column>& columns();
};

// The settings attributes of a frontier file, written at creation and checked on --resume.
struct FrontierHeader {
  std::string dataset, identity, partition, metric, config;
  int64_t lines = 0;
};

class FrontierRunFile {
 public:
  // A new file (refused if `path` exists, unless overwrite), or with resume an existing one of the same
  // identity (refused otherwise, naming the file and the difference). Throws std::invalid_argument.
  FrontierRunFile(const std::string& path, const Provenance& prov, const FrontierHeader& header, bool overwrite,
                  bool resume);
  ~FrontierRunFile();
  // The cells and lines already in the file (a resume; empty for a new file).
  const std::vector<FrontierCellRow>& cells() const { return cells_; }
  const std::vector<FrontierLineRow>& lines() const { return lines_; }
  void append_cell(const FrontierCellRow& row);
  void append_line(const FrontierLineRow& row);
  void set_attr(const std::string& name, double value);
  void close();
  // The search stopped by a signal: a new or resumed file keeps its cells and lines (no end_utc); one
  // that was to replace an existing file (--overwrite) is removed unpublished and the file there stays
  // as it was. Returns whether the path holds this run's rows.
  bool close_interrupted();

  // The settings attributes of a frontier file (throws std::invalid_argument naming it when it is none).
  static FrontierHeader read_header(const std::string& path);
  static std::vector<FrontierCellRow> read_cells(const std::string& path);
  static std::vector<FrontierLineRow> read_lines(const std::string& path);

 private:
  std::unique_ptr<io::RunFileWriter> writer_;
  std::vector<FrontierCellRow> cells_;
  std::vector<FrontierLineRow> lines_;
};

}  // namespace lobench::train
