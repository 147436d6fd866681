// The evaluation protocols of sequential recommendation on per-user sequences (datasets/seqrec.hpp),
// turned into fixed-length model windows.
//
// multi_label (the Cut BCE paper, L targets; L = 8 gives 8 / 17 / 26): for a user of n items s[0..n)
//   test:  input s[0 .. n−L),      targets s[n−L .. n)
//   dev:   input s[0 .. n−2L−1),   targets the next L items s[n−2L−1 .. n−L−1)
//   train: input s[0 .. n−3L−2),   every input position t predicts its next L items s[t+1 .. t+L]
//          (all inside the dev input, so no dev or test target is trained on).
// leave_one_out (SASRec / S3-Rec, L = 1): test input s[0..n−1) → s[n−1]; dev input s[0..n−2) →
// s[n−2]; train input s[0..n−3), position t predicts s[t+1] (the training sequence is s[0..n−2)).
//
// Every input keeps its last N items, left-padded with 0 to N. A user whose train input would be empty
// (n < 3L+3, or n < 4 for leave-one-out) is left out of all three parts and counted in `too_short`.
// Eval examples are scored at their last window position; train windows weight each non-padding
// position 1 and padding 0 (targets −1).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "datasets/seqrec.hpp"

namespace lobench::data {

enum class SplitProtocol { multi_label, leave_one_out };
std::string to_string(SplitProtocol p);
SplitProtocol parse_split_protocol(const std::string& s);  // multi_label | leave_one_out

struct SplitOptions {
  SplitProtocol protocol = SplitProtocol::multi_label;
  int64_t L = 8;    // targets per position (1 for leave_one_out)
  int64_t N = 256;  // window length
};

// Throws std::invalid_argument naming the field (L >= 1, N >= 1, leave_one_out needs L = 1, N·L
// overflow-checked).
void validate(const SplitOptions& o);

// The shortest sequence kept.
int64_t min_sequence_length(const SplitOptions& o);

// Windows of the training part: [count, N] inputs, [count, N, L] targets, [count, N] weights.
struct TrainWindows {
  int64_t N = 0, L = 0;
  std::vector<int32_t> inputs, targets;
  std::vector<float> weights;
  std::vector<int64_t> users;  // dataset row of each window
  int64_t count() const { return int64_t(users.size()); }
};

// Windows of dev or test: [count, N] inputs and [count, L] targets of the last position.
struct EvalWindows {
  int64_t N = 0, L = 0;
  std::vector<int32_t> inputs, targets;
  std::vector<int64_t> users;
  std::vector<int64_t> input_lengths;  // items of the user's sequence before the targets (the history)
  int64_t count() const { return int64_t(users.size()); }
};

struct SeqSplit {
  TrainWindows train;
  EvalWindows dev, test;
  int64_t users = 0, too_short = 0;
};

SeqSplit make_split(const SequenceDataset& d, const SplitOptions& o);

}  // namespace lobench::data
