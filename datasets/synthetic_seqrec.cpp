#include "datasets/synthetic_seqrec.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "datasets/alias_table.hpp"
#include "datasets/random.hpp"

namespace lobench::data {

namespace {
constexpr uint64_t kLengthStream = 0x5E01, kClusterStream = 0x5E02, kEventStream = 0x5E03;

int64_t cluster_of(int32_t item, int64_t clusters, uint64_t seed) {
  return int64_t(mix64(uint64_t(item) ^ mix64(seed + kClusterStream)) % uint64_t(clusters));
}
}  // namespace

SyntheticSeqrecConfig yambda_like(double scale, uint64_t seed) {
  if (!(scale > 0.0 && scale <= 1.0)) throw std::invalid_argument("synthetic yambda: scale must be in (0, 1]");
  SyntheticSeqrecConfig c;
  c.users = std::max<int64_t>(1, std::llround(9074 * scale));
  c.items = int32_t(std::max<int64_t>(64, std::llround(876938 * scale)));
  c.mean_length = std::max(100.0, 5120.0 * scale);
  c.clusters = std::clamp<int64_t>(std::llround(256 * std::sqrt(scale)), 8, 256);
  c.seed = seed;
  return c;
}

void validate(const SyntheticSeqrecConfig& c) {
  auto fail = [](const std::string& m) { throw std::invalid_argument("synthetic seqrec: " + m); };
  if (c.users < 1 || c.users > (int64_t(1) << 31)) fail("users must be in [1, 2^31]");
  if (c.items < 2) fail("items must be >= 2");
  if (!(c.mean_length >= 1.0 && c.mean_length <= 1e6)) fail("mean_length must be in [1, 1e6]");
  if (!(c.length_sigma >= 0.0 && c.length_sigma <= 3.0)) fail("length_sigma must be in [0, 3]");
  if (c.min_length < 1) fail("min_length must be >= 1");
  if (!(c.zipf_exponent >= 0.0 && c.zipf_exponent <= 4.0)) fail("zipf_exponent must be in [0, 4]");
  if (c.clusters < 1 || c.clusters > c.items) fail("clusters must be in [1, items]");
  if (c.clusters_per_user < 1 || c.clusters_per_user > c.clusters) fail("clusters_per_user must be in [1, clusters]");
  if (!(c.stay >= 0.0 && c.stay <= 1.0) || !(c.signal >= 0.0 && c.signal <= 1.0)) fail("stay and signal must be in [0, 1]");
  // Expected interactions stay below 2^31 (int32 offsets are not the limit, memory is).
  if (double(c.users) * std::max(c.mean_length, double(c.min_length)) > 4e9) fail("users x mean_length is too large");
}

SequenceDataset generate_synthetic_seqrec(const SyntheticSeqrecConfig& c, int threads) {
  validate(c);
  // Popularity over the catalogue and within each cluster (items indexed 0-based as id − 1).
  const std::vector<double> w = zipf_weights(c.items, c.zipf_exponent);
  const AliasTable global(w);
  std::vector<std::vector<int32_t>> members(size_t(c.clusters));
  for (int32_t id = 1; id <= c.items; ++id) members[size_t(cluster_of(id, c.clusters, c.seed))].push_back(id);
  std::vector<AliasTable> within(size_t(c.clusters));
  for (int64_t k = 0; k < c.clusters; ++k) {
    // Each cluster has its own hits: Zipf over its members by id (so a cluster's favourites are also
    // among the globally popular ones, but the next item is far better predicted knowing the cluster).
    if (!members[size_t(k)].empty())
      within[size_t(k)] = AliasTable(zipf_weights(int64_t(members[size_t(k)].size()), c.zipf_exponent));
  }
  const int64_t nonempty = std::count_if(members.begin(), members.end(), [](const auto& m) { return !m.empty(); });
  if (nonempty < c.clusters_per_user)
    throw std::invalid_argument("synthetic seqrec: only " + std::to_string(nonempty) + " clusters have items, fewer than clusters_per_user");
  // Lengths first (so offsets are known), then each user's events in parallel.
  std::vector<int64_t> length(size_t(c.users));
  const double mu = std::log(c.mean_length) - 0.5 * c.length_sigma * c.length_sigma;
  for (int64_t u = 0; u < c.users; ++u) {
    Rng rng(stream_key(c.seed, kLengthStream, uint64_t(u)));
    const double len = std::exp(mu + c.length_sigma * rng.normal());
    length[size_t(u)] = std::clamp<int64_t>(std::llround(len), c.min_length, int64_t(20 * c.mean_length) + c.min_length);
  }
  SequenceDataset d;
  d.offsets.assign(size_t(c.users + 1), 0);
  for (int64_t u = 0; u < c.users; ++u) d.offsets[size_t(u + 1)] = d.offsets[size_t(u)] + length[size_t(u)];
  d.items.assign(size_t(d.offsets.back()), 0);
  d.user_ids.resize(size_t(c.users));
  d.num_items = c.items;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads)
  for (int64_t u = 0; u < c.users; ++u) {
    d.user_ids[size_t(u)] = u + 1;
    Rng rng(stream_key(c.seed, kEventStream, uint64_t(u)));
    std::vector<int64_t> fav;
    while (int64_t(fav.size()) < c.clusters_per_user) {  // distinct non-empty clusters
      const int64_t k = int64_t(rng.below(uint64_t(c.clusters)));
      if (!members[size_t(k)].empty() && std::find(fav.begin(), fav.end(), k) == fav.end()) fav.push_back(k);
    }
    size_t current = 0;
    int32_t* out = d.items.data() + d.offsets[size_t(u)];
    for (int64_t t = 0; t < length[size_t(u)]; ++t) {
      if (fav.size() > 1 && rng.uniform() >= c.stay) current = (current + 1 + rng.below(fav.size() - 1)) % fav.size();
      if (rng.uniform() < c.signal) {
        const int64_t k = fav[current];
        out[t] = members[size_t(k)][within[size_t(k)].sample(rng)];
      } else {
        out[t] = int32_t(global.sample(rng) + 1);
      }
    }
  }
  return d;
}

}  // namespace lobench::data
