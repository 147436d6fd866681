#include "harness/sweep/step_point.hpp"

#include <fmt/format.h>

#include <set>
#include <stdexcept>

#include "harness/config/option_checks.hpp"
#include "harness/sweep/run_axes.hpp"

namespace lobench::sweep {

std::string StepPoint::group_key() const {
  std::string key = data_key();
  for (const auto& [axis, value] : axis_values)
    if (axis != "variants") key += fmt::format(" {}={}", axis, value);
  return key;
}

std::string StepPoint::data_key() const {
  return fmt::format("{} {} {} {} {} {} {} seed={}", shape.B, shape.N, shape.V, shape.D, shape.L,
                     to_string(shape.reduction), shape.weighted, seed);
}

std::string StepPoint::describe() const {
  std::string s = variant;
  for (const auto& [axis, value] : axis_values)
    if (axis != "variants" && !value.empty()) s += fmt::format(" {}={}", axis, value);
  return s;
}

Axes step_axes(int default_threads) {
  Axes a;
  for (const RunAxis& axis : run_axes())
    a.add(axis.name, axis.kind, axis.defaults.empty() ? std::vector<std::string>{std::to_string(default_threads)} : axis.defaults,
          axis.help);
  return a;
}

std::vector<StepPoint> step_points(const Axes& axes, bool weighted) {
  std::vector<StepPoint> points;
  std::set<std::string> seen;
  for (const AxisPoint& a : axes.expand()) {
    StepPoint p;
    p.shape.weighted = weighted;
    for (const RunAxis& axis : run_axes()) p.axis_values.emplace_back(axis.name, axis.apply(a.at(axis.name), p));
    try {
      config::check_problem_shape(p.shape.B, p.shape.N, p.shape.V, p.shape.D, p.shape.L);  // overflow-checked
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("the shape --B {} --N {} --V {} --D {} --L {}: {}", p.shape.B, p.shape.N,
                                              p.shape.V, p.shape.D, p.shape.L, e.what()));
    }
    validate(p.shape);
    const std::string key = p.variant + " " + p.group_key();
    if (seen.insert(key).second) points.push_back(std::move(p));
  }
  return points;
}

}  // namespace lobench::sweep
