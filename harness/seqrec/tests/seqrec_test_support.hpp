// What the train-seqrec tests share: a temporary folder removed at the end of the test, the tiny
// synthetic-Yambda run (V = 1,755 with padding, 1 layer, D = 16) they train, and the relative L2
// distance their gradient comparisons use.
#pragma once

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/seqrec/seqrec_config.hpp"

namespace lobench::seqrec::testing {

// A folder under the system's temporary directory, named by `prefix` and the process id.
struct TempDir {
  explicit TempDir(const std::string& prefix)
      : path(std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::filesystem::path path;
};

// 6 steps of `variant` on synthetic:yambda at scale 0.002 (L 2, N 16, B 4, D 16, 1 layer, 2 heads),
// lr 1e-2, 2 threads, no progress line, the run file at `out`.
inline SeqrecConfig tiny_run(const std::string& variant, const std::filesystem::path& out) {
  SeqrecConfig c;
  c.dataset = "synthetic:yambda";
  c.syn_scale = 0.002;
  c.L = 2;
  c.N = 16;
  c.B = 4;
  c.D = 16;
  c.layers = 1;
  c.heads = 2;
  c.variant = variant;
  c.steps = 6;
  c.lr = 1e-2f;
  c.threads = 2;
  c.progress = false;
  c.out = out.string();
  return c;
}

// ‖a − factor·ref‖₂ / ‖factor·ref‖₂, summed in float64 (ref: float or double).
template <class T>
double relative_l2(const std::vector<float>& a, const std::vector<T>& ref, double factor = 1.0) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double r = factor * double(ref[i]);
    num += (double(a[i]) - r) * (double(a[i]) - r);
    den += r * r;
  }
  return std::sqrt(num / den);
}

}  // namespace lobench::seqrec::testing
