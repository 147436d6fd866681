// What the engine checks of every variant's outputs before it scores them (built-ins, C++ plug-ins and
// Python variants alike): a row whose outputs are not the shape's or not finite is `failed` with the
// reason, never `ok` with errors computed from garbage; and whether the variant wrote into its inputs,
// which it receives as const (a write would corrupt the errors of every later row that shares them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "variants/step.hpp"

namespace lobench::sweep {

// Why `out` cannot be scored for inputs `in`: dA or dE not [P, D] / [V, D], counts neither [P, 4] nor
// empty (not computed), counts negative, a non-finite loss, dA or dE value (the first one named).
std::optional<std::string> invalid_outputs(const StepOutputs& out, const StepInputs& in);

// A digest of the inputs a variant reads (A, E, targets, weights): equal before and after its steps
// unless it wrote into them.
uint64_t inputs_digest(const StepInputs& in);

}  // namespace lobench::sweep
