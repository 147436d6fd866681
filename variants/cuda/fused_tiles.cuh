// The building blocks of the fused GPU kernels (fused.cu): 64×64 logit tiles computed from operand
// tiles in shared memory, consumed on chip, and the gradient products accumulated from them.
//
// Three operand paths behind one interface (`Ops`):
//   OpsBf16  bfloat16 tiles on the tensor cores (WMMA m16n16k16), float32 accumulation
//   OpsTf32  float32 tiles on the tensor cores in TF32 (WMMA m16n16k8), float32 accumulation
//   OpsF32   float32 tiles on the CUDA cores (exact float32 products, fused multiply-adds)
//
// Tiles, all in shared memory (rows padded so that WMMA fragment origins stay 32-byte aligned):
//   R [64][ldo]  the row operand: 64 positions of A (their D values, zero-padded to Dp)
//   C [64][ldo]  the column operand: 64 embeddings of E
//   S [64][kLdS] logits S[r][c] = Σ_k R[r][k]·C[c][k], float32
//   G [64][ldg]  the gradient tile s·w·(σ(S) − y) in the operand type
// and the gradient products, accumulated across tiles in registers (tensor-core paths) or in a float32
// shared-memory tile (CUDA-core path):
//   rows kernel  acc[r][k] += Σ_c G[r][c]·C[c][k]     (dA of the block's 64 positions)
//   cols kernel  acc[c][k] += Σ_r G[r][c]·R[r][k]     (dE of the block's 64 embeddings)
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include "variants/cuda/fused_limits.hpp"
#include "variants/cuda/operand_type.cuh"

namespace lobench::cuda::fused {

constexpr int kTile = 64;      // positions and embeddings per tile
constexpr int kThreads = 256;  // 8 warps
constexpr int kWarps = kThreads / 32;
constexpr int kLdS = kTile + 4;
constexpr int kMaxDp = kMaxD;                                // D padded to 16, at most (fused_limits.hpp)
constexpr int kMaxAccFrags = (kTile / 16) * (kMaxDp / 16) / kWarps;  // 16×16 accumulators per warp

// Row stride (elements) of an operand tile of Dp columns: +16 bytes keeps fragment origins 32-byte
// aligned (they start at even multiples of 16 rows) while shifting consecutive rows across banks.
template <typename T>
__host__ __device__ constexpr int operand_ld(int Dp) {
  return Dp + int(16 / sizeof(T));
}
template <typename T>
__host__ __device__ constexpr int gradient_ld() {
  return kTile + int(16 / sizeof(T));
}
__host__ __device__ constexpr int staging_ld(int Dp) { return Dp + 4; }

// ---------------------------------------------------------------------------------------------------
// Tensor-core paths.
template <typename T, typename FragT, int K>
struct OpsWmma {
  using Operand = T;
  static constexpr bool kRegisterAccumulators = true;
  using AccFrag = nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, K, float>;
  template <typename Layout>
  using AFrag = nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, K, FragT, Layout>;
  template <typename Layout>
  using BFrag = nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, K, FragT, Layout>;

  template <typename Frag>
  __device__ static void convert(Frag& f) {
    if constexpr (!std::is_same_v<FragT, T>) {  // TF32: round the float32 operands on load
      for (int i = 0; i < f.num_elements; ++i) f.x[i] = nvcuda::wmma::__float_to_tf32(f.x[i]);
    }
  }

  // S = R·Cᵀ: each warp computes two of the sixteen 16×16 blocks.
  __device__ static void logits(const T* R, const T* C, int ldo, int Dp, float* S) {
    using namespace nvcuda;
    const int warp = threadIdx.x / 32;
    for (int f = 2 * warp; f < 2 * warp + 2; ++f) {
      const int i = f / 4, j = f % 4;
      AccFrag acc;
      wmma::fill_fragment(acc, 0.0f);
      for (int k0 = 0; k0 < Dp; k0 += K) {
        AFrag<wmma::row_major> a;
        BFrag<wmma::col_major> b;  // B(k, n) = C[n][k]
        wmma::load_matrix_sync(a, R + 16 * i * ldo + k0, ldo);
        wmma::load_matrix_sync(b, C + 16 * j * ldo + k0, ldo);
        convert(a);
        convert(b);
        wmma::mma_sync(acc, a, b, acc);
      }
      wmma::store_matrix_sync(S + 16 * i * kLdS + 16 * j, acc, kLdS, wmma::mem_row_major);
    }
  }

  struct Acc {
    AccFrag frag[kMaxAccFrags];
  };
  __device__ static void zero(Acc& acc, float*, int) {
    for (int q = 0; q < kMaxAccFrags; ++q) nvcuda::wmma::fill_fragment(acc.frag[q], 0.0f);
  }

  // kTransposeG = false: acc[r][k] += Σ_c G[r][c]·X[c][k] (rows kernel, X = C)
  // kTransposeG = true:  acc[c][k] += Σ_r G[r][c]·X[r][k] (cols kernel, X = R)
  // Fragment f of the 64×Dp accumulator (4 × Dp/16 of them) belongs to warp f mod 8, as its slot f / 8.
  template <bool kTransposeG>
  __device__ static void accumulate(Acc& acc, float*, const T* G, const T* X, int ldo, int Dp) {
    using namespace nvcuda;
    constexpr int ldg = gradient_ld<T>();
    const int warp = threadIdx.x / 32;
    const int nfrag = 4 * (Dp / 16);
#pragma unroll
    for (int q = 0; q < kMaxAccFrags; ++q) {
      const int f = warp + kWarps * q;
      if (f >= nfrag) break;
      const int i = f % 4, jd = f / 4;
      for (int k0 = 0; k0 < kTile; k0 += K) {
        BFrag<wmma::row_major> b;
        wmma::load_matrix_sync(b, X + k0 * ldo + 16 * jd, ldo);
        convert(b);
        if constexpr (kTransposeG) {
          AFrag<wmma::col_major> a;  // Gᵀ(m, k) = G[k][m]
          wmma::load_matrix_sync(a, G + k0 * ldg + 16 * i, ldg);
          convert(a);
          wmma::mma_sync(acc.frag[q], a, b, acc.frag[q]);
        } else {
          AFrag<wmma::row_major> a;
          wmma::load_matrix_sync(a, G + 16 * i * ldg + k0, ldg);
          convert(a);
          wmma::mma_sync(acc.frag[q], a, b, acc.frag[q]);
        }
      }
    }
  }

  // The accumulator as a float [64][staging_ld(Dp)] tile in shared memory (for the epilogue).
  __device__ static void stage(Acc& acc, float* staging, int Dp) {
    const int warp = threadIdx.x / 32;
    const int nfrag = 4 * (Dp / 16), ld = staging_ld(Dp);
#pragma unroll
    for (int q = 0; q < kMaxAccFrags; ++q) {
      const int f = warp + kWarps * q;
      if (f >= nfrag) break;
      const int i = f % 4, jd = f / 4;
      nvcuda::wmma::store_matrix_sync(staging + 16 * i * ld + 16 * jd, acc.frag[q], ld, nvcuda::wmma::mem_row_major);
    }
  }
};

using OpsBf16 = OpsWmma<__nv_bfloat16, __nv_bfloat16, 16>;
using OpsTf32 = OpsWmma<float, nvcuda::wmma::precision::tf32, 8>;

// ---------------------------------------------------------------------------------------------------
// CUDA-core path: exact float32 products. The accumulator lives in the staging tile itself.
struct OpsF32 {
  using Operand = float;
  static constexpr bool kRegisterAccumulators = false;
  struct Acc {};

  // Thread t computes rows 4·(t / 16) .. +3 of S at columns t mod 16, +16, +32, +48 (interleaved, so
  // that a warp's reads of C fall in different banks).
  __device__ static void logits(const float* R, const float* C, int ldo, int Dp, float* S) {
    const int r0 = 4 * (threadIdx.x / 16), c0 = threadIdx.x % 16;
    float acc[4][4] = {};
    for (int k = 0; k < Dp; ++k) {
      float a[4], b[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        a[u] = R[(r0 + u) * ldo + k];
        b[u] = C[(c0 + 16 * u) * ldo + k];
      }
#pragma unroll
      for (int u = 0; u < 4; ++u)
#pragma unroll
        for (int v = 0; v < 4; ++v) acc[u][v] = fmaf(a[u], b[v], acc[u][v]);
    }
#pragma unroll
    for (int u = 0; u < 4; ++u)
#pragma unroll
      for (int v = 0; v < 4; ++v) S[(r0 + u) * kLdS + c0 + 16 * v] = acc[u][v];
  }

  __device__ static void zero(Acc&, float* staging, int Dp) {
    const int ld = staging_ld(Dp);
    for (int i = threadIdx.x; i < kTile * ld; i += kThreads) staging[i] = 0.0f;
  }

  // Thread t owns row t / 4 of the accumulator, columns t mod 4, +4, +8, ... (no two threads share an
  // element, so the read-modify-write needs no synchronisation).
  template <bool kTransposeG>
  __device__ static void accumulate(Acc&, float* staging, const float* G, const float* X, int ldo, int Dp) {
    constexpr int ldg = gradient_ld<float>();
    const int ld = staging_ld(Dp);
    const int m = threadIdx.x / 4;
    for (int d = threadIdx.x % 4; d < Dp; d += 4) {
      float s = 0.0f;
      for (int k = 0; k < kTile; ++k) {
        const float g = kTransposeG ? G[k * ldg + m] : G[m * ldg + k];
        s = fmaf(g, X[k * ldo + d], s);
      }
      staging[m * ld + d] += s;
    }
  }

  __device__ static void stage(Acc&, float*, int) {}
};

}  // namespace lobench::cuda::fused
