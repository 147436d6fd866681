// Where a result came from: written as root attributes of every HDF5 file lobench makes
// (harness/io/provenance_attrs.hpp writes them; this plain record knows no file format).
#pragma once

#include <string>

namespace lobench {

// The commit the running binary was built from and whether that tree's tracked files differed from it,
// recorded at build time (cmake/build_commit.cmake; "unknown" outside a git checkout).
const char* build_commit();
bool build_dirty();

struct Provenance {
  // git_commit / git_dirty: the checkout's HEAD when the run started (the source folder may have moved
  // on since the build); build_commit / build_dirty: what the binary was built from.
  std::string git_commit, host, cpu_model, compiler, libraries, argv, start_utc;
  std::string cpu_id, cpu_simd;  // cpu::cpu_identity(), cpu::cpu_simd_flags(): which CPU, beyond its name
  std::string build_commit;
  bool build_dirty = false;
  std::string sgemm_library;  // what the CPU variants' products run on (cpu::sgemm_library_name())
  // How `--epilogue fp16` runs: "native: ..." where fused's bf16 tile computes it in binary16 here, else
  // "emulated: " and why not (cpu::fp16_epilogue_tile_unavailable())
  std::string fp16_epilogue;
  std::string plugins;  // the plug-ins whose variants are registered ("; "-separated origins); "" for none
  std::string gpu_model;  // NVIDIA GPUs the driver reports ("; "-separated); "" where there are none
  bool git_dirty = false;
  int hardware_threads = 0;
};

Provenance collect_provenance(const std::string& argv_joined);
std::string utc_now();  // ISO 8601, seconds, "Z"
std::string lobench_version();  // the CMake project version, e.g. "0.1.0"
std::string build_flags();      // build type, compiler flags, native/CUDA options, as configured

}  // namespace lobench
