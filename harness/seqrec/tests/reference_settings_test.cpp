// The settings of S3-Rec's SASRec (issue 38; docs/training.md, "The one-negative baseline with S3-Rec's
// settings"), each against its definition: the post-LN block and model (--block post_ln) against a
// float64 forward written from the formulas, the sampled negative outside the user's history
// (--negatives history) over many draws, and each option reaching the run (run file attributes, the bits
// trained) and the checkpoint's identity.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "datasets/random.hpp"
#include "harness/io/h5_io.hpp"
#include "harness/seqrec/early_stopping.hpp"
#include "harness/seqrec/sasrec_model.hpp"
#include "harness/seqrec/seqrec_checkpoint.hpp"
#include "harness/seqrec/seqrec_loss.hpp"
#include "harness/seqrec/seqrec_run_file.hpp"
#include "harness/seqrec/seqrec_runner.hpp"
#include "harness/seqrec/tests/seqrec_test_support.hpp"

namespace lobench::seqrec {
namespace {

namespace fs = std::filesystem;
using Vec = std::vector<double>;

// ---------------------------------------------------------------------------------------------------
// The post-LN model against float64 formulas.

// A parameter tensor of the model by name, as float64.
Vec tensor(const SasRec& m, const std::string& name) {
  for (const ParamInfo& t : m.params().tensors())
    if (t.name == name) return Vec(m.params().value(t.ref), m.params().value(t.ref) + t.ref.size);
  ADD_FAILURE() << "no parameter " << name;
  return {};
}

// LayerNorm of each D-row of x (biased variance, ε = 1e-5 as the model's), gain g, shift b.
Vec layer_norm(const Vec& x, int64_t D, const Vec& g, const Vec& b) {
  Vec y(x.size());
  for (size_t r = 0; r < x.size() / size_t(D); ++r) {
    double mean = 0, var = 0;
    for (int64_t d = 0; d < D; ++d) mean += x[r * D + d] / double(D);
    for (int64_t d = 0; d < D; ++d) var += (x[r * D + d] - mean) * (x[r * D + d] - mean) / double(D);
    for (int64_t d = 0; d < D; ++d) y[r * D + d] = g[d] * (x[r * D + d] - mean) / std::sqrt(var + 1e-5) + b[d];
  }
  return y;
}

// x [R, in] · W [in, out] + b.
Vec affine(const Vec& x, int64_t in, const Vec& W, const Vec& b) {
  const int64_t out = int64_t(b.size()), R = int64_t(x.size()) / in;
  Vec y(size_t(R * out));
  for (int64_t r = 0; r < R; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double s = b[o];
      for (int64_t i = 0; i < in; ++i) s += x[r * in + i] * W[i * out + o];
      y[r * out + o] = s;
    }
  return y;
}

Vec add(Vec a, const Vec& b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  return a;
}

// Causal attention of one window (N rows): query i sees key j <= i unless j is padding (itself always).
Vec attention(const SasRec& m, const std::string& name, const Vec& x, const int32_t* ids, int64_t N, int64_t D, int64_t H) {
  const Vec qkv = affine(x, D, tensor(m, name + ".qkv.weight"), tensor(m, name + ".qkv.bias"));
  const int64_t dh = D / H;
  Vec ctx(size_t(N * D), 0.0);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < N; ++i) {
      std::vector<double> s(size_t(N), -INFINITY);
      double mx = -INFINITY;
      for (int64_t j = 0; j <= i; ++j) {
        if (ids[j] == 0 && j != i) continue;
        double dot = 0;
        for (int64_t d = 0; d < dh; ++d) dot += qkv[i * 3 * D + h * dh + d] * qkv[j * 3 * D + D + h * dh + d];
        s[j] = dot / std::sqrt(double(dh));
        mx = std::max(mx, s[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < N; ++j) sum += s[j] == -INFINITY ? 0 : std::exp(s[j] - mx);
      for (int64_t j = 0; j < N; ++j) {
        if (s[j] == -INFINITY) continue;
        const double p = std::exp(s[j] - mx) / sum;
        for (int64_t d = 0; d < dh; ++d) ctx[i * D + h * dh + d] += p * qkv[j * 3 * D + 2 * D + h * dh + d];
      }
    }
  return affine(ctx, D, tensor(m, name + ".proj.weight"), tensor(m, name + ".proj.bias"));
}

double gelu(double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x))); }

// S3-Rec's SASRec encoder from its definition, one window: x0 = LN_e(E[id] + P) (padding rows E + P = 0),
// per block h = LN1(x + attention(x)), y = LN2(h + W2·gelu(W1·h)); hidden = the last block's y.
Vec post_ln_reference(const SasRec& m, const int32_t* ids) {
  const ModelConfig& c = m.config();
  const int64_t N = c.N, D = c.D;
  const Vec E = tensor(m, "items"), P = tensor(m, "embed.positions");
  Vec x(size_t(N * D), 0.0);
  for (int64_t n = 0; n < N; ++n)
    if (ids[n] != 0)
      for (int64_t d = 0; d < D; ++d) x[n * D + d] = E[ids[n] * D + d] + P[n * D + d];
  x = layer_norm(x, D, tensor(m, "ln_embed.gain"), tensor(m, "ln_embed.shift"));
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string b = "block" + std::to_string(l);
    const Vec h = layer_norm(add(x, attention(m, b + ".attn", x, ids, N, D, c.heads)), D, tensor(m, b + ".ln1.gain"),
                             tensor(m, b + ".ln1.shift"));
    Vec f = affine(h, D, tensor(m, b + ".ffn.fc.weight"), tensor(m, b + ".ffn.fc.bias"));
    for (double& v : f) v = gelu(v);
    f = affine(f, 4 * D, tensor(m, b + ".ffn.out.weight"), tensor(m, b + ".ffn.out.bias"));
    x = layer_norm(add(h, f), D, tensor(m, b + ".ln2.gain"), tensor(m, b + ".ln2.shift"));
  }
  return x;
}

ModelConfig tiny_model(bool post_ln) {
  ModelConfig c;
  c.V = 13;
  c.N = 5;
  c.D = 8;
  c.layers = 2;
  c.heads = 2;
  c.max_batch = 2;
  c.dropout = 0.3f;  // off in an evaluation forward
  c.init_std = 0.3f;
  c.post_ln = post_ln;
  return c;
}

// Every parameter set to a distinct value (LayerNorm gains near 1, everything else O(0.3)), so that a
// gain taken for a shift, or a LayerNorm in the wrong place, shows.
void set_parameters(SasRec& m) {
  ParameterSet& ps = m.params();
  for (const ParamInfo& t : ps.tensors())
    for (int64_t i = 0; i < t.ref.size; ++i) {
      const double w = 0.3 * std::sin(1.7 * double(t.ref.offset + i) + 0.3);
      ps.value(t.ref)[i] = float(t.name.ends_with(".gain") ? 1.0 + w : w);
    }
}

TEST(SeqrecReferenceSettings, PostLnForwardEqualsAFloat64ReferenceFromTheDefinition) {
  CountingAllocator alloc;
  SasRec post(tiny_model(true), alloc);
  set_parameters(post);
  const std::vector<int32_t> ids{0, 0, 4, 12, 7, /* second window, no padding */ 3, 3, 9, 1, 11};
  const float* hidden = post.forward(ids.data(), 2, /*step=*/1, /*training=*/false);
  const int64_t N = 5, D = 8;
  double worst = 0;
  for (int64_t b = 0; b < 2; ++b) {
    const Vec want = post_ln_reference(post, ids.data() + b * N);
    for (int64_t n = 0; n < N; ++n) {
      if (ids[size_t(b * N + n)] == 0) continue;  // padded rows are never read (weight 0, masked as keys)
      for (int64_t d = 0; d < D; ++d)
        worst = std::max(worst, std::abs(double(hidden[(b * N + n) * D + d]) - want[size_t(n * D + d)]));
    }
  }
  EXPECT_LT(worst, 2e-5) << "post-LN forward against float64 (values O(1) after the last LayerNorm)";

  // The same parameters in the pre-LN layout give another function (the option changes the model).
  CountingAllocator alloc2;
  SasRec pre(tiny_model(false), alloc2);
  ASSERT_EQ(pre.params().size(), post.params().size());  // one layout of parameters
  std::copy_n(post.params().values(), post.params().size(), pre.params().values());
  const float* h_pre = pre.forward(ids.data(), 2, 1, false);
  double differ = 0;
  for (int64_t r = 2; r < 2 * N; ++r)
    for (int64_t d = 0; d < D; ++d) differ = std::max(differ, std::abs(double(h_pre[r * D + d]) - double(hidden[r * D + d])));
  EXPECT_GT(differ, 0.1);
}

// ---------------------------------------------------------------------------------------------------
// Negatives outside the user's history.

TEST(SeqrecReferenceSettings, HistoryNegativesNeverHitTheHistoryAndAreUniformOverTheRest) {
  const int64_t V = 20;
  const std::vector<int32_t> history{2, 3, 5, 7, 11, 13};  // sorted, unique, in [1, V)
  const SampledNegativeLoss loss(/*seed=*/7, /*threads=*/1, NegativeSampling::history);
  for (int32_t positive : {3, 4}) {  // the positive in the history, and (never so in a run) outside it
    std::map<int32_t, int64_t> count;
    const int64_t draws = 26000;
    for (int64_t p = 0; p < draws; ++p) ++count[loss.negative(/*step=*/5, p, positive, V, history)];
    const int64_t free = V - 1 - int64_t(history.size()) - (positive == 4 ? 1 : 0);
    ASSERT_EQ(int64_t(count.size()), free) << "every item outside the history and the positive is drawn, no other";
    for (const auto& [item, n] : count) {
      EXPECT_TRUE(item >= 1 && item < V && item != positive && !std::binary_search(history.begin(), history.end(), item))
          << item;
      const double expect = double(draws) / double(free), sd = std::sqrt(expect * (1 - 1.0 / double(free)));
      EXPECT_LT(std::abs(double(n) - expect), 5 * sd) << "item " << item << " drawn " << n << " times";
    }
  }
  // Reproducible by (seed, step, position); another seed draws others.
  const SampledNegativeLoss again(7, 4, NegativeSampling::history), other(8, 1, NegativeSampling::history);
  int64_t same_other = 0;
  for (int64_t p = 0; p < 200; ++p) {
    EXPECT_EQ(loss.negative(9, p, 3, V, history), again.negative(9, p, 3, V, history));
    same_other += loss.negative(9, p, 3, V, history) == other.negative(9, p, 3, V, history);
  }
  EXPECT_LT(same_other, 60);  // 1/13 expected by chance: about 15 of 200
  // Without a history it is the positive-only draw of the runs made before the option, bit for bit:
  // 1 + below(V − 2), stepped over the positive.
  for (int64_t p = 0; p < 300; ++p) {
    data::Rng rng(data::stream_key(7, 0x5A5E0000ull + 5, uint64_t(p)));
    int64_t v = 1 + int64_t(rng.below(uint64_t(V - 2)));
    if (v >= 9) ++v;
    EXPECT_EQ(loss.negative(5, p, 9, V), v);
  }
}

// Through compute(): items every window's history holds get no gradient (never a negative, never a
// positive here), and the gradients are the same bits at 1 and 3 threads.
TEST(SeqrecReferenceSettings, HistoryNegativesThroughTheLossAreThreadIndependent) {
  const int64_t B = 3, N = 6, D = 4, V = 30;
  std::vector<float> hidden(size_t(B * N * D)), table(size_t(V * D)), weights(size_t(B * N), 1.0f);
  for (size_t i = 0; i < hidden.size(); ++i) hidden[i] = float(std::sin(0.37 * double(i)));
  for (size_t i = 0; i < table.size(); ++i) table[i] = float(std::cos(0.21 * double(i)));
  std::vector<int32_t> targets(size_t(B * N));
  std::vector<std::vector<int32_t>> histories(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    histories[size_t(b)] = {1, 2, 3};
    for (int64_t n = 0; n < N; ++n) {
      targets[size_t(b * N + n)] = int32_t(4 + (b * 7 + n * 3) % (V - 4));
      histories[size_t(b)].push_back(targets[size_t(b * N + n)]);
    }
    std::sort(histories[size_t(b)].begin(), histories[size_t(b)].end());
    histories[size_t(b)].erase(std::unique(histories[size_t(b)].begin(), histories[size_t(b)].end()),
                               histories[size_t(b)].end());
  }
  const std::vector<std::span<const int32_t>> avoid(histories.begin(), histories.end());
  LossBatch lb{B * N, V, D, 1, hidden.data(), table.data(), targets.data(), weights.data()};
  lb.avoid = avoid.data();
  lb.window_positions = N;
  std::vector<std::vector<float>> d_table;
  for (int threads : {1, 3}) {
    const SampledNegativeLoss loss(11, threads, NegativeSampling::history);
    std::vector<float> dh(size_t(B * N * D)), dt(size_t(V * D), 0.0f);
    loss.compute(lb, 2, dh.data(), dt.data());
    d_table.push_back(dt);
    for (int64_t v = 1; v <= 3; ++v)
      for (int64_t d = 0; d < D; ++d) EXPECT_EQ(dt[size_t(v * D + d)], 0.0f) << "item " << v << " was drawn";
  }
  EXPECT_EQ(std::memcmp(d_table[0].data(), d_table[1].data(), d_table[0].size() * 4), 0);
  const SampledNegativeLoss without(11, 1, NegativeSampling::history);
  LossBatch bare = lb;
  bare.avoid = nullptr;
  std::vector<float> dh(size_t(B * N * D)), dt(size_t(V * D), 0.0f);
  EXPECT_THROW(without.compute(bare, 2, dh.data(), dt.data()), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------------
// The options through a run: run file, bits, checkpoint identity, selection.

struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir("seqrec_reference_") {}
};

SeqrecOutcome run(const SeqrecConfig& c) {
  std::ostringstream log, progress;
  return run_seqrec(c, collect_provenance("test"), log, progress);
}

std::string text_attr(const std::string& path, const char* name) {
  auto f = h5::open_file_read(path);
  return h5::read_attr_string(f, name).value_or("");
}

// The tiny sampled run by epochs (5 steps each), evaluated every epoch.
SeqrecConfig sampled_by_epochs(const fs::path& out, int64_t epochs) {
  SeqrecConfig c = testing::tiny_run("sampled", out);
  c.steps = 0;
  c.epochs = epochs;
  c.eval_every = 1;
  return c;
}

TEST(SeqrecReferenceSettings, EachOptionReachesTheRunFileAndChangesTheBitsTrained) {
  TempDir dir;
  const SeqrecConfig base = sampled_by_epochs(dir.path / "base.h5", 1);
  ASSERT_EQ(run(base).status, "ok");
  const std::string base_hash = text_attr(base.out, "parameters_hash");
  EXPECT_EQ(text_attr(base.out, "block"), "pre_ln");
  EXPECT_EQ(text_attr(base.out, "negatives"), "positive");
  EXPECT_EQ(text_attr(base.out, "select"), "hr@10");
  struct Change {
    const char* name;
    void (*apply)(SeqrecConfig&);
  };
  const Change changes[] = {{"block", [](SeqrecConfig& c) { c.block = "post_ln"; }},
                            {"adam_beta2", [](SeqrecConfig& c) { c.adam_beta2 = 0.999f; }},
                            {"negatives", [](SeqrecConfig& c) { c.negatives = "history"; }}};
  for (const Change& ch : changes) {
    SeqrecConfig c = base;
    ch.apply(c);
    c.out = (dir.path / (std::string(ch.name) + ".h5")).string();
    ASSERT_EQ(run(c).status, "ok") << ch.name;
    EXPECT_NE(text_attr(c.out, "parameters_hash"), base_hash) << ch.name << " changed nothing trained";
  }
  auto f = h5::open_file_read((dir.path / "adam_beta2.h5").string());
  EXPECT_NEAR(h5::read_attr_double(f, "adam_beta2").value_or(0), 0.999, 1e-7);
  EXPECT_EQ(text_attr((dir.path / "block.h5").string(), "block"), "post_ln");
  EXPECT_EQ(text_attr((dir.path / "negatives.h5").string(), "negatives"), "history");

  // --negatives history in micro-batches: each micro-batch avoids its own windows' histories, so the
  // per-step losses are the plain step's up to the sum's rounding.
  SeqrecConfig plain = base, micro = base;
  plain.negatives = micro.negatives = "history";
  plain.out = (dir.path / "plain.h5").string();
  micro.out = (dir.path / "micro.h5").string();
  micro.micro_batch = 2;
  ASSERT_EQ(run(plain).status, "ok");
  ASSERT_EQ(run(micro).status, "ok");
  const auto a = SeqrecRunFile::read_steps(plain.out), b = SeqrecRunFile::read_steps(micro.out);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(b[i].loss, a[i].loss, 1e-5 * std::abs(a[i].loss)) << "step " << i + 1;

  SeqrecConfig refused = base;  // a full-vocabulary objective has no sampled negative
  refused.variant = "fused";
  refused.negatives = "history";
  refused.out = (dir.path / "refused.h5").string();
  EXPECT_THROW(run(refused), std::invalid_argument);
  EXPECT_FALSE(fs::exists(refused.out));
}

// S3-Rec's settings together go on through a checkpoint bit for bit, and a checkpoint is continued only
// under its own --block, --adam-beta2, --negatives and --select.
TEST(SeqrecReferenceSettings, TheCheckpointIdentityHoldsEachOption) {
  TempDir dir;
  const auto s3rec = [](SeqrecConfig c) {
    c.block = "post_ln";
    c.adam_beta2 = 0.999f;
    c.negatives = "history";
    c.select = "ndcg@20";
    c.early_stop = 50;  // records the best epoch, never stops here
    return c;
  };
  const SeqrecConfig whole = s3rec(sampled_by_epochs(dir.path / "whole.h5", 4));
  ASSERT_EQ(run(whole).status, "ok");
  SeqrecConfig first = s3rec(sampled_by_epochs(dir.path / "first.h5", 2));
  first.checkpoint = (dir.path / "ck.h5").string();
  ASSERT_EQ(run(first).status, "ok");
  SeqrecConfig second = s3rec(sampled_by_epochs(dir.path / "second.h5", 4));
  second.resume_from = first.checkpoint;
  ASSERT_EQ(run(second).status, "ok");
  EXPECT_EQ(text_attr(second.out, "parameters_hash"), text_attr(whole.out, "parameters_hash"));
  const auto rw = SeqrecRunFile::read_epochs(whole.out), rs = SeqrecRunFile::read_epochs(second.out);
  ASSERT_EQ(rw.size(), rs.size());
  for (size_t i = 0; i < rw.size(); ++i) EXPECT_EQ(rw[i].dev_ndcg_at_20, rs[i].dev_ndcg_at_20) << i;

  struct Change {
    const char* option;
    void (*apply)(SeqrecConfig&);
  };
  const Change changes[] = {{"--block: post_ln in the checkpoint, pre_ln here", [](SeqrecConfig& c) { c.block = "pre_ln"; }},
                            {"--adam-beta2: 0.999 in the checkpoint, 0.98 here", [](SeqrecConfig& c) { c.adam_beta2 = 0.98f; }},
                            {"--negatives: history in the checkpoint, positive here",
                             [](SeqrecConfig& c) { c.negatives = "positive"; }},
                            {"--select: ndcg@20 in the checkpoint, hr@10 here", [](SeqrecConfig& c) { c.select = "hr@10"; }}};
  for (const Change& ch : changes) {
    SeqrecConfig other = s3rec(sampled_by_epochs(dir.path / "other.h5", 4));
    other.resume_from = first.checkpoint;
    ch.apply(other);
    try {
      run(other);
      ADD_FAILURE() << "continued under another setting: " << ch.option;
    } catch (const RunRefused& e) {
      EXPECT_NE(std::string(e.what()).find(ch.option), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(other.out));
  }
}

TEST(SeqrecReferenceSettings, TheSelectedMetricDecidesTheBestEpoch) {
  const auto row = [](int64_t epoch, double hr10, double ndcg20) {
    EpochRow r;
    r.epoch = epoch;
    r.dev_hr_at_10 = hr10;
    r.dev_ndcg_at_20 = ndcg20;
    return r;
  };
  const EpochRow rows[] = {row(1, 0.10, 0.05), row(2, 0.12, 0.04), row(3, 0.11, 0.06), row(4, 0.09, 0.06)};
  EarlyStopping hr(0, SelectionMetric::hr_at_10), ndcg(0, SelectionMetric::ndcg_at_20);
  for (const EpochRow& r : rows) {
    hr.observe(r);
    ndcg.observe(r);
  }
  EXPECT_EQ(hr.best().epoch, 2);
  EXPECT_EQ(ndcg.best().epoch, 3);  // epoch 4 ties it: the earlier is kept
  EXPECT_THROW(parse_selection_metric("ndcg@10"), std::invalid_argument);

  // A run records as its best dev epoch the first argmax of its /epochs' dev metric.
  TempDir dir;
  for (const char* metric : {"ndcg@20", "hr@10"}) {
    SeqrecConfig c = sampled_by_epochs(dir.path / (std::string(metric == std::string("hr@10") ? "hr" : "ndcg") + ".h5"), 6);
    c.select = metric;
    c.early_stop = 100;  // records, never stops
    ASSERT_EQ(run(c).status, "ok");
    const auto epochs = SeqrecRunFile::read_epochs(c.out);
    const SelectionMetric m = parse_selection_metric(metric);
    int64_t best = 0;
    for (const EpochRow& r : epochs)
      if (best == 0 || dev_value(r, m) > dev_value(epochs[size_t(best - 1)], m)) best = r.epoch;
    auto f = h5::open_file_read(c.out);
    EXPECT_EQ(h5::read_attr_int64(f, "best_dev_epoch").value_or(-1), best) << metric;
    EXPECT_EQ(h5::read_attr_double(f, "best_test_ndcg_at_20").value_or(-1), epochs[size_t(best - 1)].test_ndcg_at_20);
    EXPECT_EQ(text_attr(c.out, "select"), metric);
  }
}

}  // namespace
}  // namespace lobench::seqrec
