#include "harness/shard/label_shard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/shard/layout.hpp"
#include "variants/operand.hpp"

namespace lobench::shard {
namespace {

// Every rank's [rows, k] top lists → the best k of their union per row, (score desc, id asc) as the
// classifier orders them, so the result equals the whole head's top-k.
void merge_topk(MPI_Comm comm, int32_t* ids, float* scores, int64_t rows, int k, CommStats& st) {
  int R = 1;
  MPI_Comm_size(comm, &R);
  const double t0 = MPI_Wtime();
  const int n = int(rows * k);
  std::vector<float> all_s(size_t(n) * size_t(R));
  std::vector<int32_t> all_i(size_t(n) * size_t(R));
  MPI_Allgather(scores, n, MPI_FLOAT, all_s.data(), n, MPI_FLOAT, comm);
  MPI_Allgather(ids, n, MPI_INT32_T, all_i.data(), n, MPI_INT32_T, comm);
  st.bytes_sent += 2 * int64_t(R - 1) * n * 4;
  st.bytes_received += 2 * int64_t(R - 1) * n * 4;
  st.collectives += 2;
  std::vector<std::pair<float, int32_t>> cand(static_cast<size_t>(R) * size_t(k));
  for (int64_t b = 0; b < rows; ++b) {
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < k; ++j) {
        const size_t src = size_t(r) * size_t(n) + size_t(b * k + j);
        cand[size_t(r * k + j)] = {all_s[src], all_i[src]};
      }
    std::partial_sort(cand.begin(), cand.begin() + k, cand.end(), [](const auto& x, const auto& y) {
      return x.first > y.first || (x.first == y.first && x.second < y.second);
    });
    for (int j = 0; j < k; ++j) {
      scores[b * k + j] = cand[size_t(j)].first;
      ids[b * k + j] = cand[size_t(j)].second;
    }
  }
  st.seconds += MPI_Wtime() - t0;
}

}  // namespace

train::LabelShard make_label_shard(MPI_Comm comm, int64_t labels, CommStats* stats) {
  int R = 1, me = 0;
  MPI_Comm_size(comm, &R);
  MPI_Comm_rank(comm, &me);
  const Range mine = split_range(labels, R, me);
  // The hooks outlive this call: they share the account, the caller's (not owned) or a private one.
  const std::shared_ptr<CommStats> sink =
      stats ? std::shared_ptr<CommStats>(stats, [](CommStats*) {}) : std::make_shared<CommStats>();
  train::LabelShard s;
  s.begin = mine.begin;
  s.end = mine.end;
  s.sum_floats_bytes = [R, me](int64_t n) { return ordered_sum_buffer_bytes(n, R, 4, me); };
  s.sum_floats = [comm, sink](float* x, int64_t n, CountingAllocator& alloc) {
    ordered_sum(comm, x, n, alloc, *sink);
  };
  s.sum_double = [comm, sink](double x) {
    CountingAllocator scratch;  // one value per rank: not the trainer's working memory
    ordered_sum(comm, &x, 1, scratch, *sink);
    return x;
  };
  s.sum_int = [comm, sink](int64_t x) {
    exact_sum(comm, &x, 1, *sink);
    return x;
  };
  s.merge_topk = [comm, sink](int32_t* ids, float* scores, int64_t rows, int k) {
    merge_topk(comm, ids, scores, rows, k, *sink);
  };
  return s;
}

train::RunOutcome train_xmc_sharded(MPI_Comm comm, const data::TrainTest& data, const train::TrainConfig& cfg,
                                    CommStats* stats, const train::ProgressFn& progress,
                                    const train::EpochFn& on_epoch) {
  int me = 0;
  MPI_Comm_rank(comm, &me);
  const train::DataShape shape = train::DataShape::of(data);
  const train::LabelShard shard =
      make_label_shard(comm, shape.num_labels, stats);
  // The checks train_xmc makes before its first collective, made collectively here: a shard too small
  // or a bad configuration on any rank stops all of them (no rank left inside a sum).
  std::string error;
  try {
    cfg.validate();
    if (is_fp8(parse_operand(cfg.operand)))
      throw std::invalid_argument("--operand " + cfg.operand + ": the weights' per-tensor scale comes from the whole "
                                  "head's max |W|, which the label shards do not gather");
    if (shard.size() < 5 || cfg.hist_every > 0)
      throw std::invalid_argument(shard.size() < 5 ? fmt::format("its label shard [{}, {}) holds fewer than the 5 labels P@5 needs",
                                                                 shard.begin, shard.end)
                                                   : "--hist-every: gradient histograms are not gathered across label shards");
  } catch (const std::exception& e) {
    error = e.what();
  }
  agree_or_throw(comm, error, me);
  return train::train_xmc(data, cfg, progress, on_epoch, &shard);
}

}  // namespace lobench::shard
