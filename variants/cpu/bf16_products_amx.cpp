// The AMX kernel of bf16_products.hpp: TDPBF16PS (AMX-BF16) on 16 × 16 tiles, each C block of 32 × 32
// outputs held in four tile registers while the inner index runs through it in blocks of 16 pairs
// (k = 0–15, 16–31, …: the blocks never depend on the thread count or on M and N). Compiled with AMX
// (and AVX-512) in this file only; bf16_products.cpp calls it only where the CPU reports AMX-BF16 and
// Linux granted the process the tile state.
//
// Each output is the chain of tdpbf16_element steps (bf16_dot.hpp), one per block of 16 pairs, the
// last block padded with zero pairs. Tiles at the edges of A, B or C go through small zero-padded
// buffers on the stack, so that no tile load reads outside the operands; transposed C (the dE product)
// is turned around through such a buffer with AVX-512 shuffles.
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "variants/cpu/bf16_products.hpp"
#include "variants/timing.hpp"

namespace lobench::cpu::amx_bf16 {
namespace {

constexpr int kT = 16;             // rows of a tile, and pairs (or floats) per tile row
constexpr int kRowBytes = 4 * kT;  // 64: the longest tile row
// Tile registers: C blocks 0–3 (C(i, j) = tile 2i + j), A rows 4–5, B columns 6–7.

struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// GCC 12's _tile_loadconfig tells the compiler it reads 8 bytes of the configuration, and _tile_loadd
// that it reads no memory at all, so stores into the configuration or into a staging buffer could be
// dropped or moved past the load. These two say what they read (the whole configuration; any memory).
void load_tile_config(const TileConfig& cfg) { __asm__ volatile("ldtilecfg %0" ::"m"(cfg)); }
#define LOBENCH_TILE_LOAD(tile, base, stride) \
  __asm__ volatile("tileloadd (%0,%1,1), %%tmm" #tile ::"r"((const void*)(base)), "r"((long)(stride)) : "memory")

// Every tile 16 rows of 64 bytes (palette 1: eight tiles).
void configure_tiles() {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = kRowBytes, cfg.rows[t] = kT;
  load_tile_config(cfg);
}

struct alignas(64) Staging {
  uint32_t words[kT][kT];
};

// The 16 x 16 tile at (r0, c0) of a row-major rows x cols matrix of words (bf16 pairs) with leading
// dimension ld: read in place when whole, else copied into `s` with zeros outside the matrix.
const uint32_t* tile_of(const uint32_t* x, int64_t ld, int64_t rows, int64_t cols, int64_t r0, int64_t c0,
                        Staging& s, int64_t& stride) {
  if (r0 + kT <= rows && c0 + kT <= cols) {
    stride = ld * 4;
    return x + r0 * ld + c0;
  }
  std::memset(&s, 0, sizeof s);
  for (int64_t r = 0; r < kT && r0 + r < rows; ++r)
    for (int64_t c = 0; c < kT && c0 + c < cols; ++c) s.words[r][c] = x[(r0 + r) * ld + c0 + c];
  stride = kRowBytes;
  return &s.words[0][0];
}

// A's tile: rows [m, m+16) and pairs [k0, k0+16). B's tile: pairs [k0, k0+16) of columns [n, n+16).
const uint32_t* a_tile(const Bf16Product& p, int64_t m, int64_t k0, Staging& s, int64_t& stride) {
  return tile_of(p.a, p.lda, p.M, p.K2, m, k0, s, stride);
}
const uint32_t* b_tile(const Bf16Product& p, int64_t k0, int64_t n, Staging& s, int64_t& stride) {
  return tile_of(p.b, p.ldb, p.K2, p.N, k0, n, s, stride);
}

bool whole_row_major(const Bf16Product& p, int64_t m, int64_t n) {
  return !p.c_transposed && m + kT <= p.M && n + kT <= p.N;
}

float& c_at(const Bf16Product& p, int64_t m, int64_t n) {
  return p.c_transposed ? p.c[n * p.ldc + m] : p.c[m * p.ldc + n];
}

// Whether C's tile at (m, n) is whole and C is stored transposed: its rows are columns of the tile.
bool whole_transposed(const Bf16Product& p, int64_t m, int64_t n) {
  return p.c_transposed && m + kT <= p.M && n + kT <= p.N;
}

// dst's rows (ld_dst floats apart) = the columns of the 16 × 16 floats at src (rows ld_src apart): four
// rounds of shuffles between registers. Gathers and scatters of the columns made the dE product at the
// fused tile's shape 1.26x slower (73 against 58 µs, bf16_tile_bench, one thread, AMX Xeon model 167).
void transpose_16x16(const float* src, int64_t ld_src, float* dst, int64_t ld_dst) {
  // (the masked forms, all lanes set: GCC 12's unmasked unpacks and shuffle_f32x4 start from an undefined
  // register and warn that it is used uninitialized)
  const auto lo_ps = [](__m512 a, __m512 b) { return _mm512_mask_unpacklo_ps(a, 0xffff, a, b); };
  const auto hi_ps = [](__m512 a, __m512 b) { return _mm512_mask_unpackhi_ps(a, 0xffff, a, b); };
  const auto lo_pd = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(_mm512_mask_unpacklo_pd(_mm512_castps_pd(a), 0xff, _mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
  const auto hi_pd = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(_mm512_mask_unpackhi_pd(_mm512_castps_pd(a), 0xff, _mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
  const auto lanes_02 = [](__m512 a, __m512 b) { return _mm512_mask_shuffle_f32x4(a, 0xffff, a, b, 0x88); };
  const auto lanes_13 = [](__m512 a, __m512 b) { return _mm512_mask_shuffle_f32x4(a, 0xffff, a, b, 0xdd); };
  __m512 r[kT], t[kT];
  for (int i = 0; i < kT; ++i) r[i] = _mm512_loadu_ps(src + i * ld_src);
  for (int i = 0; i < kT; i += 2) {  // t[i] lane L: r[i][4L], r[i+1][4L], r[i][4L+1], r[i+1][4L+1]; t[i+1]: 4L+2, 4L+3
    t[i] = lo_ps(r[i], r[i + 1]);
    t[i + 1] = hi_ps(r[i], r[i + 1]);
  }
  for (int j = 0; j < kT; j += 4) {  // r[j + c] lane L: column 4L + c, rows j … j + 3
    r[j] = lo_pd(t[j], t[j + 2]);
    r[j + 1] = hi_pd(t[j], t[j + 2]);
    r[j + 2] = lo_pd(t[j + 1], t[j + 3]);
    r[j + 3] = hi_pd(t[j + 1], t[j + 3]);
  }
  for (int c = 0; c < 4; ++c) {  // lanes 0 and 2 (then 1 and 3) of rows j = 0, 4 and of j = 8, 12, then of all four
    const __m512 even_lo = lanes_02(r[c], r[4 + c]), odd_lo = lanes_13(r[c], r[4 + c]);
    const __m512 even_hi = lanes_02(r[8 + c], r[12 + c]), odd_hi = lanes_13(r[8 + c], r[12 + c]);
    _mm512_storeu_ps(dst + c * ld_dst, lanes_02(even_lo, even_hi));
    _mm512_storeu_ps(dst + (8 + c) * ld_dst, lanes_13(even_lo, even_hi));
    _mm512_storeu_ps(dst + (4 + c) * ld_dst, lanes_02(odd_lo, odd_hi));
    _mm512_storeu_ps(dst + (12 + c) * ld_dst, lanes_13(odd_lo, odd_hi));
  }
}

// C's tile at (m, n) as the chains start, when accumulating (C's values; zeros outside C). A whole
// row-major tile is read in place; a whole transposed one is staged turned around (each tile column is
// 16 consecutive floats of C).
const float* c_start(const Bf16Product& p, int64_t m, int64_t n, Staging& s, int64_t& stride) {
  stride = kRowBytes;
  if (whole_row_major(p, m, n)) {
    stride = p.ldc * 4;
    return p.c + m * p.ldc + n;
  }
  if (whole_transposed(p, m, n)) {
    transpose_16x16(p.c + n * p.ldc + m, p.ldc, reinterpret_cast<float*>(&s.words[0][0]), kT);
    return reinterpret_cast<const float*>(&s.words[0][0]);
  }
  std::memset(&s, 0, sizeof s);
  for (int64_t r = 0; r < kT && m + r < p.M; ++r)
    for (int64_t c = 0; c < kT && n + c < p.N; ++c) std::memcpy(&s.words[r][c], &c_at(p, m + r, n + c), 4);
  return reinterpret_cast<const float*>(&s.words[0][0]);
}

// The staged tile back into C: whole transposed tiles turned around (transpose_16x16), edges element by
// element.
void c_finish(const Bf16Product& p, int64_t m, int64_t n, const Staging& s) {
  if (whole_transposed(p, m, n)) {
    transpose_16x16(reinterpret_cast<const float*>(&s.words[0][0]), kT, p.c + n * p.ldc + m, p.ldc);
    return;
  }
  for (int64_t r = 0; r < kT && m + r < p.M; ++r)
    for (int64_t c = 0; c < kT && n + c < p.N; ++c) std::memcpy(&c_at(p, m + r, n + c), &s.words[r][c], 4);
}

// (tile numbers are immediates, so each of the four C tiles has its own line)
#define LOBENCH_AMX_C_LOAD(T, I, J)                                         \
  do {                                                                      \
    if (!p.accumulate) {                                                    \
      _tile_zero(T);                                                        \
    } else {                                                                \
      int64_t st;                                                           \
      const float* src = c_start(p, m0 + kT * (I), n0 + kT * (J), stage, st); \
      LOBENCH_TILE_LOAD(T, src, st);                                        \
    }                                                                       \
  } while (0)
#define LOBENCH_AMX_C_STORE(T, I, J)                                              \
  do {                                                                            \
    if (whole_row_major(p, m0 + kT * (I), n0 + kT * (J))) {                       \
      _tile_stored(T, p.c + (m0 + kT * (I)) * p.ldc + n0 + kT * (J), p.ldc * 4);  \
    } else if (m0 + kT * (I) < p.M && n0 + kT * (J) < p.N) {                      \
      _tile_stored(T, &stage.words[0][0], kRowBytes);                             \
      c_finish(p, m0 + kT * (I), n0 + kT * (J), stage);                           \
    }                                                                             \
  } while (0)

// The 32 × 32 block of C at (m0, n0), the whole inner index.
void block(const Bf16Product& p, int64_t m0, int64_t n0) {
  Staging stage, a_stage[2], b_stage[2];
  LOBENCH_AMX_C_LOAD(0, 0, 0);
  LOBENCH_AMX_C_LOAD(1, 0, 1);
  LOBENCH_AMX_C_LOAD(2, 1, 0);
  LOBENCH_AMX_C_LOAD(3, 1, 1);
  // Whole blocks straight from the operands; the last, short block of the inner index and the edges of
  // A and B through the staging buffers.
  const bool interior = m0 + 2 * kT <= p.M && n0 + 2 * kT <= p.N;
  const int64_t k_whole = interior ? p.K2 / kT * kT : 0;
  const uint32_t* a = p.a + m0 * p.lda;
  const uint32_t* b = p.b + n0;
  int64_t k0 = 0;
  for (; k0 < k_whole; k0 += kT) {
    LOBENCH_TILE_LOAD(4, a + k0, p.lda * 4);
    LOBENCH_TILE_LOAD(5, a + kT * p.lda + k0, p.lda * 4);
    LOBENCH_TILE_LOAD(6, b + k0 * p.ldb, p.ldb * 4);
    LOBENCH_TILE_LOAD(7, b + k0 * p.ldb + kT, p.ldb * 4);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  for (; k0 < p.K2; k0 += kT) {
    int64_t sa0, sa1, sb0, sb1;
    const uint32_t* a0 = a_tile(p, m0, k0, a_stage[0], sa0);
    const uint32_t* a1 = a_tile(p, m0 + kT, k0, a_stage[1], sa1);
    const uint32_t* b0 = b_tile(p, k0, n0, b_stage[0], sb0);
    const uint32_t* b1 = b_tile(p, k0, n0 + kT, b_stage[1], sb1);
    LOBENCH_TILE_LOAD(4, a0, sa0);
    LOBENCH_TILE_LOAD(5, a1, sa1);
    LOBENCH_TILE_LOAD(6, b0, sb0);
    LOBENCH_TILE_LOAD(7, b1, sb1);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  LOBENCH_AMX_C_STORE(0, 0, 0);
  LOBENCH_AMX_C_STORE(1, 0, 1);
  LOBENCH_AMX_C_STORE(2, 1, 0);
  LOBENCH_AMX_C_STORE(3, 1, 1);
}

#undef LOBENCH_AMX_C_LOAD
#undef LOBENCH_AMX_C_STORE

}  // namespace

// Linux hands out the tile data state (8 KiB per thread) only on request, once per process.
bool tile_state_granted() {
  static const bool granted = [] {
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return granted;
}

void product(const Bf16Product& p) {
  configure_tiles();
  // A's 32 rows stay in the L1 cache while the blocks along C's row take B's columns in turn: 7–10 %
  // faster than columns outer at the fused tile's shapes (M = 512, N = 256, K2 = 64 and 128) on an AMX
  // Xeon (model 167), one thread. The order of the blocks does not change any output's chain.
  for (int64_t m0 = 0; m0 < p.M; m0 += 2 * kT)
    for (int64_t n0 = 0; n0 < p.N; n0 += 2 * kT) block(p, m0, n0);
  _tile_release();
}

// TDPBF16PS's throughput on tiles already loaded: four independent accumulator tiles (more than the
// instruction's latency over its issue interval), GFLOP/s of wall time, the best of short bursts.
double peak_rate(double seconds) {
  configure_tiles();
  Staging zeros;
  std::memset(&zeros, 0, sizeof zeros);
  LOBENCH_TILE_LOAD(4, &zeros, kRowBytes);
  LOBENCH_TILE_LOAD(5, &zeros, kRowBytes);
  LOBENCH_TILE_LOAD(6, &zeros, kRowBytes);
  LOBENCH_TILE_LOAD(7, &zeros, kRowBytes);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  constexpr int64_t kSteps = 2000;
  // Bursts of kSteps × 4 instructions for `seconds` in all (the timing rule with a time budget), the
  // fastest kept.
  const Samples bursts = collect_samples(
      [] {
        return seconds_of([] {
          for (int64_t r = 0; r < kSteps; ++r) {
            _tile_dpbf16ps(0, 4, 6);
            _tile_dpbf16ps(1, 4, 7);
            _tile_dpbf16ps(2, 5, 6);
            _tile_dpbf16ps(3, 5, 7);
          }
        });
      },
      /*warmup=*/0, RepPolicy::budget(seconds));
  const double best = double(kSteps) * 4 * (2.0 * kT * kT * 2 * kT) / bursts.min() / 1e9;
  _tile_release();
  return best;
}

}  // namespace lobench::cpu::amx_bf16
