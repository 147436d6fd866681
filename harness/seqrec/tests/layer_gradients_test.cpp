// Every layer's backward against central finite differences (tolerance: gradient_check.hpp), and the
// layers' results at 1 and 2 threads compared bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "harness/seqrec/attention.hpp"
#include "harness/seqrec/blocked_matmul.hpp"
#include "harness/seqrec/dropout.hpp"
#include "harness/seqrec/embedding.hpp"
#include "harness/seqrec/feed_forward.hpp"
#include "harness/seqrec/layer_norm.hpp"
#include "harness/seqrec/linear.hpp"
#include "harness/seqrec/residual.hpp"
#include "harness/seqrec/tests/gradient_check.hpp"
#include "harness/seqrec/transformer_block.hpp"

namespace lobench::seqrec {
namespace {

using testing::fd_relative_error;
using testing::kTolerance;
using testing::project;
using testing::random_vector;

// Parameters of every tensor drawn N(0, scale²) (the layers' own inits set some to constants).
void randomize(ParameterSet& ps, uint64_t seed, float scale = 0.5f) {
  fill_normal(ps.values(), ps.size(), seed, 3, scale);
}

TEST(SeqrecLayers, LinearBackwardMatchesFiniteDifferences) {
  const int64_t R = 7, in = 5, out = 9;
  ParameterSet ps;
  Linear lin(ps, "lin", in, out);
  CountingAllocator alloc;
  ps.allocate(alloc);
  randomize(ps, 1);
  auto x = random_vector(R * in, 2);
  const auto r = random_vector(R * out, 3);
  std::vector<float> y(size_t(R * out)), dx(size_t(R * in));
  auto f = [&] {
    lin.forward(ps, x.data(), R, y.data(), 1);
    return project(y.data(), r);
  };
  f();
  lin.backward(ps, x.data(), r.data(), R, dx.data(), 1);
  EXPECT_LT(fd_relative_error(x.data(), R * in, dx.data(), f), kTolerance);
  EXPECT_LT(fd_relative_error(ps.value(lin.weight()), in * out, ps.grad(lin.weight()), f), kTolerance);
  EXPECT_LT(fd_relative_error(ps.value(lin.bias()), out, ps.grad(lin.bias()), f), kTolerance);
}

TEST(SeqrecLayers, LayerNormBackwardMatchesFiniteDifferences) {
  const int64_t R = 6, D = 16;
  ParameterSet ps;
  LayerNorm ln(ps, "ln", D, R);
  CountingAllocator alloc;
  ps.allocate(alloc);
  ln.allocate(alloc);
  randomize(ps, 4);
  auto x = random_vector(R * D, 5, 2.0f);
  const auto r = random_vector(R * D, 6);
  std::vector<float> y(size_t(R * D)), dx(size_t(R * D));
  auto f = [&] {
    ln.forward(ps, x.data(), R, y.data(), 1);
    return project(y.data(), r);
  };
  f();
  ln.backward(ps, r.data(), R, dx.data(), 1);
  EXPECT_LT(fd_relative_error(x.data(), R * D, dx.data(), f), kTolerance);
  EXPECT_LT(fd_relative_error(ps.value(ln.gain()), D, ps.grad(ln.gain()), f), kTolerance);
  EXPECT_LT(fd_relative_error(ps.value(ln.shift()), D, ps.grad(ln.shift()), f), kTolerance);
  // Normalized rows: mean 0, variance 1 (γ = 1, β = 0).
  ln.init(ps);
  ln.forward(ps, x.data(), R, y.data(), 1);
  double mean = 0, var = 0;
  for (int64_t d = 0; d < D; ++d) mean += y[size_t(d)];
  for (int64_t d = 0; d < D; ++d) var += (y[size_t(d)] - mean / D) * (y[size_t(d)] - mean / D);
  EXPECT_NEAR(mean / D, 0.0, 1e-6);
  EXPECT_NEAR(var / D, 1.0, 1e-4);
}

// ids for B = 2 sequences of N = 6 with left padding in the second.
const int32_t kIds[12] = {3, 1, 4, 1, 5, 2, 0, 0, 0, 2, 6, 5};

TEST(SeqrecLayers, AttentionBackwardMatchesFiniteDifferences) {
  const int64_t B = 2, N = 6, D = 8, H = 2, R = B * N;
  ParameterSet ps;
  CausalSelfAttention attn(ps, "attn", D, H, B, N, 1);
  CountingAllocator alloc;
  ps.allocate(alloc);
  attn.allocate(alloc);
  EXPECT_EQ(alloc.current_bytes() - ParameterSet::bytes_for(ps.size()),
            CausalSelfAttention::activation_bytes(D, H, B, N, 1));
  randomize(ps, 7);
  auto x = random_vector(R * D, 8);
  const auto r = random_vector(R * D, 9);
  std::vector<float> y(size_t(R * D)), dx(size_t(R * D));
  auto f = [&] {
    attn.forward(ps, x.data(), kIds, B, y.data());
    return project(y.data(), r);
  };
  f();
  attn.backward(ps, x.data(), kIds, B, r.data(), dx.data());
  EXPECT_LT(fd_relative_error(x.data(), R * D, dx.data(), f), kTolerance);
  for (const ParamInfo& t : ps.tensors())
    EXPECT_LT(fd_relative_error(ps.value(t.ref), t.ref.size, ps.grad(t.ref), f), kTolerance) << t.name;
}

TEST(SeqrecLayers, AttentionIsCausalAndIgnoresPaddingKeys) {
  const int64_t B = 2, N = 6, D = 8, H = 2, R = B * N;
  ParameterSet ps;
  CausalSelfAttention attn(ps, "attn", D, H, B, N, 1);
  CountingAllocator alloc;
  ps.allocate(alloc);
  attn.allocate(alloc);
  randomize(ps, 10);
  auto x = random_vector(R * D, 11);
  std::vector<float> y0(size_t(R * D)), y1(size_t(R * D));
  attn.forward(ps, x.data(), kIds, B, y0.data());
  // Changing a later position (4 of sequence 0) or a padding position (1 of sequence 1) leaves the
  // outputs at positions that may not see them unchanged.
  for (int64_t d = 0; d < D; ++d) {
    x[size_t(4 * D + d)] += 1.0f;
    x[size_t((N + 1) * D + d)] += 1.0f;
  }
  attn.forward(ps, x.data(), kIds, B, y1.data());
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t d = 0; d < D; ++d) EXPECT_EQ(y0[size_t(i * D + d)], y1[size_t(i * D + d)]) << i;
  for (int64_t i = 3; i < N; ++i)
    for (int64_t d = 0; d < D; ++d) EXPECT_EQ(y0[size_t((N + i) * D + d)], y1[size_t((N + i) * D + d)]) << i;
}

// The blocked products at shapes that take each block shape (64, 128, 256 rows; 4 column blocks for a
// short wide product; ragged last blocks), in all four transpose combinations: against a float64 product, and bit for bit the same at 1 and 2
// threads.
TEST(SeqrecLayers, BlockedMatmulIsExactAndThreadIndependent) {
  EXPECT_EQ(row_block(1000), 64);
  EXPECT_EQ(row_block(1024), 128);
  EXPECT_EQ(row_block(2047), 128);
  EXPECT_EQ(row_block(2048), 256);
  EXPECT_EQ(row_block(1 << 20), 256);
  EXPECT_EQ(product_blocks(256, 768).cols, 192);
  EXPECT_EQ(product_blocks(256, 768).rows, 256);
  EXPECT_EQ(product_blocks(2048, 768).cols, 768);
  EXPECT_EQ(product_blocks(256, 600).cols, 160);  // 160, 160, 160 and a ragged 120
  data::Rng rng(data::stream_key(5, 5, 5));
  for (auto [M, N] : {std::pair<int64_t, int64_t>{37, 40}, {1100, 40}, {2300, 40}, {200, 600}}) {
    const int64_t K = 24;
    std::vector<float> A(static_cast<size_t>(M * K)), B(static_cast<size_t>(K * N));
    for (float& v : A) v = float(rng.normal());
    for (float& v : B) v = float(rng.normal());
    for (Op opA : {Op::none, Op::transpose})
      for (Op opB : {Op::none, Op::transpose}) {
        auto a = [&](int64_t m, int64_t k) { return double(opA == Op::none ? A[size_t(m * K + k)] : A[size_t(k * M + m)]); };
        auto b = [&](int64_t k, int64_t n) { return double(opB == Op::none ? B[size_t(k * N + n)] : B[size_t(n * K + k)]); };
        std::vector<float> one(static_cast<size_t>(M * N), 1.0f), two = one;
        matmul(A.data(), opA, B.data(), opB, one.data(), M, K, N, /*accumulate=*/true, 1);
        matmul(A.data(), opA, B.data(), opB, two.data(), M, K, N, /*accumulate=*/true, 2);
        EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * 4), 0) << M;
        double worst = 0;
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n) {
            double ref = 1.0;
            for (int64_t k = 0; k < K; ++k) ref += a(m, k) * b(k, n);
            worst = std::max(worst, std::abs(one[size_t(m * N + n)] - ref));
          }
        EXPECT_LT(worst, 1e-4) << M;
      }
  }
}

// The vectorized GELU (Eigen's tanh) against the formula with std::tanh in double, over many chunks.
TEST(SeqrecLayers, VectorizedGeluMatchesTheFormula) {
  const int64_t n = 5000;
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n)), g(static_cast<size_t>(n), 1.0f);
  data::Rng rng(data::stream_key(4, 4, 4));
  for (float& v : x) v = float(12.0 * rng.uniform() - 6.0);
  gelu_tanh(x.data(), y.data(), n);
  gelu_tanh_backward(x.data(), g.data(), n);
  const double k = std::sqrt(2.0 / 3.141592653589793);
  for (int64_t i = 0; i < n; ++i) {
    const double z = x[size_t(i)], t = std::tanh(k * (z + 0.044715 * z * z * z));
    const double exact = 0.5 * z * (1.0 + t);
    const double grad = 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * z * z);
    EXPECT_NEAR(y[size_t(i)], exact, 2e-6 * std::max(1.0, std::abs(z))) << z;
    EXPECT_NEAR(g[size_t(i)], grad, 1e-5) << z;
  }
}

TEST(SeqrecLayers, FeedForwardBackwardMatchesFiniteDifferences) {
  const int64_t R = 5, D = 6;
  ParameterSet ps;
  FeedForward ffn(ps, "ffn", D, 4 * D, R, 1);
  CountingAllocator alloc;
  ps.allocate(alloc);
  ffn.allocate(alloc);
  randomize(ps, 12);
  auto x = random_vector(R * D, 13);
  const auto r = random_vector(R * D, 14);
  std::vector<float> y(size_t(R * D)), dx(size_t(R * D));
  auto f = [&] {
    ffn.forward(ps, x.data(), R, y.data());
    return project(y.data(), r);
  };
  f();
  ffn.backward(ps, x.data(), r.data(), R, dx.data());
  EXPECT_LT(fd_relative_error(x.data(), R * D, dx.data(), f), kTolerance);
  for (const ParamInfo& t : ps.tensors())
    EXPECT_LT(fd_relative_error(ps.value(t.ref), t.ref.size, ps.grad(t.ref), f), kTolerance) << t.name;
  // GELU's derivative against its own central difference, in float64 terms at a few points.
  for (float z : {-3.0f, -0.7f, 0.0f, 0.4f, 2.5f}) {
    const double h = 1e-3;
    const double numeric = (double(gelu_tanh(z + float(h))) - double(gelu_tanh(z - float(h)))) / (2 * h);
    EXPECT_NEAR(gelu_tanh_grad(z), numeric, 1e-3) << z;
  }
}

TEST(SeqrecLayers, EmbeddingBackwardMatchesFiniteDifferencesAndSkipsPadding) {
  const int64_t B = 2, N = 6, V = 7, D = 4;
  ParameterSet ps;
  const ParamRef items = ps.add("items", V * D, true);
  Embedding emb(ps, "embed", items, V, N, D);
  CountingAllocator alloc;
  ps.allocate(alloc);
  randomize(ps, 15);
  const auto r = random_vector(B * N * D, 16);
  std::vector<float> y(size_t(B * N * D));
  auto f = [&] {
    emb.forward(ps, kIds, B, y.data(), 1);
    return project(y.data(), r);
  };
  f();
  emb.backward(ps, kIds, B, r.data(), 1);
  EXPECT_LT(fd_relative_error(ps.value(items), V * D, ps.grad(items), f), kTolerance);
  EXPECT_LT(fd_relative_error(ps.value(emb.positions()), N * D, ps.grad(emb.positions()), f), kTolerance);
  for (int64_t d = 0; d < D; ++d) {
    EXPECT_EQ(ps.grad(items)[d], 0.0f);  // the padding item gets nothing
    EXPECT_EQ(y[size_t(N * D + d)], 0.0f);  // a padded position is zero
  }
}

TEST(SeqrecLayers, DropoutMaskIsSeededThreadIndependentAndScaled) {
  const int64_t n = 100000;
  const Dropout drop(0.25f, 42, 3);
  std::vector<float> ones(static_cast<size_t>(n), 1.0f), a(ones.size()), b(ones.size()), c(ones.size());
  drop.forward(ones.data(), n, 7, true, a.data(), 1);
  drop.forward(ones.data(), n, 7, true, b.data(), 2);
  drop.forward(ones.data(), n, 8, true, c.data(), 2);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), size_t(n) * 4), 0);
  EXPECT_NE(std::memcmp(a.data(), c.data(), size_t(n) * 4), 0);  // another step, another mask
  int64_t zeros = 0;
  for (float v : a) {
    EXPECT_TRUE(v == 0.0f || v == 1.0f / 0.75f);
    zeros += v == 0.0f;
  }
  EXPECT_NEAR(double(zeros) / n, 0.25, 0.01);
  // Backward applies the same mask (the derivative of a linear map with those multipliers).
  std::vector<float> g(static_cast<size_t>(n), 2.0f), dg(ones.size());
  drop.backward(g.data(), n, 7, dg.data(), 2);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(dg[size_t(i)], 2.0f * a[size_t(i)]);
  drop.forward(ones.data(), n, 7, /*training=*/false, c.data(), 1);
  EXPECT_EQ(c, ones);
  EXPECT_THROW(Dropout(1.0f, 0, 0), std::invalid_argument);
}

TEST(SeqrecLayers, ResidualPassesTheGradientToBothPaths) {
  const float x[3] = {1, 2, 3}, f[3] = {0.5f, -1, 4}, dy[3] = {1, -2, 0.25f}, db[3] = {3, 3, 3};
  float y[3], dx[3];
  residual_add(x, f, 3, y, 1);
  residual_backward(dy, db, 3, dx, 1);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(y[i], x[i] + f[i]);
    EXPECT_EQ(dx[i], dy[i] + db[i]);
  }
}

TEST(SeqrecLayers, TransformerBlockWithDropoutMatchesFiniteDifferences) {
  BlockShape s;
  s.D = 8;
  s.heads = 2;
  s.max_batch = 2;
  s.N = 6;
  s.threads = 2;
  s.dropout = 0.2f;
  s.seed = 5;
  const int64_t R = s.max_batch * s.N;
  ParameterSet ps;
  TransformerBlock block(ps, "b", s, 2);
  CountingAllocator alloc;
  ps.allocate(alloc);
  block.allocate(alloc);
  EXPECT_EQ(alloc.current_bytes() - ParameterSet::bytes_for(ps.size()), TransformerBlock::activation_bytes(s));
  randomize(ps, 17, 0.3f);
  block.init(ps, 17, 0, 0.3f, 0.3f);  // LNs to 1/0, matrices random
  auto x = random_vector(R * s.D, 18);
  const auto r = random_vector(R * s.D, 19);
  std::vector<float> y(size_t(R * s.D)), dx(size_t(R * s.D));
  auto f = [&] {
    block.forward(ps, x.data(), kIds, s.max_batch, /*step=*/3, /*training=*/true, y.data());
    return project(y.data(), r);
  };
  f();
  block.backward(ps, kIds, s.max_batch, 3, r.data(), dx.data());
  EXPECT_LT(fd_relative_error(x.data(), R * s.D, dx.data(), f), kTolerance);
  for (const ParamInfo& t : ps.tensors())
    EXPECT_LT(fd_relative_error(ps.value(t.ref), t.ref.size, ps.grad(t.ref), f), kTolerance) << t.name;
}

}  // namespace
}  // namespace lobench::seqrec
