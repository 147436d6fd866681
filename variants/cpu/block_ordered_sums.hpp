// Adding the tiles' float sums into the outputs in vocabulary-block order, whatever thread made each
// tile, without making the threads wait for one another at every tile.
//
// Floating-point addition is not associative, so a sum over vocabulary blocks must be made in one fixed
// order for the outputs not to depend on the thread count. A tile's per-position sums (its loss terms and
// its share G·E_b of dA) go to one of `slots` result slots (block vb uses slot vb % slots); whichever
// thread finds the next block in order ready adds it into the outputs (one drainer at a time, the others
// carry on computing), and a thread only waits when it runs a whole `slots` blocks ahead of the slowest
// one. With 2 slots per thread, a thread that the operating system deschedules for a while (a shared
// machine) holds the others up no more than the end-of-chunk barrier would anyway.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "counting_allocator.hpp"

namespace lobench::cpu {

class BlockOrderedSums {
 public:
  static int slots_for(int threads) { return 2 * std::max(threads, 1); }

  BlockOrderedSums(int threads, int64_t block_p, int64_t D, CountingAllocator& alloc)
      : slots_(slots_for(threads)), block_p_(block_p), D_(D),
        loss_(alloc, slots_ * block_p), dA_(alloc, slots_ * block_p * D), ready_(size_t(slots_)) {}

  // Exactly what the constructor allocates.
  static int64_t bytes(int threads, int64_t block_p, int64_t D) {
    return int64_t(slots_for(threads)) * block_p * (8 + D * 4);
  }

  // One thread, while no other uses this object: the next chunk's outputs (rows positions; either
  // pointer null when that sum is not made).
  void start_chunk(double* out_loss, float* out_dA, int64_t rows) {
    out_loss_ = out_loss;
    out_dA_ = out_dA;
    rows_ = rows;
    next_.store(0, std::memory_order_relaxed);
    for (auto& r : ready_) r.store(-1, std::memory_order_relaxed);
  }

  // The slot block vb writes its sums into (loss: [rows], dA: [rows, D]), once the block that used it
  // before has been added. Helps add blocks while it waits.
  double* loss_slot(int64_t vb) { return loss_.data() + (vb % slots_) * block_p_; }
  float* dA_slot(int64_t vb) { return dA_.data() + (vb % slots_) * block_p_ * D_; }
  void wait_for_slot(int64_t vb) {
    while (next_.load(std::memory_order_acquire) <= vb - slots_) {
      if (!try_drain()) std::this_thread::yield();
    }
  }

  // Block vb's sums are in its slot: adds every block that is next in order, if no other thread is.
  void publish(int64_t vb) {
    ready_[size_t(vb % slots_)].store(vb, std::memory_order_release);
    try_drain();
  }

  // One thread, after every block of the chunk is published: adds what is left.
  void finish_chunk() {
    std::lock_guard<std::mutex> lock(drain_);
    drain_locked();
  }

 private:
  bool try_drain() {
    if (!drain_.try_lock()) return false;
    drain_locked();
    drain_.unlock();
    return true;
  }

  void drain_locked() {
    for (int64_t b = next_.load(std::memory_order_relaxed);; ++b) {
      std::atomic<int64_t>& r = ready_[size_t(b % slots_)];
      if (r.load(std::memory_order_acquire) != b) return;
      if (out_loss_) {
        const double* l = loss_slot(b);
        for (int64_t i = 0; i < rows_; ++i) out_loss_[i] += l[i];
      }
      if (out_dA_) {
        const float* g = dA_slot(b);
        for (int64_t i = 0; i < rows_ * D_; ++i) out_dA_[i] += g[i];
      }
      r.store(-1, std::memory_order_relaxed);
      next_.store(b + 1, std::memory_order_release);
    }
  }

  int slots_;
  int64_t block_p_, D_;
  Buffer<double> loss_;
  Buffer<float> dA_;
  std::vector<std::atomic<int64_t>> ready_;  // per slot: the block whose sums it holds, -1 when none
  std::atomic<int64_t> next_{0};              // the next block to add
  std::mutex drain_;
  double* out_loss_ = nullptr;
  float* out_dA_ = nullptr;
  int64_t rows_ = 0;
};

}  // namespace lobench::cpu
