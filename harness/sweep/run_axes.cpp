#include "harness/sweep/run_axes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "harness/config/option_checks.hpp"
#include "harness/io/result_row.hpp"
#include "harness/sweep/python_peers.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/rounding.hpp"
#include "variants/epilogue.hpp"
#include "variants/operand.hpp"
#include "variants/problem.hpp"
#include "variants/variant.hpp"

namespace lobench::sweep {
namespace {

// parse(text), its error prefixed by the option that gave the text (the parsers name only the value).
template <typename Parse>
auto parsed(const char* option, const std::string& text, Parse parse) {
  try {
    return parse(text);
  } catch (const std::exception& e) {
    throw std::invalid_argument(fmt::format("{}: {}", option, e.what()));
  }
}

std::string canonical_format(const std::string& name) {
  if (name == "fp32" || name == "float32" || name == "f32") return "fp32";
  return parsed("--e-format", name, [](const std::string& t) { return precision::parse_format(t).name; });
}

std::string canonical_rounding(const std::string& name) {
  return parsed("--e-rounding", name,
                [](const std::string& t) { return std::string(precision::rounding_name(precision::parse_rounding(t))); });
}

// The name of the registered variant `name` finds (`cuda/fused` finds `fused` of backend cuda); anything
// else is refused, saying where a Python variant runs.
std::string known_variant(const std::string& name) {
  if (const Variant* v = Registry::instance().find(name)) return v->name();
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

int64_t count(const std::string& value) { return std::stoll(value); }  // an integer axis's value: plain digits

const char* const kListDetail = "a comma-separated list: one row per value";

// The table itself, one entry per axis (its length is the number of axes, not logic).
std::vector<RunAxis> built_in_axes() {
  const auto I = AxisKind::integer, T = AxisKind::text;
  std::vector<RunAxis> a;
  // name, kind, defaults, help, shared, column, header, width, test values, apply
  a.push_back({"B", I, {"32"}, kListDetail, true, "B", "", 0, {"1", "2"},
               [](const std::string& v, StepPoint& p) {
                 p.shape.B = count(v);
                 return v;
               }});
  a.push_back({"N", I, {"32"}, kListDetail, true, "N", "", 0, {"3", "5"},
               [](const std::string& v, StepPoint& p) {
                 p.shape.N = count(v);
                 return v;
               }});
  a.push_back({"D", I, {"128"}, kListDetail, true, "D", "", 0, {"8", "16"},
               [](const std::string& v, StepPoint& p) {
                 p.shape.D = count(v);
                 return v;
               }});
  a.push_back({"L", I, {"8"}, kListDetail, true, "L", "", 0, {"1", "2"},
               [](const std::string& v, StepPoint& p) {
                 p.shape.L = count(v);
                 return v;
               }});
  a.push_back({"reduction", T, {"mean"}, kListDetail, true, "reduction", "red", 4, {"mean", "sum"},
               [](const std::string& v, StepPoint& p) {
                 p.shape.reduction = parsed("--reduction", v, [](const std::string& t) { return parse_reduction(t); });
                 return to_string(p.shape.reduction);
               }});
  a.push_back({"V", I, {"100000"}, "vocabulary sizes V", false, "V", "", 0, {"64", "100"},
               [](const std::string& v, StepPoint& p) {
                 p.shape.V = count(v);
                 return v;
               }});
  a.push_back({"threads", I, {}, kListDetail, true, "threads", "", 0, {"1", "2"},
               [](const std::string& v, StepPoint& p) {
                 config::check_threads("--threads", count(v));
                 p.options.threads = int(count(v));
                 return v;
               }});
  a.push_back({"block-v", I, {"0"}, kListDetail, true, "block_v", "block_v", 7, {"0", "32"},
               [](const std::string& v, StepPoint& p) {
                 config::check_block_size("--block-v", count(v));
                 p.options.block_v = count(v);
                 return v;
               }});
  a.push_back({"block-p", I, {"0"}, "position block sizes (0: the variant chooses)", false, "block_p", "block_p", 7,
               {"0", "4"}, [](const std::string& v, StepPoint& p) {
                 config::check_block_size("--block-p", count(v));
                 p.options.block_p = count(v);
                 return v;
               }});
  a.push_back({"seed", I, {"0"}, kListDetail, true, "seed", "seed", 5, {"0", "1"},
               [](const std::string& v, StepPoint& p) {
                 config::check_non_negative("--seed", count(v));
                 p.seed = uint64_t(count(v));
                 return v;
               }});
  a.push_back({"e-format", T, {"fp32"},
               "storage formats of E: fp32, bfloat16, float8_e4m3fn, float8_e5m2, any eXmY (e3m4, e5m7, ...); aliases "
               "(bf16, e4m3fn, ...) are stored under their ml_dtypes names",
               false, "e_format", "e_format", 14, {"bfloat16", "float8_e4m3fn"},
               [](const std::string& v, StepPoint& p) { return p.options.e_format = canonical_format(v); }});
  a.push_back({"e-rounding", T, {"nearest_even"},
               "how E is rounded into its format: nearest_even, nearest_away, toward_zero, up, down, stochastic, "
               "stochastic_exact",
               false, "e_rounding", "e_rounding", 12, {"nearest_even", "toward_zero"},
               [](const std::string& v, StepPoint& p) {  // after e-format: float32 is not rounded
                 const std::string rounding = canonical_rounding(v);
                 return p.e_rounding = p.options.e_format == "fp32" ? "" : rounding;
               }});
  a.push_back({"operand", T, {"fp32"},
               "also tf32 (tensor-core float32, GPU rows); e4m3 and e5m2 on the CPU variants fused, chunked and dense; "
               "a comma-separated list: one row per value",
               true, "operand", "op", 4, {"fp32", "bf16"},
               [](const std::string& v, StepPoint& p) {
                 return p.options.operand =
                            to_string(parsed("--operand", v, [](const std::string& t) { return parse_operand(t); }));
               }});
  a.push_back({"epilogue", T, {"fp32"},
               "precision of the element-wise work on each logit: fp32, or bf16 / fp16 with every operation rounded "
               "to that format (the CPU variants fused, chunked and dense; an emulation, slower than fp32, except fused "
               "with bf16 or fp8 operands in fp16 on AVX512-FP16: native, the same bits; "
               "docs/method.md#the-epilogue-precision)",
               false, "epilogue", "epi", 4, {"fp32", "bf16"},
               [](const std::string& v, StepPoint& p) {
                 return p.options.epilogue =
                            to_string(parsed("--epilogue", v, [](const std::string& t) { return parse_epilogue(t); }));
               }});
  a.push_back({"variants", T, {"dense", "chunked", "fused"}, "variants to run (see `lobench list`)", false, "variant",
               "", 0, {"dense", "chunked"},
               [](const std::string& v, StepPoint& p) {
                 const std::string name = known_variant(v);
                 p.variant = v;  // as given: it finds the variant of that backend again
                 return name;
               }});
  return a;
}

std::vector<RunAxis>& table() {
  static std::vector<RunAxis> axes = built_in_axes();
  return axes;
}

bool holds(io::ColumnKind column, AxisKind axis) {
  switch (axis) {
    case AxisKind::integer: return column == io::ColumnKind::int32 || column == io::ColumnKind::int64;
    case AxisKind::real: return column == io::ColumnKind::float64;
    case AxisKind::text: return column == io::ColumnKind::text;
  }
  return false;
}

}  // namespace

const std::vector<RunAxis>& run_axes() { return table(); }

std::string run_axes_markdown() {
  std::string md;
  for (const RunAxis& a : run_axes()) {
    std::string defaults;
    for (const auto& v : a.defaults) defaults += (defaults.empty() ? "" : ",") + v;
    md += fmt::format("| `--{}` | `{}` | {} | {} |\n", a.name, a.column,
                      a.kind == AxisKind::integer ? "integer" : a.kind == AxisKind::real ? "number" : "text",
                      a.defaults.empty() ? "all cores" : defaults);
  }
  return md;
}

ScopedRunAxis::ScopedRunAxis(RunAxis axis) : name_(axis.name) {
  std::vector<RunAxis>& axes = table();
  for (const RunAxis& a : axes)
    if (a.name == axis.name || a.column == axis.column)
      throw std::logic_error(fmt::format("run axis '{}': its name or column '{}' is taken by '{}'", axis.name,
                                         axis.column, a.name));
  const auto& ids = io::identity_columns();
  const auto column = std::find_if(ids.begin(), ids.end(), [&](const io::Column* c) { return axis.column == c->name; });
  if (column == ids.end())
    throw std::logic_error(fmt::format("run axis '{}': '{}' is not an identity column of /results", axis.name,
                                       axis.column));
  if (!holds((*column)->kind, axis.kind))
    throw std::logic_error(fmt::format("run axis '{}': the column '{}' cannot hold its values", axis.name, axis.column));
  axes.insert(axes.end() - 1, std::move(axis));  // the variants stay the fastest
}

ScopedRunAxis::~ScopedRunAxis() {
  std::vector<RunAxis>& axes = table();
  axes.erase(std::find_if(axes.begin(), axes.end(), [&](const RunAxis& a) { return a.name == name_; }));
}

}  // namespace lobench::sweep
