// `lobench check`: run one variant on inputs a user supplies, so anyone can validate a variant
// against their own framework (file formats in README.md).
#pragma once

#include <string>

#include "variants/step.hpp"

namespace lobench {

// Reads and validates IN: datasets A float32 [P, D], E float32 [V, D], targets int32 [P, L],
// optional weights float32 [P]; optional string attribute `reduction`. Throws std::runtime_error
// naming the dataset and the problem.
StepData read_check_inputs(const std::string& path);

// Runs `variant` on IN and writes OUT (loss, per_position_loss, dA, dE, counts). OUT is written to a
// temporary name and renamed at the end, so a failure leaves no OUT behind.
void run_check(const std::string& in_path, const std::string& variant, const std::string& out_path, int threads,
               const std::string& argv_joined);

}  // namespace lobench
