#include "datasets/seqrec_split.hpp"

#include <stdexcept>

namespace lobench::data {

std::string to_string(SplitProtocol p) { return p == SplitProtocol::multi_label ? "multi_label" : "leave_one_out"; }

SplitProtocol parse_split_protocol(const std::string& s) {
  if (s == "multi_label") return SplitProtocol::multi_label;
  if (s == "leave_one_out" || s == "loo") return SplitProtocol::leave_one_out;
  throw std::invalid_argument("unknown split protocol '" + s + "' (valid: multi_label, leave_one_out)");
}

void validate(const SplitOptions& o) {
  if (o.L < 1 || o.L > (1 << 20)) throw std::invalid_argument("split: L must be in [1, 2^20], got " + std::to_string(o.L));
  if (o.N < 1 || o.N > (1 << 24)) throw std::invalid_argument("split: N must be in [1, 2^24], got " + std::to_string(o.N));
  if (o.protocol == SplitProtocol::leave_one_out && o.L != 1)
    throw std::invalid_argument("split: leave_one_out predicts one item (L = 1), got L = " + std::to_string(o.L));
}

int64_t min_sequence_length(const SplitOptions& o) {
  return o.protocol == SplitProtocol::multi_label ? 3 * o.L + 3 : 4;
}

namespace {

struct Cuts {
  int64_t train_input, dev_input, test_input;
};

Cuts cuts(int64_t n, const SplitOptions& o) {
  if (o.protocol == SplitProtocol::multi_label) return {n - 3 * o.L - 2, n - 2 * o.L - 1, n - o.L};
  return {n - 3, n - 2, n - 1};
}

// Appends the last N items of `input` left-padded to N.
void append_window(std::span<const int32_t> input, int64_t N, std::vector<int32_t>& out) {
  const int64_t k = std::min<int64_t>(N, int64_t(input.size()));
  out.insert(out.end(), size_t(N - k), 0);
  out.insert(out.end(), input.end() - k, input.end());
}

void add_eval(EvalWindows& w, std::span<const int32_t> s, int64_t input_len, int64_t u, int64_t L) {
  append_window(s.first(size_t(input_len)), w.N, w.inputs);
  w.targets.insert(w.targets.end(), s.begin() + input_len, s.begin() + input_len + L);
  w.users.push_back(u);
  w.input_lengths.push_back(input_len);
}

}  // namespace

SeqSplit make_split(const SequenceDataset& d, const SplitOptions& o) {
  validate(o);
  SeqSplit sp;
  sp.users = d.num_users();
  const int64_t N = o.N, L = o.L;
  sp.train.N = sp.dev.N = sp.test.N = N;
  sp.train.L = sp.dev.L = sp.test.L = L;
  for (int64_t u = 0; u < d.num_users(); ++u) {
    const auto s = d.sequence(u);
    const int64_t n = int64_t(s.size());
    if (n < min_sequence_length(o)) {
      ++sp.too_short;
      continue;
    }
    const Cuts c = cuts(n, o);
    // Train window: the last k = min(N, m) input positions, each with its next L items.
    const int64_t m = c.train_input, k = std::min(N, m);
    append_window(s.first(size_t(m)), N, sp.train.inputs);
    for (int64_t j = 0; j < N; ++j) {
      const int64_t t = m - k + (j - (N - k));  // sequence index at window slot j (negative: padding)
      sp.train.weights.push_back(t >= 0 ? 1.0f : 0.0f);
      for (int64_t l = 1; l <= L; ++l) sp.train.targets.push_back(t >= 0 ? s[size_t(t + l)] : -1);
    }
    sp.train.users.push_back(u);
    add_eval(sp.dev, s, c.dev_input, u, L);
    add_eval(sp.test, s, c.test_input, u, L);
  }
  return sp;
}

}  // namespace lobench::data
