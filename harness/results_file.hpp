// The run file: one HDF5 file per run, provenance as root attributes, and a `/results` table with one
// row per (variant, point), appended and flushed as each completes (results/SCHEMA.md).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "h5_io.hpp"
#include "provenance.hpp"

namespace lobench {

constexpr int kMaxSamples = 64;  // time samples kept per row (reps is capped to this)

// One row of /results. Fixed-size strings keep the table a plain compound type that h5py reads as a
// NumPy structured array.
struct ResultRow {
  int64_t row_id = 0;
  char variant[32] = {};
  char backend[8] = {};
  int64_t B = 0, N = 0, P = 0, V = 0, D = 0, L = 0;
  char reduction[8] = {};
  int32_t weighted = 0;
  int64_t block_v = 0, block_p = 0;
  int32_t threads = 0;
  int64_t seed = 0;
  char e_format[24] = {};    // storage format of E ("fp32": plain float32)
  char e_rounding[20] = {};  // how E was rounded into it ("" for fp32)
  int64_t e_stored_bytes = 0;  // bytes of E as stored (packed codes); 0 for fp32
  char operand[8] = {};        // precision of the products' operands: fp32 | tf32 | bf16 ("" in old files: fp32)
  char status[8] = {};  // ok | skipped | failed
  char reason[192] = {};
  int32_t warmup = 0, reps = 0;
  double time_samples_s[kMaxSamples] = {};  // NaN beyond reps
  double time_median_s = 0, time_min_s = 0, time_max_s = 0;
  double flops = 0;             // 6·P·V·D: the useful work of one step, whatever the algorithm
  double effective_gflops = 0;  // flops / median time
  double gemm_gflops = 0;       // the machine's SGEMM rate measured in this run for this (P, D)
  double gemm_fraction = 0;     // effective_gflops / gemm_gflops
  int64_t peak_bytes = 0;       // measured by the counting allocator (working memory)
  int64_t predicted_bytes = 0;  // the variant's analytic model
  int64_t peak_device_bytes = -1;  // GPU rows: the device's own view of the peak (cudaMemGetInfo); -1: not measured
  int64_t input_bytes = 0, output_bytes = 0;
  double loss = 0, ref_loss = 0;
  double rel_loss_err = 0, rel_dA_err = 0, rel_dE_err = 0;  // vs the reference on the original E (NaN: not computed)
  // vs the reference on E as the variant read it (decoded from its storage format): what the kernel
  // costs, where the errors above also hold what the format costs. Equal to them for fp32.
  double rel_loss_err_kernel = 0, rel_dA_err_kernel = 0, rel_dE_err_kernel = 0;
  int64_t counts_mismatch = -1;  // positions with different TP/FP/FN/TN away from 0 (-1: not computed)
  char utc[24] = {};

  void set_variant(const std::string& s);
  void set_backend(const std::string& s);
  void set_reduction(const std::string& s);
  void set_status(const std::string& s);
  void set_e_format(const std::string& s);
  void set_e_rounding(const std::string& s);
  void set_operand(const std::string& s);
  void set_reason(const std::string& s);
  // The identity of a point for --resume: variant, backend, shape, options (operand included; an
  // empty operand, as read from files written before the column existed, counts as fp32) and seed.
  std::string key() const;
};

class ResultsFile {
 public:
  // Creates `path` (truncating) with provenance; or, with resume and an existing file, reopens it,
  // reads the rows already there, and appends after them.
  ResultsFile(const std::string& path, const Provenance& prov, bool resume);
  ~ResultsFile();

  bool has(const std::string& key) const { return keys_.count(key) > 0; }
  int64_t rows() const { return table_.rows(); }
  // Sets row_id; flushed to disk before returning. In a resumed file written before the operand
  // column existed, a row with a non-fp32 operand throws h5::Error instead of losing it.
  void append(ResultRow row);
  void set_attr(const std::string& name, double v);
  void set_attr(const std::string& name, const std::string& v);
  void close(const std::string& end_utc);

  // Reads by member name: a file written before a column existed reads with that column at its
  // default (operand "", peak_device_bytes -1), so older run files stay readable and resumable.
  static std::vector<ResultRow> read_all(const std::string& path);

 private:
  h5::Handle file_;
  h5::Table table_;  // /results
  std::set<std::string> keys_;
  std::string path_;
};

}  // namespace lobench
