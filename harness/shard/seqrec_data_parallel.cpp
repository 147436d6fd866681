#include "harness/shard/seqrec_data_parallel.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "harness/seqrec/fixed_order_sum.hpp"
#include "harness/shard/collectives.hpp"
#include "harness/shard/mpi_session.hpp"

namespace lobench::shard {
namespace {

class MpiGradientExchange final : public seqrec::GradientExchange {
 public:
  MpiGradientExchange() : session_(nullptr, nullptr) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int ranks() const override { return size_; }
  std::string library() const override { return mpi_library_version(); }

  void sum(float* x, int64_t n, const std::vector<char>& present) override {
    CommStats st;
    // Each segment's copies summed by the tree over ranks, absent ranks skipped (fixed_order_sum.hpp).
    const SegmentSum tree = [&present](float* copies, int64_t count, int R, float* out) {
      if (seqrec::tree_sum_rows(copies, count, 0, R, present.data())) std::copy_n(copies, count, out);
    };
    combined_sum(MPI_COMM_WORLD, x, n, tree, alloc_, st);
    add(st);
    totals_.buffer_peak_bytes = std::max(totals_.buffer_peak_bytes, alloc_.peak_bytes());
  }
  int64_t sum_buffer_bytes(int64_t n) const override { return ordered_sum_buffer_bytes(n, size_, 4, rank_); }

  std::vector<double> gather(const std::vector<double>& mine) override {
    std::vector<double> all;
    CommStats st;
    all_gather(MPI_COMM_WORLD, mine.data(), int64_t(mine.size()), all, st);
    add(st);
    return all;
  }
  std::vector<int64_t> gather(const std::vector<int64_t>& mine) override {
    // Integers travel exactly as doubles only up to 2^53: as raw 64-bit words instead.
    std::vector<int64_t> all(mine.size() * size_t(size_));
    const double t0 = MPI_Wtime();
    MPI_Allgather(mine.data(), int(mine.size()), MPI_INT64_T, all.data(), int(mine.size()), MPI_INT64_T, MPI_COMM_WORLD);
    CommStats st;
    st.seconds = MPI_Wtime() - t0;
    st.bytes_sent = st.bytes_received = int64_t(size_ - 1) * int64_t(mine.size()) * 8;
    st.collectives = 1;
    add(st);
    return all;
  }
  int64_t largest(int64_t value) override {
    int64_t max = 0;
    MPI_Allreduce(&value, &max, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);  // exact in any order
    return max;
  }
  int64_t agree(int64_t value) override {
    MPI_Bcast(&value, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    return value;
  }
  void check(const std::string& error) override { agree_or_throw(MPI_COMM_WORLD, error, rank_); }
  bool shared_failure(const std::exception& e) const override { return dynamic_cast<const RankFailure*>(&e) != nullptr; }

  [[noreturn]] void abort_all(const std::string& message) const override {
    std::fprintf(stderr, "lobench: error: rank %d: %s (ending every rank)\n", rank_, message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
    std::abort();  // MPI_Abort does not return
  }
  const seqrec::ExchangeTotals& totals() const override { return totals_; }
  void reset_totals() override {
    totals_ = {};
    alloc_.reset_peak();
  }

 private:
  void add(const CommStats& st) {
    totals_.seconds += st.seconds;
    totals_.bytes_sent += st.bytes_sent;
    totals_.bytes_received += st.bytes_received;
    totals_.collectives += st.collectives;
  }
  MpiSession session_;
  int rank_ = 0, size_ = 1;
  CountingAllocator alloc_;  // the sums' receive buffers
  seqrec::ExchangeTotals totals_;
};

}  // namespace

std::unique_ptr<seqrec::GradientExchange> make_mpi_gradient_exchange() { return std::make_unique<MpiGradientExchange>(); }

}  // namespace lobench::shard
