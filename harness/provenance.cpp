#include "harness/provenance.hpp"

#include <CLI/Version.hpp>
#include <H5public.h>  // the HDF5 library version named in `libraries`
#include <Eigen/Core>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "variants/cpu/bf16_fused_tile.hpp"
#include "variants/cpu/cpu_model.hpp"
#include "variants/cpu/onednn.hpp"
#include "variants/cpu/openblas.hpp"
#include "variants/cpu/sgemm.hpp"
#include "variants/variant.hpp"

#ifndef LOBENCH_SOURCE_DIR
#define LOBENCH_SOURCE_DIR "."
#endif
#ifndef LOBENCH_VERSION
#define LOBENCH_VERSION "unknown"
#endif
#ifndef LOBENCH_BUILD_FLAGS
#define LOBENCH_BUILD_FLAGS "unknown"
#endif

namespace lobench {
namespace {

std::string run_command(const std::string& cmd) {
  std::array<char, 512> buf{};
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return out;
  while (fgets(buf.data(), int(buf.size()), pipe)) out += buf.data();
  if (pclose(pipe) != 0) return "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// The GPUs as the NVIDIA driver lists them, without linking CUDA (a CPU-only build run on a GPU machine
// records them too): /proc/driver/nvidia/gpus/*/information, else nvidia-smi when it is installed.
std::string gpu_model() {
  std::string models;
  std::error_code ec;
  const std::filesystem::path dir("/proc/driver/nvidia/gpus");
  if (std::filesystem::is_directory(dir, ec)) {
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      std::ifstream f(entry.path() / "information");
      std::string line;
      while (std::getline(f, line))
        if (line.rfind("Model:", 0) == 0) {
          const size_t start = line.find_first_not_of(" \t", 6);
          if (start != std::string::npos) found.push_back(line.substr(start));
        }
    }
    std::sort(found.begin(), found.end());
    for (const auto& m : found) models += (models.empty() ? "" : "; ") + m;
  }
  if (models.empty() && !run_command("command -v nvidia-smi 2>/dev/null").empty()) {
    models = run_command("timeout 10 nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null");
    for (size_t i = 0; (i = models.find('\n', i)) != std::string::npos;) models.replace(i, 1, "; ");
  }
  return models;
}

}  // namespace

std::string lobench_version() { return LOBENCH_VERSION; }
std::string build_flags() { return LOBENCH_BUILD_FLAGS; }

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Provenance collect_provenance(const std::string& argv_joined) {
  Provenance p;
  const std::string git = fmt::format("git -C '{}' ", LOBENCH_SOURCE_DIR);
  p.git_commit = run_command(git + "rev-parse HEAD 2>/dev/null");
  if (p.git_commit.empty()) p.git_commit = "unknown";
  else p.git_dirty = !run_command(git + "status --porcelain --untracked-files=no 2>/dev/null").empty();
  p.build_commit = lobench::build_commit();
  p.build_dirty = lobench::build_dirty();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  p.host = host;
  p.cpu_model = cpu::cpu_model_name();  // the definitions step_bench's JSON records too
  p.cpu_id = cpu::cpu_identity();
  p.cpu_simd = cpu::cpu_simd_flags();
  if (auto why = cpu::fp16_epilogue_tile_unavailable()) p.fp16_epilogue = "emulated: " + *why;
  else p.fp16_epilogue = "native: fused with bf16 or fp8 operands computes it in binary16 on AVX512-FP16; other rows emulate it";
  p.gpu_model = gpu_model();
  p.compiler = fmt::format("g++ {}", __VERSION__);
  p.libraries = fmt::format("hdf5 {}.{}.{}; eigen {}.{}.{}; fmt {}; CLI11 {}; openmp {}", H5_VERS_MAJOR, H5_VERS_MINOR,
                            H5_VERS_RELEASE, EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION,
                            FMT_VERSION, CLI11_VERSION, _OPENMP);
  // The BLAS the products ran on is loaded at run time, so its version is the loaded library's own
  // report, not a header's; the CUDA toolkit is the one the backend was compiled with.
  if (const cpu::OpenBlas* blas = cpu::openblas()) p.libraries += "; " + blas->config;
  else p.libraries += "; openblas not loaded (" + cpu::openblas_unavailable() + ")";
  p.libraries += "; " + (cpu::onednn_unavailable() ? std::string("onednn not built in") : cpu::onednn_name());
#ifdef LOBENCH_CUDA_TOOLKIT_VERSION
  p.libraries += "; cuda toolkit " LOBENCH_CUDA_TOOLKIT_VERSION;
#endif
  p.sgemm_library = cpu::sgemm_library_name();
  for (const std::string& origin : Registry::instance().origins()) p.plugins += (p.plugins.empty() ? "" : "; ") + origin;
  p.argv = argv_joined;
  p.start_utc = utc_now();
  p.hardware_threads = int(std::thread::hardware_concurrency());
  return p;
}

}  // namespace lobench
