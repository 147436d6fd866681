// A Python variant (harness/python/lobench/python_variants.py) as a variant of the C++ engine: its step calls
// back into Python, on the sweep's thread with the GIL held, so the engine measures it exactly as it
// measures a built-in (its inputs, timing rule, reference errors, skip-before-allocate, run file).
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <string>

#include "variants/variant.hpp"

namespace lobench::python {

// The variant that the Python object `obj` implements (`obj.name` is its name, backend "python").
std::unique_ptr<Variant> make_python_variant(nanobind::object obj);

}  // namespace lobench::python
