#include "harness/seqrec/micro_batch_step.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "harness/seqrec/fixed_order_sum.hpp"

namespace lobench::seqrec {

void validate(const MicroBatchPlan& p) {
  if (p.micro < 1 || p.micro > p.B || p.B % p.micro != 0)
    throw std::invalid_argument(fmt::format("train-seqrec: --micro-batch {} must divide --B {}", p.micro, p.B));
  if (!ranks_split_the_tree(p.leaves(), p.ranks))
    throw std::invalid_argument(fmt::format(
        "train-seqrec --data-parallel: {} ranks cannot split a batch of {} micro-batches (--B {} / {}) into blocks "
        "that reproduce the one-process sum: the number of ranks must be a power of two dividing {}",
        p.ranks, p.leaves(), p.B,
        p.micro_given ? fmt::format("--micro-batch {}", p.micro)
                      : fmt::format("micro-batches of {}: --micro-batch not given, its default --B / ranks where the "
                                    "ranks divide --B, else --B",
                                    p.micro),
        p.leaves()));
}

int64_t MicroBatchStep::partial_sum_bytes(int64_t parameters, const MicroBatchPlan& plan) {
  const int64_t k = plan.leaves_per_rank();
  return k > 1 ? int64_t(tree_slots(k)) * parameters * 4 : 0;
}

MicroBatchStep::MicroBatchStep(SasRec& model, Objective& objective, CountingAllocator& alloc,
                               const MicroBatchPlan& plan, GradientExchange* exchange)
    : model_(model), objective_(objective), plan_(plan), exchange_(exchange), step_(model, objective, alloc),
      grad_floats_(model.params().size()) {
  validate(plan);
  if (model.config().max_batch != plan.micro) throw std::logic_error("MicroBatchStep: the model's max_batch is not the micro-batch");
  if ((exchange ? exchange->ranks() : 1) != plan.ranks) throw std::logic_error("MicroBatchStep: ranks differ from the exchange's");
  const int64_t k = plan.leaves_per_rank();
  if (k > 1)
    for (int s = 0; s < tree_slots(k); ++s) slots_.emplace_back(alloc, grad_floats_);
}

bool MicroBatchStep::run_leaf(const Batch& whole, int64_t leaf, uint64_t step, double step_weight_sum,
                              StepRecord& total, std::vector<double>& losses, std::vector<int64_t>& counts) {
  const int64_t N = model_.config().N, first = leaf * plan_.micro;
  const int64_t windows = std::min(plan_.micro, whole.B - first);
  if (windows <= 0) return false;
  Batch b;
  b.B = windows;
  b.L = whole.L;
  b.ids = whole.ids + first * N;
  b.targets = whole.targets + first * N * whole.L;
  b.weights = whole.weights + first * N;
  b.avoid = whole.avoid ? whole.avoid + first : nullptr;
  b.first_window = first;
  b.step_weight_sum = step_weight_sum;
  const StepRecord r = step_.run(b, step, nullptr);
  total.forward_s += r.forward_s;
  total.loss_s += r.loss_s;
  total.backward_s += r.backward_s;
  total.loss_workspace_peak = std::max(total.loss_workspace_peak, r.loss_workspace_peak);
  losses[size_t(leaf)] = r.loss;
  for (int64_t c : {r.tp, r.fp, r.fn, r.tn}) counts.push_back(c);
  return true;
}

StepRecord MicroBatchStep::run(const Batch& whole, uint64_t step, AdamW* opt) {
  const int64_t K = plan_.leaves(), k = plan_.leaves_per_rank();
  if (K == 1 && !exchange_) return step_.run(whole, step, opt);  // the plain step
  const int64_t N = model_.config().N;
  const int rank = exchange_ ? exchange_->rank() : 0;
  // The whole step's Σw sets every leaf's mean (so that the leaves' losses and gradients add up to the
  // step's); K = 1 keeps the contract's own (the same number, computed by the variant).
  LossBatch all;
  all.P = whole.B * N;
  all.V = model_.config().V;
  all.L = whole.L;
  all.targets = whole.targets;
  all.weights = whole.weights;
  const double wsum = K > 1 ? objective_.weight_sum(all) : std::numeric_limits<double>::quiet_NaN();

  StepRecord rec;
  std::vector<double> losses(size_t(K), 0.0);
  std::vector<int64_t> counts;  // tp, fp, fn, tn of each of this rank's leaves
  const int64_t lo = rank * k, hi = lo + k;
  bool present = false;
  std::string error;
  try {
    if (k == 1) {
      present = run_leaf(whole, lo, step, wsum, rec, losses, counts);
    } else {
      float* grads = model_.params().grads();
      const int64_t n = grad_floats_;
      TreeOps ops;
      ops.leaf = [&](int64_t leaf, int s) {
        if (!run_leaf(whole, leaf, step, wsum, rec, losses, counts)) return false;
        std::copy_n(grads, n, slots_[size_t(s)].data());
        return true;
      };
      ops.add = [&](int s, int from) {
        float* into = slots_[size_t(s)].data();
        const float* x = slots_[size_t(from)].data();
#pragma omp parallel for schedule(static) num_threads(model_.config().threads)
        for (int64_t i = 0; i < n; ++i) into[i] += x[i];
      };
      ops.move = [&](int s, int from) { std::copy_n(slots_[size_t(from)].data(), n, slots_[size_t(s)].data()); };
      present = tree_sum(lo, hi, 0, ops);
      if (present) std::copy_n(slots_[0].data(), n, grads);
    }
  } catch (const std::exception& e) {
    if (!exchange_) throw;
    error = e.what();  // every rank learns it at the checkpoint below, none is left waiting
  }
  // Leaf i holds windows [i·micro, ...): present when it starts inside the batch (every rank knows).
  std::vector<char> leaf_present(static_cast<size_t>(K)), rank_present(static_cast<size_t>(plan_.ranks));
  for (int64_t i = 0; i < K; ++i) leaf_present[size_t(i)] = i * plan_.micro < whole.B;
  for (int64_t r = 0; r < plan_.ranks; ++r) rank_present[size_t(r)] = leaf_present[size_t(r * k)];
  if (exchange_) {
    const double t0 = exchange_->totals().seconds;
    exchange_->check(error);
    exchange_->sum(model_.params().grads(), grad_floats_, rank_present);
    std::vector<double> mine(losses.begin() + lo, losses.begin() + hi);
    losses = exchange_->gather(mine);
    counts.resize(size_t(4 * k), 0);  // absent leaves count nothing
    counts = exchange_->gather(counts);
    rec.comm_s = exchange_->totals().seconds - t0;
  }
  rec.loss = tree_sum_values(losses.data(), K, 1, leaf_present.data());
  rec.tp = rec.fp = rec.fn = rec.tn = 0;
  for (size_t i = 0; i + 3 < counts.size(); i += 4) {
    rec.tp += counts[i];
    rec.fp += counts[i + 1];
    rec.fn += counts[i + 2];
    rec.tn += counts[i + 3];
  }
  if (opt) {
    const auto t0 = std::chrono::steady_clock::now();
    opt->step(model_.params(), model_.config().threads);
    rec.optimizer_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  return rec;
}

}  // namespace lobench::seqrec
