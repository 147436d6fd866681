// Philox-4x32-10 against the Random123 known-answer vectors, and the element -> word mapping.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "precision_sim/philox.hpp"
#include "precision_sim/stochastic.hpp"

namespace lobench::precision {
namespace {

// Random123 kat_vectors, "philox4x32 10": counter[4] key[2] -> output[4].
struct Kat {
  PhiloxCounter ctr;
  PhiloxKey key;
  PhiloxCounter out;
};
constexpr Kat kKats[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}, {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}, {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

// constexpr: a wrong implementation does not even compile.
static_assert(philox4x32(kKats[0].ctr, kKats[0].key) == kKats[0].out);

TEST(Philox, KnownAnswerVectors) {
  for (const Kat& k : kKats) EXPECT_EQ(philox4x32(k.ctr, k.key), k.out);
}

TEST(Philox, WordMappingInterleavesGroupsOf64) {
  EXPECT_EQ(philox_block(0), 0u);
  EXPECT_EQ(philox_block(15), 15u);
  EXPECT_EQ(philox_block(16), 0u);
  EXPECT_EQ(philox_word(16), 1);
  EXPECT_EQ(philox_block(63), 15u);
  EXPECT_EQ(philox_word(63), 3);
  EXPECT_EQ(philox_block(64), 16u);
  const uint64_t seed = 0x0123456789ABCDEFull, stream = 0xFEDCBA9876543210ull;
  const PhiloxCounter w = philox4x32(PhiloxCounter{21, 0, 0x76543210u, 0xFEDCBA98u}, PhiloxKey{0x89ABCDEFu, 0x01234567u});
  // block 21 = group 1 (elements 64..127), lane 5: elements 69, 85, 101, 117.
  EXPECT_EQ(random_word(seed, stream, 69), w[0]);
  EXPECT_EQ(random_word(seed, stream, 85), w[1]);
  EXPECT_EQ(random_word(seed, stream, 101), w[2]);
  EXPECT_EQ(random_word(seed, stream, 117), w[3]);
}

TEST(Philox, BulkWordsEqualSingleWordsAtAnyOffset) {
  for (uint64_t first : {0ull, 1ull, 63ull, 64ull, 1000ull, (1ull << 32) - 5}) {
    std::vector<uint32_t> words(300);
    random_words(42, 3, first, words);
    for (size_t i = 0; i < words.size(); ++i) ASSERT_EQ(words[i], random_word(42, 3, first + i)) << first << "+" << i;
  }
}

TEST(Philox, SeedsAndStreamsGiveDifferentWords) {
  EXPECT_NE(random_word(1, 0, 0), random_word(2, 0, 0));
  EXPECT_NE(random_word(1, 0, 0), random_word(1, 1, 0));
  EXPECT_NE(random_word(1, 0, 0), random_word(1, 0, 1));
  EXPECT_NE(random_word(1ull << 32, 0, 0), random_word(0, 0, 0));  // the high seed word matters
}

TEST(Philox, WordsLookUniform) {
  // Mean of 2^20 words' top bits and the frequency of each of 16 nibble values: loose 6-sigma bounds.
  std::vector<uint32_t> w(1 << 20);
  random_words(7, 0, 0, w);
  double mean = 0;
  std::vector<int> hist(16, 0);
  for (uint32_t v : w) {
    mean += word_to_unit_float(v);
    ++hist[v >> 28];
  }
  mean /= w.size();
  EXPECT_NEAR(mean, 0.5, 6 * std::sqrt(1.0 / 12 / w.size()));
  const double expect = w.size() / 16.0, sd = std::sqrt(expect * (15.0 / 16));
  for (int h : hist) EXPECT_NEAR(h, expect, 6 * sd);
}

}  // namespace
}  // namespace lobench::precision
