// A sweep: the Cartesian product of axes, every variant at every point, each row measured (time,
// peak memory, accuracy against the float64 reference) and appended to the run file as it completes.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "provenance.hpp"
#include "variant.hpp"

namespace lobench {

struct SweepSpec {
  std::vector<int64_t> B{32}, N{32}, V{100000}, D{128}, L{8};
  std::vector<std::string> reductions{"mean"};
  bool weighted = false;
  double pad_fraction = 0.0, dup_fraction = 0.0;
  std::vector<int64_t> block_v{0}, block_p{0};  // 0: the variant chooses
  std::vector<int> threads{2};
  std::vector<std::string> variants{"dense", "chunked", "fused"};
  // Storage formats of E (precision_sim names; "fp32" = none) and the rounding that puts E into them.
  std::vector<std::string> e_formats{"fp32"};
  std::vector<std::string> e_roundings{"nearest_even"};
  // Precision of the products' operands (RunOptions::operand): fp32, tf32, bf16. CPU variants run fp32
  // only and record the others as skipped.
  std::vector<std::string> operands{"fp32"};
  uint64_t seed = 0;
  int warmup = 1, reps = 3;
  int64_t mem_limit = 0;  // bytes; 0 = available memory now minus a margin
  // GPU rows (backend "cuda"): bytes of device memory a point may need (working + inputs/outputs on the
  // device); 0 = the device's free memory when the sweep starts minus max(1 GiB, 5 % of its total).
  int64_t gpu_mem_limit = 0;
  bool accuracy = true;   // compute the float64 reference and the errors
  std::string out;        // the run file (HDF5)
  bool resume = false;
};

struct SweepPoint {
  Shape shape;
  RunOptions options;       // options.e_format: E's storage format
  std::string e_rounding;   // how E was rounded into it ("" for fp32)
};

// Throws std::invalid_argument naming the valid operands unless `name` is fp32, tf32 or bf16.
void validate_operand(const std::string& name);

// Options vary fastest (the operand fastest of all, so that one shape's data and reference serve every
// operand), then V, ... Throws std::invalid_argument on an unknown format, rounding or operand.
std::vector<SweepPoint> expand(const SweepSpec& spec);

// Runs the sweep. Prints a table row per (variant, point) on `table` and a progress line with ETA on
// `progress`. Returns the number of failed rows.
int run_sweep(const SweepSpec& spec, const Provenance& prov, std::ostream& table, std::ostream& progress);

}  // namespace lobench
