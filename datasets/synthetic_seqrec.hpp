// A seeded synthetic sequential-recommendation set shaped like Yambda-50M after the Cut BCE paper's
// filter (876,939 items counting the padding item 0, 9,074 users, about 5,120 items per user), for
// memory and speed work at the real shape and for accuracy checks at smaller scales.
//
// Items 1..items belong to one of `clusters` groups (a hash of the id); the catalogue and each cluster
// have power-law popularity (Zipf by id, within a cluster by id among its members). Each user has `clusters_per_user` favourite clusters and walks them as a Markov
// chain (staying in the current cluster with probability `stay`, else jumping to another favourite);
// each event is, with probability `signal`, an item of the current cluster drawn by the cluster's
// popularity, and otherwise an item of the whole catalogue drawn by global popularity. The next item is therefore predictable
// from the recent ones (better than popularity), which is the learnable signal. Lengths are lognormal
// with the given mean, at least min_length. User u depends on (seed, u) only: generation is parallel
// and the same at any thread count.
#pragma once

#include <cstdint>

#include "datasets/seqrec.hpp"

namespace lobench::data {

struct SyntheticSeqrecConfig {
  int64_t users = 9074;
  int32_t items = 876938;  // not counting padding: the vocabulary is items + 1
  double mean_length = 5120.0;
  double length_sigma = 0.75;  // of log length
  int64_t min_length = 30;
  double zipf_exponent = 0.9;
  int64_t clusters = 256;
  int64_t clusters_per_user = 3;
  double stay = 0.8;
  double signal = 0.7;
  uint64_t seed = 0;
};

// Yambda-50M's shape at scale 1; users and items scale linearly, the mean length as 5120·scale but at
// least 100 (so windows of a few hundred stay filled at small scales). Throws unless 0 < scale <= 1.
SyntheticSeqrecConfig yambda_like(double scale, uint64_t seed);

// Throws std::invalid_argument naming a field out of range.
void validate(const SyntheticSeqrecConfig& c);

SequenceDataset generate_synthetic_seqrec(const SyntheticSeqrecConfig& c, int threads = 1);

}  // namespace lobench::data
