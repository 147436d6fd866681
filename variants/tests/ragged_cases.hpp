// Random ragged problems every variant must get right: P and V not multiples of the blocks, V smaller
// than one block, L = 1, rows of only padding, duplicate ids, zero weights, both reductions.
#pragma once

#include <fmt/format.h>

#include <random>
#include <string>
#include <vector>

#include "variants/step.hpp"
#include "variants/variant.hpp"

namespace lobench::testing {

struct RaggedCase {
  Shape shape;
  SyntheticSpec spec;
  RunOptions options;
  std::string label() const {
    return fmt::format("P={} V={} D={} L={} {} weighted={} pad={:.2f} dup={:.2f} block_v={} block_p={} threads={} seed={}",
                       shape.P(), shape.V, shape.D, shape.L, to_string(shape.reduction), shape.weighted,
                       spec.pad_fraction, spec.dup_fraction, options.block_v, options.block_p, options.threads,
                       spec.seed);
  }
};

inline std::vector<RaggedCase> ragged_cases(int count = 24) {
  std::vector<RaggedCase> cases;
  std::mt19937_64 rng(20261130);
  auto pick = [&](std::initializer_list<int64_t> xs) {
    std::vector<int64_t> v(xs);
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
  };
  for (int i = 0; i < count; ++i) {
    RaggedCase c;
    c.shape.B = pick({1, 2, 3});
    c.shape.N = pick({1, 7, 33, 65});
    c.shape.V = pick({1, 3, 100, 777, 1000, 1537});
    c.shape.D = pick({1, 5, 16, 33});
    c.shape.L = pick({1, 3, 8});
    c.shape.reduction = (i % 2) ? Reduction::sum : Reduction::mean;
    c.shape.weighted = (i % 3) == 0;
    c.spec.seed = uint64_t(i);
    c.spec.pad_fraction = double(pick({0, 10, 30})) / 100.0;
    c.spec.dup_fraction = double(pick({0, 20})) / 100.0;
    c.spec.zero_weight_fraction = 0.2;
    c.options.block_v = pick({0, 7, 64, 512});
    c.options.block_p = pick({0, 5, 64});
    c.options.threads = int(pick({1, 2}));
    cases.push_back(c);
  }
  // Fixed corners: every id padding; all weights zero (mean loss 0 by definition); V = 1; L = 1 with
  // V below one block.
  RaggedCase all_pad;
  all_pad.shape = Shape{2, 9, 300, 8, 4, Reduction::mean, false};
  all_pad.spec.pad_fraction = 1.0;
  all_pad.options.threads = 2;
  cases.push_back(all_pad);
  RaggedCase zero_w;
  zero_w.shape = Shape{1, 11, 50, 4, 2, Reduction::mean, true};
  zero_w.spec.zero_weight_fraction = 1.0;
  cases.push_back(zero_w);
  RaggedCase tiny;
  tiny.shape = Shape{1, 3, 1, 2, 1, Reduction::sum, true};
  cases.push_back(tiny);
  RaggedCase l1;
  l1.shape = Shape{1, 130, 1000, 32, 1, Reduction::mean, false};
  l1.options.block_v = 4096;
  l1.options.threads = 2;
  cases.push_back(l1);
  return cases;
}

}  // namespace lobench::testing
