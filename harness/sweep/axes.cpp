#include "harness/sweep/axes.hpp"

#include "harness/config/counts.hpp"

#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace lobench::sweep {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

bool parse_int(const std::string& s, int64_t& v) {
  const char* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, v);
  return r.ec == std::errc() && r.ptr == end;
}

bool parse_real(const std::string& s, double& v) {
  const char* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, v);
  return r.ec == std::errc() && r.ptr == end && std::isfinite(v);
}

// Checks `value` against the axis's kind; an integer is a count as every option takes it (1e5, 100k,
// harness/config/counts.hpp), kept in plain digits so that names and int_at see one spelling.
std::string checked_value(const std::string& axis, AxisKind kind, const std::string& value) {
  double d = 0;
  if (kind == AxisKind::integer) return config::canonical_count("--" + axis, value);
  if (kind == AxisKind::real && !parse_real(value, d))
    throw std::invalid_argument(fmt::format("--{}: '{}' is not a finite number", axis, value));
  return value;
}

}  // namespace

std::vector<std::string> split_list(const std::string& text, const std::string& what) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item = trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (item.empty())
      throw std::invalid_argument(fmt::format("{}: empty item in the list '{}'", what, text));
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

const std::string& AxisPoint::at(const std::string& axis) const {
  const auto it = values_.find(axis);
  if (it == values_.end()) throw std::logic_error("no axis '" + axis + "' in this sweep");
  return it->second;
}

int64_t AxisPoint::int_at(const std::string& axis) const {
  int64_t v = 0;
  if (!parse_int(at(axis), v)) throw std::logic_error("axis '" + axis + "' is not an integer");
  return v;
}

double AxisPoint::real_at(const std::string& axis) const {
  double v = 0;
  if (!parse_real(at(axis), v)) throw std::logic_error("axis '" + axis + "' is not a number");
  return v;
}

std::string AxisPoint::describe() const {
  std::string s;
  for (const auto& name : order_) s += (s.empty() ? "" : " ") + name + "=" + values_.at(name);
  return s;
}

void Axes::add(const std::string& name, AxisKind kind, std::vector<std::string> defaults, std::string help) {
  if (axes_.count(name)) throw std::logic_error("axis declared twice: " + name);
  for (auto& v : defaults) v = checked_value(name, kind, v);
  axes_[name] = Axis{kind, std::move(defaults), std::move(help)};
  order_.push_back(name);
}

void Axes::register_options(CLI::App* cmd) {
  for (const auto& name : order_) {
    Axis& a = axes_.at(name);
    std::string defaults;
    for (const auto& v : a.values) defaults += (defaults.empty() ? "" : ",") + v;
    cmd->add_option_function<std::string>(
           "--" + name, [this, name](const std::string& text) { set(name, text); },
           a.help + " (comma-separated list)")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
        ->type_name("LIST")
        ->default_str(defaults);
  }
}

void Axes::set(const std::string& name, const std::string& list) { set(name, split_list(list, "--" + name)); }

void Axes::set(const std::string& name, std::vector<std::string> values) {
  auto it = axes_.find(name);
  if (it == axes_.end()) throw std::logic_error("no axis '" + name + "'");
  if (values.empty()) throw std::invalid_argument(fmt::format("--{} needs at least one value", name));
  for (auto& v : values) v = checked_value(name, it->second.kind, v);
  it->second.values = std::move(values);
}

const Axes::Axis& Axes::axis(const std::string& name) const {
  const auto it = axes_.find(name);
  if (it == axes_.end()) throw std::logic_error("no axis '" + name + "'");
  return it->second;
}

const std::vector<std::string>& Axes::values(const std::string& name) const { return axis(name).values; }

std::vector<int64_t> Axes::int_values(const std::string& name) const {
  std::vector<int64_t> out;
  for (const auto& v : values(name)) {
    int64_t i = 0;
    parse_int(v, i);
    out.push_back(i);
  }
  return out;
}

int64_t Axes::size() const {
  int64_t n = 1;
  for (const auto& name : order_) {
    const int64_t k = int64_t(axes_.at(name).values.size());
    if (__builtin_mul_overflow(n, k, &n) || n > (int64_t(1) << 40))
      throw std::invalid_argument("the sweep has too many points (the product of the axes' lengths overflows)");
  }
  return n;
}

std::vector<AxisPoint> Axes::expand() const {
  const int64_t n = size();
  std::vector<AxisPoint> points;
  points.reserve(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    AxisPoint p;
    p.order_ = order_;
    int64_t rest = i;  // mixed-radix digits of i, the last axis the least significant
    for (auto name = order_.rbegin(); name != order_.rend(); ++name) {
      const auto& vals = axes_.at(*name).values;
      p.values_[*name] = vals[size_t(rest % int64_t(vals.size()))];
      rest /= int64_t(vals.size());
    }
    points.push_back(std::move(p));
  }
  return points;
}

std::vector<std::string> Axes::swept() const {
  std::vector<std::string> out;
  for (const auto& name : order_)
    if (axes_.at(name).values.size() > 1) out.push_back(name);
  return out;
}

}  // namespace lobench::sweep
