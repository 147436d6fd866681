#include "harness/shard/collectives.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "harness/shard/layout.hpp"

namespace lobench::shard {
namespace {

template <typename T>
MPI_Datatype mpi_type();
template <>
MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <>
MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw std::runtime_error(fmt::format("{} failed: {}", what, std::string(msg, size_t(len))));
  }
}

int comm_size(MPI_Comm c) {
  int n = 1;
  MPI_Comm_size(c, &n);
  return n;
}
int comm_rank(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}

// Rank order: acc = ((x_0 + x_1) + x_2) + ..., element by element.
template <typename T>
void rank_order_sum(T* copies, int64_t count, int R, T* out) {
  for (int64_t i = 0; i < count; ++i) {
    T acc = copies[i];
    for (int j = 1; j < R; ++j) acc += copies[int64_t(j) * count + i];
    out[i] = acc;
  }
}

// One piece (n ≤ kOrderedSumPiece) of ordered_sum.
template <typename T, typename Sum>
void ordered_sum_piece(MPI_Comm comm, T* x, int64_t n, T* recv, CommStats& st, const Sum& sum) {
  const int R = comm_size(comm), me = comm_rank(comm);
  std::vector<int> seg_count(static_cast<size_t>(R)), seg_begin(static_cast<size_t>(R)), recv_count(static_cast<size_t>(R)), recv_begin(static_cast<size_t>(R));
  for (int k = 0; k < R; ++k) {
    const Range s = split_range(n, R, k);
    seg_count[size_t(k)] = int(s.size());
    seg_begin[size_t(k)] = int(s.begin);
  }
  const int mine = seg_count[size_t(me)];
  for (int j = 0; j < R; ++j) {
    recv_count[size_t(j)] = mine;
    recv_begin[size_t(j)] = j * mine;
  }
  // Reduce-scatter: rank k gets segment k of every rank's x, rank j's copy at recv[j·mine ...).
  check(MPI_Alltoallv(x, seg_count.data(), seg_begin.data(), mpi_type<T>(), recv, recv_count.data(),
                      recv_begin.data(), mpi_type<T>(), comm),
        "MPI_Alltoallv (ordered sum)");
  sum(recv, int64_t(mine), R, x + seg_begin[size_t(me)]);
  check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, x, seg_count.data(), seg_begin.data(), mpi_type<T>(), comm),
        "MPI_Allgatherv (ordered sum)");
  const int64_t sent = (n - mine) + int64_t(R - 1) * mine;  // segments to others, then my sum to each other rank
  const int64_t received = int64_t(R - 1) * mine + (n - mine);
  st.bytes_sent += sent * int64_t(sizeof(T));
  st.bytes_received += received * int64_t(sizeof(T));
  st.collectives += 2;
}

// The short-vector path: every rank's x on rank 0, summed there in rank order, broadcast back.
template <typename T, typename Sum>
void gathered_sum(MPI_Comm comm, T* x, int64_t n, T* recv, CommStats& st, const Sum& sum) {
  const int R = comm_size(comm), me = comm_rank(comm);
  check(MPI_Gather(x, int(n), mpi_type<T>(), recv, int(n), mpi_type<T>(), 0, comm), "MPI_Gather (ordered sum)");
  if (me == 0) sum(recv, n, R, x);  // the same expression as ordered_sum_piece's
  check(MPI_Bcast(x, int(n), mpi_type<T>(), 0, comm), "MPI_Bcast (ordered sum)");
  const int64_t bytes = n * int64_t(sizeof(T));
  st.bytes_sent += me == 0 ? int64_t(R - 1) * bytes : bytes;  // what a flat gather and broadcast move
  st.bytes_received += me == 0 ? int64_t(R - 1) * bytes : bytes;
  st.collectives += 2;
}

template <typename T, typename Sum>
void ordered_sum_impl(MPI_Comm comm, T* x, int64_t n, CountingAllocator& alloc, CommStats& st, const Sum& sum) {
  const int R = comm_size(comm);
  if (R == 1 || n == 0) return;
  const double t0 = MPI_Wtime();
  Buffer<T> recv(alloc, ordered_sum_buffer_bytes(n, R, sizeof(T), comm_rank(comm)) / int64_t(sizeof(T)));
  if (n * int64_t(sizeof(T)) <= kGatherSumBytes) {
    gathered_sum(comm, x, n, recv.data(), st, sum);
  } else {
    for (int64_t off = 0; off < n; off += kOrderedSumPiece)
      ordered_sum_piece(comm, x + off, std::min(kOrderedSumPiece, n - off), recv.data(), st, sum);
  }
  st.seconds += MPI_Wtime() - t0;
}

template <typename T>
void all_gather_impl(MPI_Comm comm, const T* mine, int64_t count, std::vector<T>& all, CommStats& st) {
  const double t0 = MPI_Wtime();
  const int R = comm_size(comm);
  if (count > INT32_MAX) throw std::runtime_error(fmt::format("all_gather of {} elements exceeds an MPI count", count));
  int c = int(count);
  std::vector<int> counts(static_cast<size_t>(R)), begins(static_cast<size_t>(R));
  check(MPI_Allgather(&c, 1, MPI_INT, counts.data(), 1, MPI_INT, comm), "MPI_Allgather (counts)");
  int64_t total = 0;
  for (int r = 0; r < R; ++r) {
    if (total > INT32_MAX) throw std::runtime_error("all_gather: total exceeds an MPI count");
    begins[size_t(r)] = int(total);
    total += counts[size_t(r)];
  }
  all.resize(size_t(total));
  check(MPI_Allgatherv(mine, c, mpi_type<T>(), all.data(), counts.data(), begins.data(), mpi_type<T>(), comm),
        "MPI_Allgatherv");
  st.bytes_sent += int64_t(R - 1) * count * int64_t(sizeof(T));
  st.bytes_received += (total - count) * int64_t(sizeof(T));
  st.collectives += 2;
  st.seconds += MPI_Wtime() - t0;
}

}  // namespace

int64_t ordered_sum_buffer_bytes(int64_t n, int ranks, int64_t elem, int rank) {
  if (ranks <= 1 || n == 0) return 0;
  if (n * elem <= kGatherSumBytes) return rank == 0 ? n * ranks * elem : 0;
  const int64_t piece = std::min(n, kOrderedSumPiece);
  return split_range(piece, ranks, 0).size() * ranks * elem;  // segment 0 is the largest
}

void ordered_sum(MPI_Comm comm, float* x, int64_t n, CountingAllocator& alloc, CommStats& stats) {
  ordered_sum_impl(comm, x, n, alloc, stats, rank_order_sum<float>);
}
void ordered_sum(MPI_Comm comm, double* x, int64_t n, CountingAllocator& alloc, CommStats& stats) {
  ordered_sum_impl(comm, x, n, alloc, stats, rank_order_sum<double>);
}
void combined_sum(MPI_Comm comm, float* x, int64_t n, const SegmentSum& segment_sum, CountingAllocator& alloc,
                  CommStats& stats) {
  ordered_sum_impl(comm, x, n, alloc, stats, segment_sum);
}

void exact_sum(MPI_Comm comm, int64_t* x, int64_t n, CommStats& st) {
  const int R = comm_size(comm);
  if (R == 1 || n == 0) return;
  const double t0 = MPI_Wtime();
  for (int64_t off = 0; off < n; off += kOrderedSumPiece) {
    const int64_t m = std::min(kOrderedSumPiece, n - off);
    check(MPI_Allreduce(MPI_IN_PLACE, x + off, int(m), MPI_INT64_T, MPI_SUM, comm), "MPI_Allreduce (counts)");
    st.bytes_sent += 2 * m * 8 * (R - 1) / R;  // what a bandwidth-optimal allreduce moves
    st.bytes_received += 2 * m * 8 * (R - 1) / R;
    st.collectives += 1;
  }
  st.seconds += MPI_Wtime() - t0;
}

void all_gather(MPI_Comm comm, const double* mine, int64_t count, std::vector<double>& all, CommStats& stats) {
  all_gather_impl(comm, mine, count, all, stats);
}
void all_gather(MPI_Comm comm, const float* mine, int64_t count, std::vector<float>& all, CommStats& stats) {
  all_gather_impl(comm, mine, count, all, stats);
}

void agree_or_throw(MPI_Comm comm, const std::string& error, int world_rank) {
  int failed = error.empty() ? 0 : 1, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm);
  if (!any) return;
  // Everyone learns every message, so that every rank throws the same RankFailure.
  const std::string mine = error.empty() ? std::string() : fmt::format("rank {}: {}\n", world_rank, error);
  const int R = comm_size(comm);
  int len = int(mine.size());
  std::vector<int> lens(static_cast<size_t>(R)), begins(static_cast<size_t>(R));
  MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm);
  int total = 0;
  for (int r = 0; r < R; ++r) {
    begins[size_t(r)] = total;
    total += lens[size_t(r)];
  }
  std::string all(size_t(total), '\0');
  MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), begins.data(), MPI_CHAR, comm);
  if (!all.empty() && all.back() == '\n') all.pop_back();
  throw RankFailure(all);
}

std::string mpi_library_version() {
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(lib, &len);
  std::string s(lib, size_t(len));
  const auto nl = s.find_first_of("\n,");
  if (nl != std::string::npos) s.resize(nl);
  int major = 0, minor = 0;
  MPI_Get_version(&major, &minor);
  return fmt::format("{} (MPI {}.{})", s, major, minor);
}

}  // namespace lobench::shard
