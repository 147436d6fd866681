// The row of a run file's /results table, defined once (io/table_row.hpp). This list generates the C++
// struct, the HDF5 compound type (results_file.cpp), the schema document results/SCHEMA.md (`lobench schema`, checked
// by a test) and what the Python reader (plots/lobench_results.py) is told through the file itself.
//
// Every change of columns increases kSchemaVersion and says what changed in kSchemaHistory; files of every
// earlier version still read and resume (results_file.cpp, tests keep one small file of each version).
// The columns before `status` are a row's identity (identity_columns(): the resume and merge key), the
// columns of the sweep's axes (sweep/run_axes.cpp) among them.
// Measurements that were not taken are NaN (never 0): a skipped row has NaN times, bytes and errors.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "harness/io/fixed_text.hpp"
#include "harness/io/table_row.hpp"

namespace lobench::io {

inline constexpr int64_t kSchemaVersion = 5;
// What each earlier version lacked or wrote otherwise (results/SCHEMA.md): a change of columns adds its
// sentence here.
inline constexpr const char* kSchemaHistory =
    "Files of every earlier schema version still read and resume. Version 1 (before this list was the one\n"
    "definition) kept the samples in a `time_samples_s` float64[64] column, and wrote 0 (sizes) or −1\n"
    "(`peak_device_bytes`, `counts_mismatch`) for measurements not taken; the reader turns those into NaN\n"
    "and the samples into `/samples` rows. A resumed version-1 file keeps its layout. Version 2 lacked the\n"
    "columns of the measurement yardsticks and meters (`fma_peak_gflops`, `local_gemm_before_gflops`,\n"
    "`local_gemm_after_gflops`, `flags`, `rss_growth_bytes`, `rank_time_min_s`, `rank_time_max_s`): they read\n"
    "as NaN (empty `flags`), and its `gemm_gflops` is the SGEMM rate of the point's tile shape, not the\n"
    "machine's best. A resumed version-2 file keeps its layout (the newer columns are not stored). Version 3\n"
    "lacked `origin`, `timing_source` and `memory_meter`: they read empty (its rows are built-ins, C++ plug-ins\n"
    "named in the `plugins` attribute, or Python variants, backend `python`, whose `peak_bytes` is their RSS\n"
    "growth); a resumed version-3 file keeps its layout. Version 4 lacked `epilogue` (its rows are fp32's: it\n"
    "reads empty, which the row key counts as fp32; a row of another epilogue cannot be appended to such a\n"
    "file) and `shape_gemm_gflops`: it reads as NaN,\n"
    "and its `gemm_gflops` is the machine's best square SGEMM alone (which `fused` could exceed at shapes where\n"
    "its products run faster than the square product: 100–101 % at D = 256 on a Zen 5); a resumed version-4\n"
    "file keeps its layout.";
inline constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

using Text8 = FixedText<8>;
using Text16 = FixedText<16>;
using Text24 = FixedText<24>;
using Text32 = FixedText<32>;
using Text192 = FixedText<192>;
using Text256 = FixedText<256>;

// X(type, name, default, unit, meaning)
#define LOBENCH_RESULT_COLUMNS(X)                                                                                  \
  X(int64_t, row_id, 0, "", "order of completion, from 0; the key of /samples")                                    \
  X(Text32, variant, {}, "", "the variant (`lobench list`): built-in, a plug-in's or a Python variant's (the "      \
                             "framework peers `jax_dense`, `torch_dense`, ... among them; `origin` says which)")    \
  X(Text8, backend, {}, "", "`cpu`, `cuda` or `python` (a Python variant); `peer` in files before version 4 (the "  \
                            "former peer scripts, rows without reference errors)")                                  \
  X(int64_t, B, 0, "", "batch size")                                                                                \
  X(int64_t, N, 0, "", "sequence length")                                                                           \
  X(int64_t, P, 0, "", "positions, P = B·N")                                                                        \
  X(int64_t, V, 0, "", "vocabulary size")                                                                           \
  X(int64_t, D, 0, "", "hidden size")                                                                               \
  X(int64_t, L, 0, "", "target ids per position")                                                                   \
  X(Text8, reduction, {}, "", "`mean` (Keras / Cut BCE) or `sum` (ELMO)")                                           \
  X(int32_t, weighted, 0, "", "1 if position weights were drawn")                                                   \
  X(int64_t, block_v, 0, "", "requested vocabulary tile (0: the variant chose)")                                    \
  X(int64_t, block_p, 0, "", "requested position tile (0: the variant chose)")                                      \
  X(int32_t, threads, 0, "", "threads given to the variant")                                                        \
  X(int64_t, seed, 0, "", "seed of the synthetic inputs")                                                           \
  X(Text24, e_format, {}, "", "storage format of E: `fp32` or its ml_dtypes / precision_sim name (`bfloat16`, "    \
                              "`float8_e4m3fn`, `e3m4`), whatever alias was typed")                                 \
  X(Text24, e_rounding, {}, "", "how E was rounded into it (`nearest_even`, `stochastic`, ...); empty for fp32")    \
  X(int64_t, e_stored_bytes, 0, "bytes", "E as stored (1 or 2 bytes per value when packed); 0 for fp32")           \
  X(Text8, operand, {}, "", "precision of the products' operands: `fp32`, `tf32`, `bf16`, `e4m3` or `e5m2` (fp32 " \
                            "accumulation); CPU variants compute fp32, and bf16 and the fp8 operands (AVX512_BF16; "  \
                            "the fp8 rows' per-tensor scales are in `reason`), and skip tf32")                        \
  X(Text8, epilogue, {}, "", "precision of the element-wise work on each logit (exp, softplus, σ): `fp32`, or "    \
                             "`bf16` / `fp16`, every operation rounded to that format (an emulation of the built-in " \
                             "CPU variants, docs/method.md#the-epilogue-precision); empty before version 5 (fp32)")   \
  X(int32_t, ranks, 1, "", "processes the step ran on (MPI ranks; 1: one process)")                                 \
  X(Text16, shard, {}, "", "how the step was split over the ranks: empty (not sharded), `vocab`, `positions`, "    \
                           "`vocab,positions`")                                                                     \
  X(Text8, status, {}, "", "`ok`, `skipped` or `failed` (`planned` in a --dry-run file)")                                                           \
  X(Text192, reason, {}, "", "why skipped or failed (`OOM predicted: ...`); a note otherwise")                      \
  X(Text32, flags, {}, "",                                                                                          \
    "comma list of what makes a measured row untrustworthy: `inaccurate` (an error against the float64 "          \
    "reference on the inputs the products read above 1 %: a wrong result, said in `reason`; first, as the column " \
    "holds 31 characters and drops whole flags from the end), `busy` (the local yardstick moved > 10 % across the " \
    "point, or the step's threads waited for a CPU > 10 % of their time, said in `reason`), `noisy` (time_cv > "   \
    "5 %), `above_yardstick` (gemm_fraction > 1), `mem` (the measured memory exceeds predicted_bytes: "              \
    "peak_bytes for the counting allocator; for a plug-in or Python variant also rss_growth_bytes beyond the "       \
    "prediction + outputs + max(16 MiB, 25 %)); empty: none")                                                        \
  X(int32_t, warmup, 0, "", "untimed runs before timing")                                                           \
  X(int32_t, reps, 0, "", "timed runs: the row's samples in /samples")                                              \
  X(double, time_median_s, kNotMeasured, "s", "median of the samples")                                              \
  X(double, time_min_s, kNotMeasured, "s", "fastest sample")                                                        \
  X(double, time_max_s, kNotMeasured, "s", "slowest sample")                                                        \
  X(double, time_cv, kNotMeasured, "", "coefficient of variation of the samples (standard deviation / mean)")      \
  X(double, flops, kNotMeasured, "flop", "6·P·V·D, the useful work of one loss-and-gradient step")                  \
  X(double, effective_gflops, kNotMeasured, "GFLOP/s", "flops / time_median_s / 1e9")                              \
  X(double, gemm_gflops, kNotMeasured, "GFLOP/s",                                                                   \
    "the yardstick: CPU rows the larger of shape_gemm_gflops and, with fp32 operands, the machine's best SGEMM "   \
    "on the row's threads (the fastest of Eigen, OpenBLAS, oneDNN and lobench's own micro-kernels at a large "     \
    "square size, the sgemm_* attributes), with --operand bf16, e4m3 and e5m2 the faster of lobench's and "        \
    "oneDNN's bf16 products at the square size (the bf16_gemm_* attributes), all measured in the same run; GPU "   \
    "rows the cuBLAS rate for the operand on an 8192³ "                                                            \
    "product (the gpu_gemm_* attributes)")                                                                          \
  X(double, shape_gemm_gflops, kNotMeasured, "GFLOP/s",                                                             \
    "CPU rows (not sharded): the logit product A·Eᵀ at the row's P, V, D on its threads, on the tiles `fused` "     \
    "chooses, the fastest round of the fastest path its operands have (fp32: the library's products, oneDNN's "   \
    "where built in, and lobench's own micro-kernels; bf16, e4m3, e5m2: the bf16 products and oneDNN's), measured "\
    "once per shape in the same run (on all of V, or whole vocabulary blocks of it for a product of at most "       \
    "0.25 s); NaN for GPU, sharded and tf32 rows and before version 5)")                                           \
  X(double, gemm_fraction, kNotMeasured, "",                                                                        \
    "effective_gflops / gemm_gflops; above 1 is a measurement error (flagged `above_yardstick`)")                  \
  X(double, fma_peak_gflops, kNotMeasured, "GFLOP/s",                                                               \
    "CPU rows: the physical ceiling, fused multiply-adds from registers on the row's threads (the fma_peak_* "      \
    "attributes)")                                                                                                  \
  X(double, local_gemm_before_gflops, kNotMeasured, "GFLOP/s",                                                      \
    "CPU rows: Eigen SGEMM of the point's tile shape ([P×D]·[D×512]) just before the point (median of 5 samples, " \
    "each about one step of the point at the machine's best SGEMM, 3 to 30 ms)")                                    \
  X(double, local_gemm_after_gflops, kNotMeasured, "GFLOP/s",                                                       \
    "the same just after the point; the two more than 10 % apart flag the row `busy`")                              \
  X(double, peak_bytes, kNotMeasured, "bytes",                                                                      \
    "peak working bytes of the step (inputs and outputs excluded) as `memory_meter` measured them: exactly, by the " \
    "allocator the variant was given, for built-ins and C++ plug-ins; sharded rows: the largest rank's")            \
  X(int64_t, predicted_bytes, 0, "bytes", "the variant's analytic model of peak_bytes")                             \
  X(double, peak_device_bytes, kNotMeasured, "bytes",                                                               \
    "GPU rows: the peak as the device saw it (largest drop of cudaMemGetInfo's free bytes during a step)")          \
  X(double, rss_growth_bytes, kNotMeasured, "bytes",                                                                \
    "CPU rows: the process's peak resident memory during the timed steps minus its resident memory before them "   \
    "(/proc/self/status VmHWM after resetting it, an independent meter of peak_bytes; sharded rows: the largest rank's)") \
  X(double, peak_bytes_sum, kNotMeasured, "bytes", "sharded rows: peak working bytes summed over the ranks")        \
  X(double, comm_time_s, kNotMeasured, "s", "sharded rows: median time spent in collectives per step")             \
  X(double, rank_time_min_s, kNotMeasured, "s",                                                                     \
    "sharded rows: the fastest rank's median compute time per step (collectives excluded)")                          \
  X(double, rank_time_max_s, kNotMeasured, "s", "sharded rows: the slowest rank's median compute time per step")    \
  X(double, comm_bytes, kNotMeasured, "bytes", "sharded rows: bytes each rank sent in collectives per step")       \
  X(int64_t, input_bytes, 0, "bytes", "A, E in float32, targets, weights, and E's packed copy where E is stored in another format (e_stored_bytes): what the inputs hold in the process")                          \
  X(int64_t, output_bytes, 0, "bytes", "loss, per-position loss, dA, dE, counts as held on the host")               \
  X(double, loss, kNotMeasured, "", "the variant's loss")                                                           \
  X(double, ref_loss, kNotMeasured, "", "the float64 reference's loss on the original E")                          \
  X(double, rel_loss_err, kNotMeasured, "", "\\|loss − ref\\| / \\|ref\\|")                                         \
  X(double, rel_dA_err, kNotMeasured, "", "‖dA − ref‖₂ / ‖ref‖₂")                                                  \
  X(double, rel_dE_err, kNotMeasured, "", "‖dE − ref‖₂ / ‖ref‖₂")                                                  \
  X(double, rel_loss_err_kernel, kNotMeasured, "",                                                                  \
    "the same against the reference on E as the variant read it (decoded from e_format): what the kernel costs")    \
  X(double, rel_dA_err_kernel, kNotMeasured, "", "as rel_dA_err, against the reference on the decoded E")          \
  X(double, rel_dE_err_kernel, kNotMeasured, "", "as rel_dE_err, against the reference on the decoded E")          \
  X(double, counts_mismatch, kNotMeasured, "positions",                                                             \
    "positions whose TP/FP/FN/TN differ from the reference's on E as read although none of their logits is within " \
    "1e-5 of 0")                                                                                                    \
  X(Text24, utc, {}, "", "when the row was measured (ISO 8601 UTC)")                                              \
  X(Text256, origin, {}, "",                                                                                        \
    "where the variant came from: `built-in`; `plugin PATH sha256=HEX abi=N` (a C++ plug-in); `python SPEC "        \
    "[version=V] frameworks=NAME VERSION,...` (a Python variant: its module, the module's version, the frameworks "  \
    "loaded). Empty in files before version 4")                                                                     \
  X(Text16, timing_source, {}, "",                                                                                  \
    "what timed the samples: `host_clock` (a steady clock around the step on the host), `device_events` (CUDA "     \
    "events around the step on the device), `self_timed` (the variant's own measurement of each step). Empty when " \
    "nothing was timed (skipped rows) and before version 4")                                                        \
  X(Text24, memory_meter, {}, "",                                                                                   \
    "what measured peak_bytes: `counting_allocator` (every working byte allocated through lobench's allocator, "    \
    "exact), `rss_growth` (the process's peak resident-set growth from before the session to its last step: Python " \
    "variants), `framework_counter` (the framework's own allocator statistics, e.g. torch.cuda.max_memory_allocated)" \
    ". Empty when not measured and before version 4")

struct ResultRow {
  LOBENCH_ROW_MEMBERS(LOBENCH_RESULT_COLUMNS)

  // The identity of a point for --resume and merge: every identity column (identity_columns()) as
  // `name=value` (an empty operand, as in files written before the column existed, counts as fp32; so
  // does an empty format).
  std::string key() const;
  static const std::vector<Column>& columns();  // result_columns()
};

// One row of /samples: the timed runs of every row, in long form.
#define LOBENCH_SAMPLE_COLUMNS(X)                                  \
  X(int64_t, row_id, 0, "", "the row of /results")                 \
  X(int32_t, sample, 0, "", "0-based index of the timed run")      \
  X(double, seconds, 0, "s", "its time")

struct SampleRow {
  LOBENCH_ROW_MEMBERS(LOBENCH_SAMPLE_COLUMNS)
  static const std::vector<Column>& columns();
};

// The columns of ResultRow in order.
const std::vector<Column>& result_columns();
// The column `name`; throws std::logic_error for a name that is not a column.
const Column& result_column(const std::string& name);
// The columns that identify a row (its key): every column before `status` but `row_id` (the order of
// completion), `P` (B·N) and `e_stored_bytes` (measured) — the variant, its backend, the columns of the
// sweep's axes (sweep/run_axes.cpp: a new axis's column goes there), `weighted`, `ranks` and `shard`.
const std::vector<const Column*>& identity_columns();

// A column of `row` as text: integers in plain digits, text as stored, float64 as fmt's shortest form.
std::string column_text(const ResultRow& row, const Column& c);
// Sets a column from text (integers in plain digits). Throws std::invalid_argument naming the column
// when the text is not an integer or does not fit a text column whole.
void set_column_text(ResultRow& row, const Column& c, const std::string& text);

// results/SCHEMA.md, generated from the column list and the file layout's description. `axes_rows`: the
// rows `| option | column | kind | default |` of `lobench run`'s axes, which the sweep declares
// (sweep/run_axes.hpp: run_axes_markdown()).
std::string schema_markdown(const std::string& axes_rows);

}  // namespace lobench::io
