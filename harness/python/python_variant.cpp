#include "harness/python/python_variant.hpp"

#include <nanobind/ndarray.h>
#include <fmt/format.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>
#include <stdexcept>

#include "harness/meters/peak_rss.hpp"
#include "variants/timing.hpp"

namespace nb = nanobind;

namespace lobench::python {
namespace {

std::string text(nb::handle h) { return nb::str(h).c_str(); }

// A Python exception as one line: "TypeError: message".
std::string describe(const nb::python_error& e) {
  return text(e.type().attr("__name__")) + ": " + text(e.value());
}

nb::dict shape_dict(const Shape& s) {
  nb::dict d;
  d["B"] = s.B;
  d["N"] = s.N;
  d["P"] = s.P();
  d["V"] = s.V;
  d["D"] = s.D;
  d["L"] = s.L;
  d["reduction"] = s.reduction == Reduction::mean ? "mean" : "sum";
  d["weighted"] = s.weighted;
  return d;
}

nb::dict options_dict(const RunOptions& o) {
  nb::dict d;
  d["threads"] = o.threads;
  d["block_v"] = o.block_v;
  d["block_p"] = o.block_p;
  d["e_format"] = o.e_format.empty() ? "fp32" : o.e_format;
  d["operand"] = o.operand.empty() ? "fp32" : o.operand;
  return d;
}

// A step that keeps what it allocated: the process's resident memory grew by at least kLeakPerStep over
// each of two consecutive steps (the same work each time: a working set is reused, not kept). Smaller
// leaks pass unnoticed; three steps (e.g. --warmup 1 --reps 2) are the fewest that can show one.
constexpr int64_t kLeakPerStep = int64_t(1) << 20;

std::optional<std::string> leak_of(const std::vector<int64_t>& resident) {
  const size_t n = resident.size();
  if (n < 3 || resident[n - 3] < 0) return std::nullopt;  // -1: unreadable
  const int64_t first = resident[n - 2] - resident[n - 3], second = resident[n - 1] - resident[n - 2];
  if (first < kLeakPerStep || second < kLeakPerStep) return std::nullopt;
  return fmt::format("it leaks memory: the process's resident memory grew by {:.1f} and {:.1f} MiB over steps {} and {} "
                     "(each step must free what it allocates)",
                     double(first) / (1 << 20), double(second) / (1 << 20), n - 1, n);
}

template <typename T>
nb::object numpy_view(const T* data, std::initializer_list<size_t> shape) {
  // Read-only (const) and not owned: the engine's inputs outlive the session that hands them out.
  return nb::cast(nb::ndarray<nb::numpy, const T>(data, shape, nb::handle()));
}

void copy_finite(const float* src, int64_t n, int64_t cols, std::vector<float>& dst, const char* what) {
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(src[i]))
      throw std::runtime_error(std::string("its step returned a non-finite ") + what + " (" + std::to_string(src[i]) +
                               " at [" + std::to_string(i / cols) + ", " + std::to_string(i % cols) + "])");
  std::copy_n(src, n, dst.begin());
}

class PythonSession final : public DeviceSession {
 public:
  PythonSession(nb::object variant, nb::object step, const StepInputs& in, std::string name, meters::PeakRssMeter rss)
      : variant_(std::move(variant)), step_(std::move(step)), P_(in.P), V_(in.V), D_(in.D), name_(std::move(name)),
        rss_(rss) {
    self_timed_ = nb::hasattr(variant_, "self_timed") && nb::cast<bool>(nb::bool_(variant_.attr("self_timed")));
  }
  ~PythonSession() override {
    nb::gil_scoped_acquire gil;
    step_.reset();
    result_.reset();
    variant_.reset();
  }
  double run_timed() override {
    nb::gil_scoped_acquire gil;
    double seconds = 0;
    try {
      nb::object r;
      seconds = seconds_of([&] { r = step_(); });
      if (self_timed_) seconds = own_seconds(r);
      result_ = std::move(r);
    } catch (const nb::python_error& e) {
      throw std::runtime_error("python variant " + name_ + ": its step raised " + describe(e));
    }
    resident_after_step_.push_back(meters::resident_bytes());  // untimed
    if (const std::optional<std::string> leak = leak_of(resident_after_step_))
      throw std::runtime_error("python variant " + name_ + ": " + *leak);
    return seconds;
  }
  void download(StepOutputs& out) override {
    nb::gil_scoped_acquire gil;
    growth_ = rss_.growth_bytes();
    try {
      unpack(out);
      read_framework_peak();
    } catch (const nb::python_error& e) {
      throw std::runtime_error("python variant " + name_ + ": its result could not be read: " + describe(e));
    } catch (const std::exception& e) {
      throw std::runtime_error("python variant " + name_ + ": " + e.what());
    }
  }
  // The framework's own count when the variant reports one (measured_peak_bytes()), else the RSS growth
  // from before prepare() to after the last step (its allocations do not go through the counting allocator).
  int64_t peak_working_bytes() const override {
    if (framework_peak_ >= 0) return framework_peak_;
    return std::isfinite(growth_) ? int64_t(std::max(0.0, growth_)) : 0;
  }
  int64_t io_device_bytes() const override { return 0; }
  std::string timing_source() const override { return self_timed_ ? "self_timed" : "host_clock"; }
  std::string memory_meter() const override { return framework_peak_ >= 0 ? "framework_counter" : "rss_growth"; }

 private:
  // A self-timed variant's step returns (seconds, outputs): its own time of the step (e.g. CUDA events).
  double own_seconds(nb::object& r) const {
    if (!nb::isinstance<nb::tuple>(r) || nb::len(r) != 2)
      throw std::runtime_error("python variant " + name_ + ": a self-timed step must return (seconds, outputs)");
    nb::tuple pair = nb::borrow<nb::tuple>(r);
    const double s = nb::cast<double>(nb::module_::import_("builtins").attr("float")(pair[0]));
    if (!std::isfinite(s) || s < 0)
      throw std::runtime_error("python variant " + name_ + ": its step timed itself at " + std::to_string(s) + " s");
    r = nb::borrow<nb::object>(pair[1]);
    return s;
  }
  void read_framework_peak() {
    if (!nb::hasattr(variant_, "measured_peak_bytes")) return;
    nb::object v = variant_.attr("measured_peak_bytes")();
    if (v.is_none()) return;
    const int64_t bytes = nb::cast<int64_t>(v);
    if (bytes < 0) throw std::runtime_error("measured_peak_bytes() returned " + std::to_string(bytes));
    framework_peak_ = bytes;
  }
  // The result through lobench.python_variants.checked_outputs (its dtypes, shapes and types), then
  // copied with every value checked finite.
  void unpack(StepOutputs& out) {
    if (!result_.is_valid()) throw std::runtime_error("its step returned nothing");
    nb::tuple r = nb::borrow<nb::tuple>(
        nb::module_::import_("lobench.python_variants").attr("checked_outputs")(result_, P_, V_, D_));
    out.loss = nb::cast<double>(r[0]);
    if (!std::isfinite(out.loss)) throw std::runtime_error("its step returned a non-finite loss (" + std::to_string(out.loss) + ")");
    const auto dA = nb::cast<nb::ndarray<const float, nb::c_contig>>(r[1]);
    copy_finite(dA.data(), P_ * D_, D_, out.dA, "dA");
    const auto dE = nb::cast<nb::ndarray<const float, nb::c_contig>>(r[2]);
    copy_finite(dE.data(), V_ * D_, D_, out.dE, "dE");
    std::fill(out.per_position_loss.begin(), out.per_position_loss.end(), std::numeric_limits<double>::quiet_NaN());
    if (!r[3].is_none()) {
      const auto counts = nb::cast<nb::ndarray<const int64_t, nb::c_contig>>(r[3]);
      std::copy_n(counts.data(), P_ * 4, out.counts.begin());
    } else {
      out.counts.clear();  // not computed: the row's counts_mismatch is NaN, not a count of zeros
    }
  }

  nb::object variant_, step_, result_;
  int64_t P_, V_, D_;
  std::string name_;
  meters::PeakRssMeter rss_;
  std::vector<int64_t> resident_after_step_;
  double growth_ = std::numeric_limits<double>::quiet_NaN();
  bool self_timed_ = false;
  int64_t framework_peak_ = -1;  // measured_peak_bytes(), -1 when the variant has none
};

class PythonVariant final : public Variant {
 public:
  explicit PythonVariant(nb::object obj) : obj_(std::move(obj)) {
    name_ = text(obj_.attr("name"));
    description_ = nb::hasattr(obj_, "description") ? text(obj_.attr("description")) : "a Python variant";
  }
  ~PythonVariant() override {
    if (Py_IsInitialized()) {
      nb::gil_scoped_acquire gil;
      obj_.reset();
    } else {
      obj_.release();  // the interpreter is gone: nothing to release the reference to
    }
  }
  std::string name() const override { return name_; }
  std::string backend() const override { return "python"; }
  std::string description() const override { return description_; }
  std::string supports() const override { return "what its own code handles; E in fp32 (checked against the reference)"; }

  std::optional<std::string> skip_reason(const Shape& s, const RunOptions& o) const override {
    // The operand is the variant's to accept when it has a skip_reason (lobench.python_variants.Variant's
    // default declines all but fp32); without one, fp32 only, as a built-in's default.
    if (!nb::hasattr(obj_, "skip_reason")) return Variant::skip_reason(s, o);
    if (!o.e_is_float32()) return "reads E in float32 only (no storage format support)";
    nb::gil_scoped_acquire gil;
    try {
      nb::object why = obj_.attr("skip_reason")(shape_dict(s), options_dict(o));
      if (why.is_none()) return std::nullopt;
      // A reason is a non-empty string: "" or False would skip the row with no reason (or be read as
      // "no reason" by one reader and as a reason by another).
      if (!nb::isinstance<nb::str>(why) || nb::len(why) == 0)
        throw std::runtime_error("python variant " + name_ + ": skip_reason must return None or a non-empty str, got " +
                                 text(nb::repr(why)));
      return text(why);
    } catch (const nb::python_error& e) {
      throw std::runtime_error("python variant " + name_ + ": skip_reason raised " + describe(e));
    }
  }
  int64_t predicted_working_bytes(const Shape& s, const RunOptions& o) const override {
    if (!nb::hasattr(obj_, "predicted_bytes")) return 0;
    nb::gil_scoped_acquire gil;
    try {
      return nb::cast<int64_t>(obj_.attr("predicted_bytes")(shape_dict(s), options_dict(o)));
    } catch (const nb::python_error& e) {
      throw std::runtime_error("python variant " + name_ + ": predicted_bytes raised " + describe(e));
    } catch (const nb::cast_error&) {
      throw std::runtime_error("python variant " + name_ + ": predicted_bytes must return an int");
    }
  }
  // Not timed: prepare() (conversions, copies to a device) happens here, once per row.
  std::unique_ptr<DeviceSession> open_session(const StepInputs& in, const RunOptions& o) const override {
    if (in.E_stored || !in.E) throw std::runtime_error("python variant " + name_ + ": reads E in float32 only");
    nb::gil_scoped_acquire gil;
    meters::PeakRssMeter rss;
    try {
      const size_t P = size_t(in.P), V = size_t(in.V), D = size_t(in.D), L = size_t(in.L);
      nb::object weights = in.weights ? numpy_view(in.weights, {P}) : nb::none();
      nb::object step = obj_.attr("prepare")(numpy_view(in.A, {P, D}), numpy_view(in.E, {V, D}),
                                             numpy_view(in.targets, {P, L}), weights,
                                             in.reduction == Reduction::mean ? "mean" : "sum", options_dict(o));
      if (!PyCallable_Check(step.ptr())) throw std::runtime_error("python variant " + name_ + ": prepare() must return a callable step");
      return std::make_unique<PythonSession>(obj_, std::move(step), in, name_, rss);
    } catch (const nb::python_error& e) {
      throw std::runtime_error("python variant " + name_ + ": prepare raised " + describe(e));
    }
  }
  void run(const StepInputs& in, StepOutputs& out, RunContext& ctx) const override {
    auto session = open_session(in, ctx.options);
    session->run_timed();
    session->download(out);
  }

 private:
  nb::object obj_;
  std::string name_, description_;
};

}  // namespace

std::unique_ptr<Variant> make_python_variant(nb::object obj) { return std::make_unique<PythonVariant>(std::move(obj)); }

}  // namespace lobench::python
