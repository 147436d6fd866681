// `lobench check`: run one variant on inputs a user supplies, so anyone can validate a variant
// against their own framework (file formats in README.md).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>

#include "variants/step.hpp"

namespace lobench {

// The shapes of IN, read from the dataset headers only and validated (ranks, dtypes, matching P and D,
// overflow-checked sizes) before any data is read.
struct CheckShapes {
  int64_t P = 0, V = 0, D = 0, L = 0;
  bool weighted = false;
  int64_t input_bytes() const;  // A, E, targets and weights as read
};
CheckShapes read_check_shapes(hid_t file);

// Reads and validates IN: datasets A float32 [P, D], E float32 [V, D], targets int32 [P, L],
// optional weights float32 [P]; optional string attribute `reduction`. Throws std::runtime_error
// naming the dataset and the problem.
StepData read_check_inputs(const std::string& path);

// Runs `variant` on IN and writes OUT (loss, per_position_loss, dA, dE, counts). OUT is written to a
// temporary file beside it and renamed at the end (harness/io/output_path.hpp), so a failure leaves OUT
// as it was; OUT equal to IN, or anything there that is not a regular file, is refused before anything
// is read; so is an existing OUT unless `overwrite`. The inputs, outputs and the variant's working set
// must fit in `mem_limit` bytes (0: memory available now minus a margin), checked from the shapes before
// any dataset is read.
void run_check(const std::string& in_path, const std::string& variant, const std::string& out_path, int threads,
               const std::string& argv_joined, int64_t mem_limit = 0, bool overwrite = false);

}  // namespace lobench
