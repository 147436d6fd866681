#include "harness/sweep/step_point.hpp"

#include <fmt/format.h>

#include <set>
#include <stdexcept>

#include "harness/config/option_checks.hpp"
#include "harness/sweep/python_peers.hpp"
#include "precision_sim/format.hpp"

namespace lobench::sweep {
namespace {

std::string canonical_format(const std::string& name) {
  if (name == "fp32" || name == "float32" || name == "f32") return "fp32";
  try {
    return precision::parse_format(name).name;
  } catch (const std::exception& e) {
    throw std::invalid_argument(fmt::format("--e-format: {}", e.what()));
  }
}

std::string canonical_rounding(const std::string& name) {
  try {
    return std::string(precision::rounding_name(precision::parse_rounding(name)));
  } catch (const std::exception& e) {
    throw std::invalid_argument(fmt::format("--e-rounding: {}", e.what()));
  }
}

// parse(text), its error prefixed by the option that gave the text (the parsers name only the value).
template <typename Parse>
auto parsed(const char* option, const std::string& text, Parse parse) {
  try {
    return parse(text);
  } catch (const std::exception& e) {
    throw std::invalid_argument(fmt::format("{}: {}", option, e.what()));
  }
}

}  // namespace

std::string StepPoint::group_key() const {
  return fmt::format("{} {} {} {} {} {} {}", data_key(), options.threads, options.block_v, options.block_p,
                     options.e_format, e_rounding, options.operand);
}

std::string StepPoint::data_key() const {
  return fmt::format("{} {} {} {} {} {} {} seed={}", shape.B, shape.N, shape.V, shape.D, shape.L,
                     to_string(shape.reduction), shape.weighted, seed);
}

Axes step_axes(int default_threads) {
  Axes a;
  const auto I = AxisKind::integer;
  a.add("B", I, {"32"}, "batch sizes B (positions P = B*N)");
  a.add("N", I, {"32"}, "sequence lengths N");
  a.add("D", I, {"128"}, "hidden sizes D");
  a.add("L", I, {"8"}, "target ids per position L");
  a.add("reduction", AxisKind::text, {"mean"}, "mean (Keras / Cut BCE) and/or sum (ELMO)");
  a.add("V", I, {"100000"}, "vocabulary sizes V");
  a.add("threads", I, {std::to_string(default_threads)}, "thread counts (default: all cores)");
  a.add("block-v", I, {"0"}, "vocabulary block sizes (0: the variant chooses)");
  a.add("block-p", I, {"0"}, "position block sizes (0: the variant chooses)");
  a.add("seed", I, {"0"}, "seeds of the synthetic inputs (A, E ~ N(0,1), targets uniform in [0, V))");
  a.add("e-format", AxisKind::text, {"fp32"},
        "storage formats of E: fp32, bfloat16, float8_e4m3fn, float8_e5m2, any eXmY (e3m4, e5m7, ...); aliases "
        "(bf16, e4m3fn, ...) are stored under their ml_dtypes names");
  a.add("e-rounding", AxisKind::text, {"nearest_even"},
        "how E is rounded into its format: nearest_even, nearest_away, toward_zero, up, down, stochastic, "
        "stochastic_exact");
  a.add("operand", AxisKind::text, {"fp32"},
        "precision of the products' operands, accumulated in fp32: fp32, tf32, bf16, e4m3, e5m2 (the CPU variants "
        "compute bf16 and the fp8 operands, scaled per tensor, where the CPU has AVX512_BF16; rows a variant cannot "
        "compute are recorded as skipped)");
  a.add("variants", AxisKind::text, {"dense", "chunked", "fused"}, "variants to run (see `lobench list`)");
  return a;
}

std::vector<StepPoint> step_points(const Axes& axes, bool weighted) {
  for (const auto& name : axes.values("variants")) {
    if (Registry::instance().find(name)) continue;
    if (const PythonPeer* peer = find_python_peer(name))  // only Python's engine has loaded it
      throw std::invalid_argument(fmt::format("--variants: {} is a Python peer ({}): run it with `python -m lobench "
                                              "run --variants {}` (the build's lobench._engine, or pip install .)",
                                              name, peer->spec, name));
    if (name.find(':') != std::string::npos)
      throw std::invalid_argument(
          fmt::format("--variants: unknown variant '{}': a Python variant (module:Class or file.py:Class) runs "
                      "with `python -m lobench run --variants {} ...` (PYTHONPATH=build/python, or the wheel)",
                      name, name));
    throw std::invalid_argument(fmt::format("--variants: unknown variant '{}' (see `lobench list`)", name));
  }
  for (const auto& t : axes.int_values("threads")) config::check_threads("--threads", t);
  for (const auto& b : axes.int_values("block-v")) config::check_block_size("--block-v", b);
  for (const auto& b : axes.int_values("block-p")) config::check_block_size("--block-p", b);
  for (const auto& s : axes.int_values("seed")) config::check_non_negative("--seed", s);

  std::vector<StepPoint> points;
  std::set<std::string> seen;
  for (const AxisPoint& a : axes.expand()) {
    StepPoint p;
    p.variant = a.at("variants");
    p.shape = Shape{a.int_at("B"), a.int_at("N"), a.int_at("V"), a.int_at("D"), a.int_at("L"),
                    parsed("--reduction", a.at("reduction"), [](const std::string& t) { return parse_reduction(t); }),
                    weighted};
    try {
      config::check_problem_shape(p.shape.B, p.shape.N, p.shape.V, p.shape.D, p.shape.L);  // overflow-checked
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("the shape --B {} --N {} --V {} --D {} --L {}: {}", p.shape.B, p.shape.N,
                                              p.shape.V, p.shape.D, p.shape.L, e.what()));
    }
    validate(p.shape);
    p.seed = uint64_t(a.int_at("seed"));
    p.options.threads = int(a.int_at("threads"));
    p.options.block_v = a.int_at("block-v");
    p.options.block_p = a.int_at("block-p");
    p.options.operand = to_string(parsed("--operand", a.at("operand"), [](const std::string& t) { return parse_operand(t); }));
    p.options.e_format = canonical_format(a.at("e-format"));
    const std::string rounding = canonical_rounding(a.at("e-rounding"));
    p.e_rounding = p.options.e_format == "fp32" ? "" : rounding;
    const std::string key = p.variant + " " + p.group_key();
    if (seen.insert(key).second) points.push_back(std::move(p));
  }
  return points;
}

}  // namespace lobench::sweep
