// `lobench quantize`: round an HDF5 array into a number format (precision_sim) and store both the
// rounded float32 values and the packed codes.
#pragma once

#include <cstdint>
#include <string>

#include "harness/cli/cli_fwd.hpp"

namespace lobench {

struct QuantizeOptions {
  std::string format;                   // any name precision::parse_format accepts, e.g. e4m3fn, bf16_sat
  std::string rounding = "nearest_even";  // any name precision::parse_rounding accepts
  int bits = 0;                         // stochastic random bits k (0 = the format's default)
  uint64_t seed = 0;
  int64_t threads = 0;                  // 0: all cores (the default); results never depend on it
  std::string mem_limit;                // e.g. 20G; empty: available memory minus a margin
  std::string in;                       // HDF5 file with a float32 dataset "x" of any rank
  std::string out;                      // written with datasets "values" and "codes" and attributes
  bool overwrite = false;               // replace an existing OUT (a regular file); else it is refused
};

// Adds the `quantize` subcommand. Problems (unknown format or mode, a format wider than 16 bits,
// a missing or non-float32 "x", an input that is not a regular file, an output that is the input or not
// a regular file, more memory than the limit, unwritable output) are thrown as std::runtime_error whose
// message names the file, dataset and problem; OUT is then left as it was (written to a temporary file
// beside it and renamed only when complete, harness/io/output_path.hpp).
void register_quantize_command(CLI::App& app);

// The command's work, callable directly (tests). Prints one summary line to stdout.
void run_quantize(const QuantizeOptions& opt);

}  // namespace lobench
