// Adding the tiles' float sums into the outputs in vocabulary-block order, whatever thread made each
// tile, without making the threads wait for one another at every tile.
//
// Floating-point addition is not associative, so a sum over vocabulary blocks must be made in one fixed
// order for the outputs not to depend on the thread count. A tile's sums (a vector of float64 losses and
// a vector of float32 gradients: per-position loss and G·E_b of dA in the tiled variants, the batch
// loss and G·W of dH in the XMC classifier) go to one of `slots` result slots (block vb uses slot vb % slots); whichever
// thread finds the next block in order ready adds it into the outputs (one drainer at a time, the others
// carry on computing), and a thread only waits when it runs a whole `slots` blocks ahead of the slowest
// one. It waits asleep (a futex, std::atomic::wait), not spinning: on a shared machine a spinning waiter
// takes CPU time from the very thread it waits for.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "variants/counting_allocator.hpp"

namespace lobench::cpu {

class BlockOrderedSums {
 public:
  static int slots_for(int threads) { return 2 * std::max(threads, 1); }

  // Slots for up to `loss_len` float64 and `grad_len` float32 sums per block.
  BlockOrderedSums(int threads, int64_t loss_len, int64_t grad_len, CountingAllocator& alloc)
      : slots_(slots_for(threads)), loss_len_(loss_len), grad_len_(grad_len),
        loss_(alloc, slots_ * loss_len), grad_(alloc, slots_ * grad_len), ready_(size_t(slots_)) {}

  // Exactly what the constructor allocates.
  static int64_t bytes(int threads, int64_t loss_len, int64_t grad_len) {
    return int64_t(slots_for(threads)) * (loss_len * 8 + grad_len * 4);
  }

  // One thread, while no other uses this object: where the next blocks' sums go, loss_n and grad_n
  // values of them (a pointer null when that sum is not made).
  void start_chunk(double* out_loss, int64_t loss_n, float* out_grad, int64_t grad_n) {
    out_loss_ = out_loss;
    out_grad_ = out_grad;
    loss_n_ = loss_n;
    grad_n_ = grad_n;
    next_.store(0, std::memory_order_relaxed);
    for (auto& r : ready_) r.store(-1, std::memory_order_relaxed);
  }

  // The slot block vb writes its sums into (loss_n and grad_n values), once the block that used it
  // before has been added (wait_for_slot, which helps add blocks while it waits).
  double* loss_slot(int64_t vb) { return loss_.data() + (vb % slots_) * loss_len_; }
  float* grad_slot(int64_t vb) { return grad_.data() + (vb % slots_) * grad_len_; }
  void wait_for_slot(int64_t vb) {
    for (;;) {
      const int64_t next = next_.load(std::memory_order_seq_cst);
      if (next > vb - slots_) return;
      try_drain();
      // Asleep until a drainer moves next_ on. The block it waits for is either being computed by its
      // thread, whose publish drains it, or published already, and then the try_drain above added it.
      if (next_.load(std::memory_order_seq_cst) == next) next_.wait(next, std::memory_order_seq_cst);
    }
  }

  // Block vb's sums are in its slot: adds every block that is next in order, if no other thread is.
  void publish(int64_t vb) {
    ready_[size_t(vb % slots_)].store(vb, std::memory_order_seq_cst);
    try_drain();
  }

  // One thread, after every block of the chunk is published: adds what is left.
  void finish_chunk() { try_drain(); }

 private:
  // Adds the blocks that are next in order, unless another thread is doing so. After letting go, looks
  // again: a block published while it held the flag (whose publisher found the flag taken) is added now
  // (every access seq_cst: either the publisher sees the flag free, or this thread sees its block).
  void try_drain() {
    while (!draining_.exchange(true, std::memory_order_seq_cst)) {
      drain_held();
      draining_.store(false, std::memory_order_seq_cst);
      const int64_t b = next_.load(std::memory_order_seq_cst);
      if (ready_[size_t(b % slots_)].load(std::memory_order_seq_cst) != b) return;
    }
  }

  void drain_held() {
    for (int64_t b = next_.load(std::memory_order_relaxed);; ++b) {
      std::atomic<int64_t>& r = ready_[size_t(b % slots_)];
      if (r.load(std::memory_order_seq_cst) != b) return;
      if (out_loss_) {
        const double* l = loss_slot(b);
        for (int64_t i = 0; i < loss_n_; ++i) out_loss_[i] += l[i];
      }
      if (out_grad_) {
        const float* g = grad_slot(b);
        for (int64_t i = 0; i < grad_n_; ++i) out_grad_[i] += g[i];
      }
      r.store(-1, std::memory_order_relaxed);
      next_.store(b + 1, std::memory_order_seq_cst);
      next_.notify_all();
    }
  }

  int slots_;
  int64_t loss_len_, grad_len_;
  Buffer<double> loss_;
  Buffer<float> grad_;
  std::vector<std::atomic<int64_t>> ready_;  // per slot: the block whose sums it holds, -1 when none
  std::atomic<int64_t> next_{0};              // the next block to add
  std::atomic<bool> draining_{false};         // a thread is adding blocks
  double* out_loss_ = nullptr;
  float* out_grad_ = nullptr;
  int64_t loss_n_ = 0, grad_n_ = 0;
};

}  // namespace lobench::cpu
