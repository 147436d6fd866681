// The element-wise part of the BCE step on one logit tile, shared by the CPU variants so that
// dense, chunked and fused differ only in how they schedule the products around it.
//
// A tile is row-major: `rows` positions × `cols` vocabulary entries, rows `ld` floats apart. Only the
// dense "every label negative" background is handled here; the sparse correction at the targets
// (−x in the loss, −s·w in the gradient, the TP count) is applied by the caller from SparseTargets.
#pragma once

#include <cstdint>

namespace lobench::cpu {

// loss_rows[r] += Σ_j softplus(x[r, j]) (float64 accumulation); predicted_rows[r] += #{j : x[r, j] > 0}.
void tile_softplus_rows(const float* X, int64_t rows, int64_t cols, int64_t ld, double* loss_rows,
                        int64_t* predicted_rows);

// x[r, j] <- row_scale[r] · σ(x[r, j]), the background logit gradient.
void tile_sigmoid_scaled(float* X, int64_t rows, int64_t cols, int64_t ld, const float* row_scale);

// Both at once (the fused variant): accumulates the loss and counts, then overwrites x with the gradient.
void tile_softplus_and_sigmoid(float* X, int64_t rows, int64_t cols, int64_t ld, double* loss_rows,
                               int64_t* predicted_rows, const float* row_scale);

}  // namespace lobench::cpu
