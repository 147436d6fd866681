// The three products of one logit tile of the tiled variants (chunked, fused) and of the step
// benchmark's product-only yardstick, each one single-threaded sgemm call (variants/cpu/sgemm.hpp) on
// the calling thread. A tile covers positions [p0, p0+rows) and vocabulary entries [v0, v0+n); its
// rows are `ld` floats apart.
#pragma once

#include <cstdint>

#include "variants/cpu/sgemm.hpp"

namespace lobench::cpu {

// X[rows, n] = A_rows · E_rowsᵀ: the tile's logits (A_rows [rows, D], E_rows [n, D]), through `library`:
// tile_products_library() as the caller took it once for the whole step (a step never mixes libraries),
// or the library a yardstick path times.
inline void tile_logits(const float* A_rows, const float* E_rows, int64_t rows, int64_t n, int64_t D, float* X,
                        int64_t ld, GemmLibrary library) {
  sgemm_using(library, Op::none, Op::transpose, rows, n, D, A_rows, D, E_rows, D, X, ld, /*accumulate=*/false);
}

// With X holding the tile's logit gradient G: dE_rows [n, D] (= on the first chunk, else +=) Gᵀ·A_rows
// and dA_rows [rows, D] += G·E_rows.
inline void tile_gradients(const float* X, int64_t ld, const float* A_rows, const float* E_rows, int64_t rows,
                           int64_t n, int64_t D, float* dE_rows, bool first_chunk, float* dA_rows,
                           GemmLibrary library) {
  sgemm_using(library, Op::transpose, Op::none, n, D, rows, X, ld, A_rows, D, dE_rows, D, /*accumulate=*/!first_chunk);
  sgemm_using(library, Op::none, Op::none, rows, D, n, X, ld, E_rows, D, dA_rows, D, /*accumulate=*/true);
}

}  // namespace lobench::cpu
