// The points of `lobench run`: the typed point each combination of its axes (sweep/run_axes.hpp, declared
// once) becomes, with every name in its canonical spelling so that a resumed run matches whatever alias
// was typed (`bf16` and `bfloat16` are both stored as `bfloat16`).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "harness/sweep/axes.hpp"
#include "precision_sim/rounding.hpp"
#include "variants/operand.hpp"
#include "variants/problem.hpp"
#include "variants/variant.hpp"

namespace lobench::sweep {

// One row to measure: a variant at a shape with options.
struct StepPoint {
  std::string variant;
  Shape shape;
  RunOptions options;      // e_format: "fp32" or the format's canonical name; operand: canonical
  std::string e_rounding;  // canonical rounding name; "" for fp32 (float32 is not rounded)
  uint64_t seed = 0;
  // Every axis's canonical value at this point (name, value), in the order of run_axes(): what the row's
  // columns, its key and --list show.
  std::vector<std::pair<std::string, std::string>> axis_values;

  // Every axis's value but the variant's: rows of one group share inputs, references and the yardstick.
  std::string group_key() const;
  // The synthetic inputs' identity (shape and seed).
  std::string data_key() const;
  // "dense B=32 N=32 ... operand=fp32": the variant, then every other axis (--list); empty values left out.
  std::string describe() const;
};

// The axes of `lobench run` as the sweep grammar holds them (run_axes(), slowest first).
Axes step_axes(int default_threads);  // cli::default_threads(): all cores

// The product as typed points, canonical names, duplicates dropped (fp32 E takes no rounding).
// `weighted` applies to every point. Throws std::invalid_argument naming the option and the value
// (unknown variant, format, rounding or operand; a dimension ≤ 0; B·N or another size that overflows).
std::vector<StepPoint> step_points(const Axes& axes, bool weighted);

}  // namespace lobench::sweep
