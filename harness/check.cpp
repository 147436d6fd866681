#include "harness/check.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "harness/io/h5_io.hpp"
#include "harness/provenance.hpp"
#include "variants/variant.hpp"

namespace lobench {
namespace {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename T>
h5::Array<T> read_rank(hid_t f, const std::string& name, int rank) {
  auto a = h5::read<T>(f, name);
  if (int(a.shape.size()) != rank)
    throw InputError(fmt::format("dataset '{}' has rank {}, expected {}", name, a.shape.size(), rank));
  return a;
}

void require_finite(const std::vector<float>& x, const std::string& name, int64_t row_len) {
  for (size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i]))
      throw InputError(fmt::format("dataset '{}' holds a non-finite value ({}) at [{}, {}]", name, x[i],
                                   int64_t(i) / row_len, int64_t(i) % row_len));
}

}  // namespace

StepData read_check_inputs(const std::string& path) {
  auto f = h5::open_file_read(path);
  StepData d;
  auto A = read_rank<float>(f, "A", 2);
  auto E = read_rank<float>(f, "E", 2);
  auto T = read_rank<int32_t>(f, "targets", 2);
  d.P = A.shape[0];
  d.D = A.shape[1];
  d.V = E.shape[0];
  d.L = T.shape[1];
  if (d.P < 1 || d.D < 1) throw InputError(fmt::format("dataset 'A' is empty (shape [{}, {}])", d.P, d.D));
  if (d.V < 1) throw InputError("dataset 'E' is empty: V must be at least 1");
  if (E.shape[1] != d.D)
    throw InputError(fmt::format("dataset 'E' has D = {} columns but 'A' has D = {}", E.shape[1], d.D));
  if (T.shape[0] != d.P)
    throw InputError(fmt::format("dataset 'targets' has {} rows but 'A' has P = {}", T.shape[0], d.P));
  if (d.L < 1) throw InputError("dataset 'targets' has no columns: L must be at least 1");
  if (d.V > int64_t(INT32_MAX) - 1) throw InputError(fmt::format("dataset 'E' has V = {} rows, more than int32 ids allow", d.V));
  require_finite(A.data, "A", d.D);
  require_finite(E.data, "E", d.D);
  d.A = std::move(A.data);
  d.E = std::move(E.data);
  d.targets = std::move(T.data);
  if (h5::exists(f, "weights")) {
    auto w = read_rank<float>(f, "weights", 1);
    if (w.shape[0] != d.P)
      throw InputError(fmt::format("dataset 'weights' has {} entries but 'A' has P = {}", w.shape[0], d.P));
    for (size_t i = 0; i < w.data.size(); ++i)
      if (!std::isfinite(w.data[i]) || w.data[i] < 0)
        throw InputError(fmt::format("dataset 'weights' holds {} at [{}]; weights must be finite and >= 0", w.data[i], i));
    d.weights = std::move(w.data);
  }
  const std::string red = h5::read_attr_string(f, "reduction").value_or("mean");
  try {
    d.reduction = parse_reduction(red);
  } catch (const std::invalid_argument& e) {
    throw InputError(fmt::format("attribute 'reduction': {}", e.what()));
  }
  return d;
}

void run_check(const std::string& in_path, const std::string& variant_name, const std::string& out_path, int threads,
               const std::string& argv_joined) {
  // A stale OUT from an earlier run must not survive a failed check and be mistaken for its result.
  std::filesystem::remove(out_path);
  const Variant* v = Registry::instance().find(variant_name);
  if (!v) throw std::runtime_error(fmt::format("unknown variant '{}' (see `lobench list`)", variant_name));
  const StepData d = read_check_inputs(in_path);
  const StepInputs in = d.view();
  Shape s{1, d.P, d.V, d.D, d.L, d.reduction, !d.weights.empty()};
  RunOptions opts{threads, 0, 0};
  if (auto why = v->skip_reason(s, opts)) throw std::runtime_error(fmt::format("variant '{}' cannot run this input: {}", variant_name, *why));

  StepOutputs out;
  out.resize(d.P, d.V, d.D);
  CountingAllocator alloc;
  RunContext ctx{alloc, opts};
  v->run(in, out, ctx);

  const std::string tmp = out_path + ".partial";
  try {
    {
      auto f = h5::create_file(tmp);
      write_provenance(f, collect_provenance(argv_joined));
      h5::write_attr(f, "variant", v->backend() + "/" + v->name());
      h5::write_attr(f, "reduction", to_string(d.reduction));
      h5::write_attr(f, "input", in_path);
      h5::write_attr(f, "peak_working_bytes", alloc.peak_bytes());
      h5::write_scalar(f, "loss", out.loss);
      h5::write(f, "per_position_loss", {d.P}, out.per_position_loss.data());
      h5::write(f, "dA", {d.P, d.D}, out.dA.data());
      h5::write(f, "dE", {d.V, d.D}, out.dE.data());
      h5::write(f, "counts", {d.P, 4}, out.counts.data());
    }
    std::filesystem::rename(tmp, out_path);
  } catch (...) {
    std::filesystem::remove(tmp);
    throw;
  }
}

}  // namespace lobench
