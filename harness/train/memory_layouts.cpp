#include "harness/train/memory_layouts.hpp"

#include <stdexcept>

namespace lobench::train {

std::string to_string(Layout l) {
  switch (l) {
    case Layout::renee: return "renee";
    case Layout::fp32: return "fp32";
    case Layout::elmo_bf16: return "elmo_bf16";
    case Layout::elmo_fp8: return "elmo_fp8";
  }
  return "?";
}

Layout parse_layout(const std::string& s) {
  for (Layout l : all_layouts())
    if (to_string(l) == s) return l;
  throw std::invalid_argument("unknown layout '" + s + "' (valid: renee, fp32, elmo_bf16, elmo_fp8)");
}

std::vector<Layout> all_layouts() { return {Layout::renee, Layout::fp32, Layout::elmo_bf16, Layout::elmo_fp8}; }

MemoryBreakdown layout_bytes(Layout l, const LayoutShape& s) {
  if (s.V < 1 || s.D < 1 || s.B < 1 || s.chunks < 1) throw std::invalid_argument("layout_bytes: sizes must be >= 1");
  const int64_t V = s.V, D = s.D, B = s.B, k = s.chunks;
  MemoryBreakdown m;
  switch (l) {
    case Layout::renee:
      m.weights = 4 * V * D + 2 * V * D;
      m.weight_gradient = 4 * V * D + 2 * V * D;
      m.optimizer_state = 4 * V * D;
      m.logits = 2 * B * V;
      break;
    case Layout::fp32:
      m.weights = 4 * V * D;
      m.weight_gradient = 4 * V * D;
      m.logits = 4 * B * V;
      break;
    case Layout::elmo_bf16: {
      const int64_t chunk = (V + k - 1) / k;
      m.weights = 2 * V * D;
      m.weight_gradient = 2 * chunk * D;
      m.logits = 2 * B * chunk;
      m.workspace = 4 * B * D;
      break;
    }
    case Layout::elmo_fp8: {
      const int64_t pad = V + 16 * k - V % (16 * k);  // ELMO's padding: always adds at least one row
      const int64_t chunk = pad / k;
      m.weights = pad * D;
      m.logits = 2 * B * chunk;
      m.workspace = 4 * B * D;
      break;
    }
  }
  return m;
}

}  // namespace lobench::train
