// The one way variants enter lobench: a registration function with an ABI version. The built-in
// variants register through it (lobench_register_builtins_v1, registry.cpp) and so does every plug-in,
// a shared library that defines lobench_register_v1 (harness/plugin/plugin_loader.hpp loads it):
//
//   #include "variants/plugin_api.hpp"
//   LOBENCH_PLUGIN(registry) { registry.add(std::make_unique<MyVariant>()); }
//
// The registry hands the function a fresh Registry and takes its variants only when the function
// returns this lobench's ABI and every name is new: a plug-in is loaded whole or not at all.
#pragma once

namespace lobench {
class Registry;
}

// Bumped whenever a type a plug-in compiles against changes its layout or its virtual functions
// (Variant, DeviceSession, RunOptions, RunContext, StepInputs, StepOutputs, StoredMatrix,
// CountingAllocator, Registry): a plug-in built for another version is refused, never called.
// 2: DeviceSession::timing_source() and memory_meter() (what a row records as its timing_source and
// memory_meter, results/SCHEMA.md version 4).
// 3: RunOptions::epilogue (the precision of the element-wise work, variants/epilogue.hpp; Variant's default
// skip_reason refuses all but fp32).
#define LOBENCH_PLUGIN_ABI 3
#define LOBENCH_PLUGIN_ENTRY_POINT "lobench_register_v1"

extern "C" {
// Registers variants into `registry` when `abi` is the ABI the function was built for, and returns
// that ABI in every case (a mismatch registers nothing). May throw std::exception: the plug-in is
// then refused with the exception's message.
typedef int (*lobench_register_fn)(lobench::Registry* registry, int abi);
}

// Defines a plug-in's entry point; the body that follows receives `lobench::Registry& NAME`.
#define LOBENCH_PLUGIN(NAME)                                                                              \
  static void lobench_plugin_register_body(::lobench::Registry& NAME);                                     \
  extern "C" __attribute__((visibility("default"))) int lobench_register_v1(::lobench::Registry* r, int abi) { \
    if (abi == LOBENCH_PLUGIN_ABI) lobench_plugin_register_body(*r);                                       \
    return LOBENCH_PLUGIN_ABI;                                                                              \
  }                                                                                                        \
  static void lobench_plugin_register_body(::lobench::Registry& NAME)
