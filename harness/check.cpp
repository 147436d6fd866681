#include "harness/check.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <tuple>

#include "harness/config/option_checks.hpp"
#include "harness/meters/products_choice.hpp"
#include "variants/checked_math.hpp"
#include "harness/io/output_path.hpp"
#include "harness/system_memory.hpp"
#include "harness/io/h5_io.hpp"
#include "harness/io/provenance_attrs.hpp"
#include "harness/io/run_file_writer.hpp"
#include "variants/variant.hpp"

namespace lobench {
namespace {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The header of dataset `name`, required to be T of rank `rank`.
template <typename T>
h5::DatasetInfo inspect_as(hid_t f, const std::string& name, size_t rank) {
  h5::DatasetInfo info = h5::inspect(f, name);
  h5::require_type<T>(info, name);
  if (info.shape.size() != rank)
    throw InputError(fmt::format("dataset '{}' has rank {}, expected {}", name, info.shape.size(), rank));
  return info;
}

void require_finite(const std::vector<float>& x, const std::string& name, int64_t row_len) {
  for (size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i]))
      throw InputError(fmt::format("dataset '{}' holds a non-finite value ({}) at [{}, {}]", name, x[i],
                                   int64_t(i) / row_len, int64_t(i) % row_len));
}

// Bytes a check needs in memory besides the variant's working set: the inputs and the outputs. Every
// product is checked (a header may claim anything); sizes up to 32 bytes per element of [P, V], [V, D]
// and [P, D] must fit in int64 so that every variant's own prediction is free of overflow too.
void require_representable(const CheckShapes& s) {
  for (auto [what, a, b] : {std::tuple{"P·V", s.P, s.V}, {"V·D", s.V, s.D}, {"P·D", s.P, s.D}, {"P·L", s.P, s.L}})
    if (!checked_product({a, b, 32}))
      throw InputError(fmt::format("the inputs' shapes (P = {}, V = {}, D = {}, L = {}) are too large: {} overflows "
                                   "int64",
                                   s.P, s.V, s.D, s.L, what));
}

}  // namespace

int64_t CheckShapes::input_bytes() const { return (P * D + V * D + P * L + (weighted ? P : 0)) * 4; }

CheckShapes read_check_shapes(hid_t f) {
  const auto A = inspect_as<float>(f, "A", 2);
  const auto E = inspect_as<float>(f, "E", 2);
  const auto T = inspect_as<int32_t>(f, "targets", 2);
  CheckShapes s;
  s.P = A.shape[0];
  s.D = A.shape[1];
  s.V = E.shape[0];
  s.L = T.shape[1];
  if (s.P < 1 || s.D < 1) throw InputError(fmt::format("dataset 'A' is empty (shape [{}, {}])", s.P, s.D));
  if (s.V < 1) throw InputError("dataset 'E' is empty: V must be at least 1");
  if (E.shape[1] != s.D)
    throw InputError(fmt::format("dataset 'E' has D = {} columns but 'A' has D = {}", E.shape[1], s.D));
  if (T.shape[0] != s.P)
    throw InputError(fmt::format("dataset 'targets' has {} rows but 'A' has P = {}", T.shape[0], s.P));
  if (s.L < 1) throw InputError("dataset 'targets' has no columns: L must be at least 1");
  if (s.V > int64_t(INT32_MAX) - 1)
    throw InputError(fmt::format("dataset 'E' has V = {} rows, more than int32 ids allow", s.V));
  if (h5::exists(f, "weights")) {
    const auto w = inspect_as<float>(f, "weights", 1);
    if (w.shape[0] != s.P)
      throw InputError(fmt::format("dataset 'weights' has {} entries but 'A' has P = {}", w.shape[0], s.P));
    s.weighted = true;
  }
  require_representable(s);
  return s;
}

StepData read_check_inputs(const std::string& path) {
  io::require_input_file(path, "--in");
  auto f = h5::open_file_read(path);
  const CheckShapes s = read_check_shapes(f);
  StepData d;
  d.P = s.P, d.D = s.D, d.V = s.V, d.L = s.L;
  const std::string red = h5::read_attr_string(f, "reduction").value_or("mean");
  try {
    d.reduction = parse_reduction(red);
  } catch (const std::invalid_argument& e) {
    throw InputError(fmt::format("attribute 'reduction': {}", e.what()));
  }
  d.A = h5::read<float>(f, "A").data;
  require_finite(d.A, "A", d.D);
  d.E = h5::read<float>(f, "E").data;
  require_finite(d.E, "E", d.D);
  d.targets = h5::read<int32_t>(f, "targets").data;
  if (s.weighted) {
    auto w = h5::read<float>(f, "weights").data;
    for (size_t i = 0; i < w.size(); ++i)
      if (!std::isfinite(w[i]) || w[i] < 0)
        throw InputError(fmt::format("dataset 'weights' holds {} at [{}]; weights must be finite and >= 0", w[i], i));
    d.weights = std::move(w);
  }
  return d;
}

void run_check(const std::string& in_path, const std::string& variant_name, const std::string& out_path, int threads,
               const std::string& argv_joined, int64_t mem_limit, bool overwrite) {
  const Variant* v = Registry::instance().find(variant_name);
  if (!v) throw std::runtime_error(fmt::format("unknown variant '{}' (see `lobench list`)", variant_name));
  config::check_threads("--threads", threads);
  if (mem_limit <= 0) mem_limit = config::default_memory_limit();
  io::require_input_file(in_path, "--in");
  io::RunFileWriter output(out_path, "--out");  // refused before anything is read or computed
  output.begin_whole({in_path}, overwrite);

  // The prediction, from the headers alone: inputs + outputs + the variant's working set.
  RunOptions opts;
  opts.threads = threads;
  StepData d;
  try {
    auto f = h5::open_file_read(in_path);
    const CheckShapes cs = read_check_shapes(f);
    const Shape s{1, cs.P, cs.V, cs.D, cs.L, Reduction::mean, cs.weighted};
    if (auto why = v->skip_reason(s, opts))
      throw std::runtime_error(fmt::format("variant '{}' cannot run this input: {}", variant_name, *why));
    const double needed = double(cs.input_bytes()) + double(StepOutputs::bytes(cs.P, cs.V, cs.D)) +
                          double(v->predicted_working_bytes(s, opts));
    if (needed > double(mem_limit))
      throw InputError(fmt::format("its shapes (P = {}, V = {}, D = {}, L = {}) need {} with variant '{}' (inputs, "
                                   "outputs and working set), more than the memory limit {} (--mem-limit)",
                                   cs.P, cs.V, cs.D, cs.L, format_bytes(needed), variant_name,
                                   format_bytes(double(mem_limit))));
    d = read_check_inputs(in_path);
  } catch (const h5::Error& e) {
    throw InputError(fmt::format("input '{}': {}", in_path, e.what()));
  } catch (const InputError& e) {
    throw InputError(fmt::format("input '{}': {}", in_path, e.what()));
  }
  const StepInputs in = d.view();

  StepOutputs out;
  out.resize(d.P, d.V, d.D);
  CountingAllocator alloc;
  RunContext ctx{alloc, opts};
  const bool fp32_cpu = v->backend() == "cpu";  // (check runs fp32 operands)
  {
    std::optional<meters::Fp32ProductsForD> products;  // the fp32 tiles' products chosen for this D
    if (fp32_cpu) products.emplace(d.D);
    v->run(in, out, ctx);
  }

  output.write_whole([&](hid_t f) {
    write_provenance(f, collect_provenance(argv_joined));
    h5::write_attr(f, "variant", v->backend() + "/" + v->name());
    h5::write_attr(f, "reduction", to_string(d.reduction));
    h5::write_attr(f, "input", in_path);
    h5::write_attr(f, "peak_working_bytes", alloc.peak_bytes());
    if (fp32_cpu) h5::write_attr(f, "fp32_products", meters::fp32_products_choice().products);
    if (fp32_cpu) h5::write_attr(f, "fp32_products_basis", meters::fp32_products_choice().basis);
    h5::write_scalar(f, "loss", out.loss);
    h5::write(f, "per_position_loss", {d.P}, out.per_position_loss.data());
    h5::write(f, "dA", {d.P, d.D}, out.dA.data());
    h5::write(f, "dE", {d.V, d.D}, out.dE.data());
    h5::write(f, "counts", {d.P, 4}, out.counts.data());
  });
}

}  // namespace lobench
