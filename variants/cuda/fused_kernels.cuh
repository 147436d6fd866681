// The fused GPU step's two kernels (see fused.cu for the algorithm and why there are two). Both compute
// 64×64 logit tiles from shared-memory operand tiles and consume them on chip; neither writes a logit
// to device memory.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "variants/cuda/bce_element.cuh"
#include "variants/cuda/fused_tiles.cuh"

namespace lobench::cuda::fused {

// Rows [first, first + 64) of an [n, D] matrix, read as the operand type: either stored in it
// (`values`) or as 8-bit codes decoded through a 256-entry table (already in shared memory).
template <typename T>
struct MatrixSource {
  const T* values = nullptr;
  const uint8_t* codes = nullptr;
};

// Byte offsets of the shared-memory regions of one block (host and device agree on them).
struct SmemLayout {
  int ldo = 0;  // operand tile row stride (elements)
  int r_off = 0, c_off = 0, s_off = 0, g_off = 0, staging_off = 0, tg_off = 0, w_off = 0, table_off = 0, bytes = 0;

  template <typename T>
  __host__ __device__ static SmemLayout make(int Dp, int L, bool staging_aliases_operands) {
    auto align = [](int x) { return (x + 127) / 128 * 128; };
    SmemLayout s;
    s.ldo = operand_ld<T>(Dp);
    const int operand_bytes = kTile * s.ldo * int(sizeof(T));
    const int staging_bytes = kTile * staging_ld(Dp) * 4;
    s.r_off = 0;
    s.c_off = align(operand_bytes);
    int end = s.c_off + align(operand_bytes);
    if (staging_aliases_operands && staging_bytes <= end) {
      s.staging_off = 0;  // used only after the last tile, when the operand tiles are dead
    } else {
      s.staging_off = end;
      end += align(staging_bytes);
    }
    s.s_off = end;
    end += align(kTile * kLdS * 4);
    s.g_off = end;
    end += align(kTile * gradient_ld<T>() * int(sizeof(T)));
    s.tg_off = end;
    end += align(kTile * L * 4);
    s.w_off = end;
    end += align(kTile * 4);
    s.table_off = end;
    end += align(256 * 4);
    s.bytes = end;
    return s;
  }
};

// The regions of SmemLayout as typed pointers into the block's dynamic shared memory.
template <typename T>
struct TileSmem {
  SmemLayout lay;
  T *R, *C, *G;
  float *S, *staging, *ws, *table;
  int* tg;
  __device__ TileSmem(unsigned char* smem, int Dp, int L, bool staging_aliases_operands)
      : lay(SmemLayout::make<T>(Dp, L, staging_aliases_operands)),
        R(reinterpret_cast<T*>(smem + lay.r_off)),
        C(reinterpret_cast<T*>(smem + lay.c_off)),
        G(reinterpret_cast<T*>(smem + lay.g_off)),
        S(reinterpret_cast<float*>(smem + lay.s_off)),
        staging(reinterpret_cast<float*>(smem + lay.staging_off)),
        ws(reinterpret_cast<float*>(smem + lay.w_off)),
        table(reinterpret_cast<float*>(smem + lay.table_off)),
        tg(reinterpret_cast<int*>(smem + lay.tg_off)) {}
};

template <typename T>
__device__ void load_tile(T* dst, int ldo, MatrixSource<T> src, const float* table, int64_t first, int64_t n, int D,
                          int Dp) {
  constexpr int kVec = 16 / int(sizeof(T));  // elements per 16-byte access
  if (src.values && D % kVec == 0) {
    // 16-byte copies: global rows (D·sizeof(T) bytes) and shared rows (ldo·sizeof(T)) are multiples of 16.
    const int vpr = D / kVec;
    for (int i = threadIdx.x; i < kTile * vpr; i += kThreads) {
      const int r = i / vpr, q = i - r * vpr;
      uint4 v = make_uint4(0u, 0u, 0u, 0u);
      if (first + r < n) v = *reinterpret_cast<const uint4*>(src.values + (first + r) * D + q * kVec);
      *reinterpret_cast<uint4*>(dst + r * ldo + q * kVec) = v;
    }
  } else if (src.codes && D % 8 == 0) {
    // Eight codes (8 bytes) per access, each widened through the table.
    const int vpr = D / 8;
    for (int i = threadIdx.x; i < kTile * vpr; i += kThreads) {
      const int r = i / vpr, q = i - r * vpr;
      uint2 v = make_uint2(0u, 0u);
      if (first + r < n) v = *reinterpret_cast<const uint2*>(src.codes + (first + r) * D + q * 8);
      // Widened in registers, then one 16-byte store (bf16) or two (float): dst + r·ldo + 8q is 16-byte aligned.
      T w[8];
#pragma unroll
      for (int b = 0; b < 8; ++b) {
        const uint32_t word = b < 4 ? v.x : v.y;
        // Rows beyond n are written as 0 (not as whatever code 0 decodes to).
        w[b] = first + r < n ? to_operand<T>(table[(word >> (8 * (b % 4))) & 0xffu]) : to_operand<T>(0.0f);
      }
      // The eight values' bytes into 16-byte words by memcpy (reading a T array through a uint4 pointer
      // would be type punning, undefined behaviour); the compiler turns it into register moves.
      constexpr int kWords = int(8 * sizeof(T) / 16);
      uint4 packed[kWords];
      static_assert(sizeof(packed) == sizeof(w), "eight operand values fill whole 16-byte words");
      memcpy(packed, w, sizeof(w));
      uint4* out = reinterpret_cast<uint4*>(dst + r * ldo + q * 8);
#pragma unroll
      for (int u = 0; u < kWords; ++u) out[u] = packed[u];
    }
  } else {
    for (int i = threadIdx.x; i < kTile * D; i += kThreads) {
      const int r = i / D, k = i - r * D;
      const int64_t row = first + r;
      T v = to_operand<T>(0.0f);
      if (row < n) {
        const int64_t at = row * D + k;
        v = src.values ? src.values[at] : to_operand<T>(table[src.codes[at]]);
      }
      dst[r * ldo + k] = v;
    }
  }
  // Columns D .. Dp−1 are zero, so that they add nothing to any product.
  const int pad = Dp - D;
  if (pad > 0)
    for (int i = threadIdx.x; i < kTile * pad; i += kThreads) dst[(i / pad) * ldo + D + i % pad] = to_operand<T>(0.0f);
}

// The targets and weights of positions first .. first+63 (−1 and 0 beyond P).
__device__ inline void load_positions(int* tg, float* ws, const int32_t* tgt, const float* weights, float scale,
                                      int64_t first, int64_t P, int L) {
  for (int i = threadIdx.x; i < kTile * L; i += kThreads) {
    const int64_t p = first + i / L;
    tg[i] = p < P ? tgt[p * L + i % L] : -1;
  }
  for (int r = threadIdx.x; r < kTile; r += kThreads) {
    const int64_t p = first + r;
    ws[r] = p < P ? scale * weights[p] : 0.0f;
  }
}

// Per-thread running sums of the rows kernel.
struct RowSums {
  double loss = 0.0;
  int pos = 0, tp = 0, fn = 0;
};

// G = s·w·(σ(S) − y) for the tile: thread t handles row t / 4, columns t mod 4, +4, +8, ... (so that
// the eight rows of a warp's loads fall in different banks) as negatives (y = 0); columns at or beyond
// V get 0. With kLoss, also the element losses (added in float64, as in bce_rows: sixteen float
// additions per tile would already cost 1e-7 of the loss) and the positive count.
template <typename T, bool kLoss>
__device__ void gradient_negatives(const float* S, T* G, const float* ws, int64_t v0, int64_t V, RowSums& sums) {
  constexpr int ldg = gradient_ld<T>();
  const int r = threadIdx.x / 4;
  const float sw = ws[r];
#pragma unroll 4
  for (int j = 0; j < 16; ++j) {
    const int c = threadIdx.x % 4 + 4 * j;
    const float x = S[r * kLdS + c];
    float g = 0.0f;
    if (v0 + c < V) {
      if constexpr (kLoss) {
        const SoftplusSigmoid f = softplus_sigmoid(x);
        sums.loss += double(f.softplus);
        sums.pos += x > 0.0f;
        g = sw * f.sigmoid;
      } else {
        g = sw * sigmoid(x);
      }
    }
    G[r * ldg + c] = to_operand<T>(g);
  }
}

// The positives of the tile (unique ids, so each element is fixed once): y = 1 changes the gradient to
// s·w·(σ(x) − 1) and the element loss by −x. Thread t takes slots t mod 4, +4, ... of row t / 4, so a
// row's sums stay with the same four threads. Runs after gradient_negatives and a barrier.
template <typename T, bool kLoss>
__device__ void gradient_positives(const float* S, T* G, const float* ws, const int* tg, int L, int64_t v0,
                                   RowSums& sums) {
  constexpr int ldg = gradient_ld<T>();
  const int r = threadIdx.x / 4;
  for (int l = threadIdx.x % 4; l < L; l += 4) {
    const int64_t id = tg[r * L + l];
    if (id < v0 || id >= v0 + kTile) continue;  // −1 (none) or another tile
    const int c = int(id - v0);
    const float x = S[r * kLdS + c];
    G[r * ldg + c] = to_operand<T>(-ws[r] * sigmoid(-x));  // σ(x) − 1 = −σ(−x), without cancellation
    if constexpr (kLoss) {
      sums.loss -= double(x);
      sums.tp += x > 0.0f;
      sums.fn += !(x > 0.0f);
    }
  }
}

// What both kernels read: the problem's shape, the gradient scale, the targets, the weights and E's code
// table. (The cols kernel takes exactly this.)
struct ScanArgs {
  int64_t P = 0, V = 0;
  int D = 0, Dp = 0, L = 0;
  float scale = 0.0f;
  const int32_t* tgt = nullptr;  // [P, L] unique valid ids
  const float* weights = nullptr;
  const float* table = nullptr;  // [256] when E is read as codes
};

// ---------------------------------------------------------------------------------------------------
// The rows kernel: block (bx, split) owns positions 64·bx .. +63 and scans the vocabulary tiles of its
// split, accumulating that split's share of dA, of the per-position loss sums and of the counts into
// `partial` buffers (summed over the splits afterwards in a fixed order: reduce_splits_kernel).

// What the rows kernel reads besides: its share of the vocabulary and the partial outputs it writes.
struct RowsArgs : ScanArgs {
  int64_t tiles_per_split = 0;       // vocabulary tiles of 64 per split
  float* dA_part = nullptr;          // [splits, P, D]
  double* loss_part = nullptr;       // [splits, P]
  long long* counts_part = nullptr;  // [splits, P, 4]
};

template <class Ops>
__global__ void __launch_bounds__(kThreads) rows_kernel(RowsArgs a, MatrixSource<typename Ops::Operand> A,
                                                        MatrixSource<typename Ops::Operand> E) {
  using T = typename Ops::Operand;
  extern __shared__ __align__(128) unsigned char smem[];
  const TileSmem<T> sm(smem, a.Dp, a.L, Ops::kRegisterAccumulators);

  const int64_t p0 = int64_t(blockIdx.x) * kTile;
  const int split = blockIdx.y;
  const int64_t n_tiles = (a.V + kTile - 1) / kTile;
  const int64_t t_begin = split * a.tiles_per_split;
  const int64_t t_end = t_begin + a.tiles_per_split < n_tiles ? t_begin + a.tiles_per_split : n_tiles;

  if (a.table)
    for (int i = threadIdx.x; i < 256; i += kThreads) sm.table[i] = a.table[i];
  // (A is always given as values, so its load below needs no barrier after the table's; E's loads in
  // the loop come after the barrier below.)
  load_positions(sm.tg, sm.ws, a.tgt, a.weights, a.scale, p0, a.P, a.L);
  load_tile(sm.R, sm.lay.ldo, A, sm.table, p0, a.P, a.D, a.Dp);
  typename Ops::Acc acc;
  Ops::zero(acc, sm.staging, a.Dp);
  RowSums sums;
  __syncthreads();

  for (int64_t t = t_begin; t < t_end; ++t) {
    const int64_t v0 = t * kTile;
    load_tile(sm.C, sm.lay.ldo, E, sm.table, v0, a.V, a.D, a.Dp);
    __syncthreads();
    Ops::logits(sm.R, sm.C, sm.lay.ldo, a.Dp, sm.S);
    __syncthreads();
    gradient_negatives<T, true>(sm.S, sm.G, sm.ws, v0, a.V, sums);
    __syncthreads();
    gradient_positives<T, true>(sm.S, sm.G, sm.ws, sm.tg, a.L, v0, sums);
    __syncthreads();
    Ops::template accumulate<false>(acc, sm.staging, sm.G, sm.C, sm.lay.ldo, a.Dp);
    __syncthreads();
  }

  Ops::stage(acc, sm.staging, a.Dp);
  __syncthreads();
  const int sld = staging_ld(a.Dp);
  float* dA = a.dA_part + int64_t(split) * a.P * a.D;
  for (int i = threadIdx.x; i < kTile * a.D; i += kThreads) {
    const int r = i / a.D, k = i % a.D;
    if (p0 + r < a.P) dA[(p0 + r) * a.D + k] = sm.staging[r * sld + k];
  }
  // The four threads of a row (consecutive lanes) combine their sums in a fixed order.
  for (int off = 2; off > 0; off /= 2) {
    sums.loss += __shfl_down_sync(0xffffffffu, sums.loss, off);
    sums.pos += __shfl_down_sync(0xffffffffu, sums.pos, off);
    sums.tp += __shfl_down_sync(0xffffffffu, sums.tp, off);
    sums.fn += __shfl_down_sync(0xffffffffu, sums.fn, off);
  }
  const int64_t p = p0 + threadIdx.x / 4;
  if (threadIdx.x % 4 == 0 && p < a.P) {
    const int64_t cols = t_end > t_begin ? (t_end * kTile < a.V ? t_end * kTile : a.V) - t_begin * kTile : 0;
    a.loss_part[int64_t(split) * a.P + p] = sums.loss;
    long long* c = a.counts_part + (int64_t(split) * a.P + p) * 4;
    c[0] = sums.tp;
    c[1] = sums.pos - sums.tp;
    c[2] = sums.fn;
    c[3] = cols - sums.pos - sums.fn;
  }
}

// ---------------------------------------------------------------------------------------------------
// The cols kernel: block bx owns embeddings 64·bx .. +63 and scans every position tile, accumulating
// their dE; the epilogue gets the finished [64][D] tile in shared memory (staging, row stride
// staging_ld(Dp)) and decides what to do with it (store it, or apply an optimizer step).

template <class Ops, class Epilogue>
__global__ void __launch_bounds__(kThreads) cols_kernel(ScanArgs a, MatrixSource<typename Ops::Operand> A,
                                                        MatrixSource<typename Ops::Operand> E, Epilogue epilogue) {
  using T = typename Ops::Operand;
  extern __shared__ __align__(128) unsigned char smem[];
  const TileSmem<T> sm(smem, a.Dp, a.L, Ops::kRegisterAccumulators);

  const int64_t v0 = int64_t(blockIdx.x) * kTile;
  if (a.table)
    for (int i = threadIdx.x; i < 256; i += kThreads) sm.table[i] = a.table[i];
  __syncthreads();
  load_tile(sm.C, sm.lay.ldo, E, sm.table, v0, a.V, a.D, a.Dp);
  typename Ops::Acc acc;
  Ops::zero(acc, sm.staging, a.Dp);
  RowSums unused;

  for (int64_t p0 = 0; p0 < a.P; p0 += kTile) {
    load_positions(sm.tg, sm.ws, a.tgt, a.weights, a.scale, p0, a.P, a.L);
    load_tile(sm.R, sm.lay.ldo, A, sm.table, p0, a.P, a.D, a.Dp);
    __syncthreads();
    Ops::logits(sm.R, sm.C, sm.lay.ldo, a.Dp, sm.S);
    __syncthreads();
    gradient_negatives<T, false>(sm.S, sm.G, sm.ws, v0, a.V, unused);
    __syncthreads();
    gradient_positives<T, false>(sm.S, sm.G, sm.ws, sm.tg, a.L, v0, unused);
    __syncthreads();
    Ops::template accumulate<true>(acc, sm.staging, sm.G, sm.R, sm.lay.ldo, a.Dp);
    __syncthreads();
  }
  __syncthreads();  // (P ≥ 1 always runs the loop; without it, sm.C and the sm.staging tile may overlap)

  Ops::stage(acc, sm.staging, a.Dp);
  __syncthreads();
  epilogue(sm.staging, staging_ld(a.Dp), v0, a.V, a.D);
}

// The plain epilogue: dE rows v0 .. v0+63 (those below V) written out.
struct StoreGradientRows {
  float* dE = nullptr;  // [V, D]
  __device__ void operator()(const float* staging, int sld, int64_t v0, int64_t V, int D) const {
    for (int i = threadIdx.x; i < kTile * D; i += kThreads) {
      const int r = i / D, k = i % D;
      if (v0 + r < V) dE[(v0 + r) * D + k] = staging[r * sld + k];
    }
  }
};

}  // namespace lobench::cuda::fused
