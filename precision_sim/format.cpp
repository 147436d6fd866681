#include "precision_sim/format.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include "precision_sim/detail/plan_build.hpp"

namespace lobench::precision {

// Shared with the Plan builder and the table decoder (declared in detail/plan_build.hpp).
namespace detail {

// Largest finite code magnitude (sign bit excluded), the one definition every other limit follows from.
uint32_t max_code_magnitude(const Format& f) {
  const uint32_t all = (f.exponent_bits + f.mantissa_bits >= 32)
                           ? 0xFFFFFFFFu
                           : (uint32_t{1} << (f.exponent_bits + f.mantissa_bits)) - 1;
  switch (f.specials) {
    case Specials::ieee: return (((uint32_t{1} << f.exponent_bits) - 1) << f.mantissa_bits) - 1;
    case Specials::fn: return all - 1;  // the all-ones code is NaN
    case Specials::fnuz:
    case Specials::finite: return all;
  }
  return all;
}

// Value of a finite code magnitude; without subnormals, exponent field 0 reads as zero.
double magnitude_value(const Format& f, uint32_t mag) {
  const int field = static_cast<int>(mag >> f.mantissa_bits);
  const uint32_t mant = mag & ((uint32_t{1} << f.mantissa_bits) - 1);
  if (!f.has_zero) return std::ldexp(1.0, field - f.bias);
  if (field == 0) return f.subnormals ? std::ldexp(static_cast<double>(mant), f.emin() - f.mantissa_bits) : 0.0;
  return std::ldexp(static_cast<double>((uint64_t{1} << f.mantissa_bits) | mant), field - f.bias - f.mantissa_bits);
}

}  // namespace detail

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string shortest(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

const char* specials_name(Specials s) {
  switch (s) {
    case Specials::ieee: return "ieee";
    case Specials::fn: return "fn";
    case Specials::fnuz: return "fnuz";
    case Specials::finite: return "finite";
  }
  return "?";
}

Format named(Format f, std::string name) {
  f.name = std::move(name);
  validate(f);
  return f;
}

// Preset names with their constructors, in the order format_names() lists them.
using Maker = Format (*)();
const std::vector<std::pair<std::string, Maker>>& preset_table() {
  static const std::vector<std::pair<std::string, Maker>> table = {
      {"float32", formats::float32},
      {"tf32", formats::tf32},
      {"bfloat16", formats::bfloat16},
      {"float16", formats::float16},
      {"float8_e3m4", formats::float8_e3m4},
      {"float8_e4m3", formats::float8_e4m3},
      {"float8_e4m3fn", formats::float8_e4m3fn},
      {"float8_e4m3fnuz", formats::float8_e4m3fnuz},
      {"float8_e4m3b11fnuz", formats::float8_e4m3b11fnuz},
      {"float8_e5m2", formats::float8_e5m2},
      {"float8_e5m2fnuz", formats::float8_e5m2fnuz},
      {"float8_e5m3fnu", formats::float8_e5m3fnu},
      {"float8_e8m0fnu", formats::float8_e8m0fnu},
      {"float6_e2m3fn", formats::float6_e2m3fn},
      {"float6_e3m2fn", formats::float6_e3m2fn},
      {"float4_e2m1fn", formats::float4_e2m1fn},
  };
  return table;
}

const std::vector<std::pair<std::string, std::string>>& alias_table() {
  // fp8_e4m3 means the OCP format because that is what PyTorch (float8_e4m3fn), NVIDIA and ELMO
  // call "fp8 e4m3"; a bare e4m3 is the generic IEEE-like format (ml_dtypes' float8_e4m3).
  static const std::vector<std::pair<std::string, std::string>> table = {
      {"fp32", "float32"},           {"f32", "float32"},          {"bf16", "bfloat16"},
      {"fp16", "float16"},           {"half", "float16"},         {"e4m3fn", "float8_e4m3fn"},
      {"fp8_e4m3", "float8_e4m3fn"}, {"fp8_e5m2", "float8_e5m2"}, {"e4m3fnuz", "float8_e4m3fnuz"},
      {"e4m3b11fnuz", "float8_e4m3b11fnuz"},                      {"e5m2fnuz", "float8_e5m2fnuz"},
      {"e5m3fnu", "float8_e5m3fnu"}, {"e8m0fnu", "float8_e8m0fnu"}, {"e2m1fn", "float4_e2m1fn"}, {"fp4_e2m1", "float4_e2m1fn"},
      {"e2m3fn", "float6_e2m3fn"},   {"fp6_e2m3", "float6_e2m3fn"}, {"e3m2fn", "float6_e3m2fn"},
      {"fp6_e3m2", "float6_e3m2fn"},
  };
  return table;
}

// A generic format equal to a preset is returned as that preset, so "e5m2" reports "float8_e5m2".
Format canonical(Format f) {
  for (const auto& [name, make] : preset_table()) {
    Format p = make();
    if (p.same_encoding(f)) return p;
  }
  return f;
}

[[noreturn]] void unknown_format(std::string_view name, const std::string& why) {
  std::string msg = "unknown number format '" + std::string(name) + "'";
  if (!why.empty()) msg += " (" + why + ")";
  msg += ". Valid names: ";
  const auto names = format_names();
  for (size_t i = 0; i < names.size(); ++i) msg += (i ? ", " : "") + names[i];
  msg += ", or eXmY (IEEE-like, 2<=X<=8, 1<=Y<=23, e.g. e5m7); append _sat to saturate on overflow";
  throw std::invalid_argument(msg);
}

}  // namespace

int Format::emax() const {
  const int top_field = static_cast<int>(detail::max_code_magnitude(*this) >> mantissa_bits);
  return top_field - bias;
}

double Format::max_finite() const { return detail::magnitude_value(*this, detail::max_code_magnitude(*this)); }

double Format::min_normal() const { return has_zero ? std::ldexp(1.0, emin()) : std::ldexp(1.0, -bias); }

double Format::min_positive() const {
  if (!has_zero) return std::ldexp(1.0, -bias);
  return subnormals ? std::ldexp(1.0, emin() - mantissa_bits) : std::ldexp(1.0, emin());
}

bool Format::same_encoding(const Format& o) const {
  return exponent_bits == o.exponent_bits && mantissa_bits == o.mantissa_bits && bias == o.bias &&
         subnormals == o.subnormals && has_zero == o.has_zero && specials == o.specials &&
         overflow == o.overflow && is_signed == o.is_signed;
}

void validate(const Format& f) {
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument("invalid number format '" + f.name + "': " + why);
  };
  if (f.exponent_bits < 1 || f.exponent_bits > 8) fail("exponent bits must be 1..8");
  if (f.mantissa_bits < 0 || f.mantissa_bits > 23) fail("mantissa bits must be 0..23");
  if (f.specials == Specials::ieee && f.mantissa_bits < 1)
    fail("an IEEE-like format needs a mantissa bit to encode NaN (did you mean e8m0fnu?)");
  if (f.specials == Specials::ieee && f.exponent_bits < 2)
    fail("an IEEE-like format needs 2 exponent bits (the top one is inf/NaN)");
  if (!f.is_signed && f.specials != Specials::fn)
    fail("unsigned formats must be 'fn' (negative inputs need a NaN code)");
  if (!f.has_zero && (f.mantissa_bits != 0 || f.subnormals))
    fail("a format without zero must be exponent-only (M = 0) with subnormals off");
  // Every value must be exactly representable in float32, and the smallest normal must be a float32
  // normal (the rounding kernels rely on that).
  if (f.emin() < -126) fail("bias too large: smallest normal 2^" + std::to_string(f.emin()) + " is below float32's 2^-126");
  if (f.emax() > 127) fail("bias too small: largest binade 2^" + std::to_string(f.emax()) + " is above float32's 2^127");
  if (!(f.max_finite() > 0)) fail("the format has no positive finite value");
}

Format make_format(int exponent_bits, int mantissa_bits, int bias, bool subnormals, Specials specials,
                   Overflow overflow, bool is_signed, std::string name) {
  Format f;
  f.exponent_bits = exponent_bits;
  f.mantissa_bits = mantissa_bits;
  f.bias = bias;
  f.subnormals = subnormals;
  f.specials = specials;
  f.overflow = overflow;
  f.is_signed = is_signed;
  if (name.empty()) {
    // Built by appending to a fresh string: GCC 12 warns falsely (-Wrestrict) on assigning a literal.
    std::string gen(1, 'e');
    gen += std::to_string(exponent_bits);
    gen += 'm';
    gen += std::to_string(mantissa_bits);
    // The IEEE-like default bias, where it is defined (an out-of-range width is refused by validation
    // below; its name must not shift by a negative or too large amount first: UBSan found that).
    const bool ieee_bias = exponent_bits >= 1 && exponent_bits <= 30 && bias == (1 << (exponent_bits - 1)) - 1;
    if (!ieee_bias) {
      gen += 'b';
      gen += std::to_string(bias);
    }
    if (specials != Specials::ieee) gen += specials == Specials::fn ? (is_signed ? "fn" : "fnu") : specials_name(specials);
    if (!subnormals) gen += "_nosub";
    if (overflow == Overflow::saturate) gen += "_sat";
    name = std::move(gen);
  }
  f.name = std::move(name);
  validate(f);
  return f;
}

Format ieee_like(int exponent_bits, int mantissa_bits) {
  if (exponent_bits < 1 || exponent_bits > 8 || mantissa_bits < 0 || mantissa_bits > 23)
    throw std::invalid_argument("ieee_like: need 1 <= E <= 8 and 0 <= M <= 23, got e" + std::to_string(exponent_bits) +
                                "m" + std::to_string(mantissa_bits));
  return make_format(exponent_bits, mantissa_bits, (1 << (exponent_bits - 1)) - 1, true, Specials::ieee);
}

namespace formats {
Format float32() { return named(ieee_like(8, 23), "float32"); }
Format tf32() { return named(ieee_like(8, 10), "tf32"); }
Format bfloat16() { return named(ieee_like(8, 7), "bfloat16"); }
Format float16() { return named(ieee_like(5, 10), "float16"); }
Format float8_e3m4() { return named(ieee_like(3, 4), "float8_e3m4"); }
Format float8_e4m3() { return named(ieee_like(4, 3), "float8_e4m3"); }
Format float8_e4m3fn() { return make_format(4, 3, 7, true, Specials::fn, Overflow::special, true, "float8_e4m3fn"); }
Format float8_e4m3fnuz() {
  return make_format(4, 3, 8, true, Specials::fnuz, Overflow::special, true, "float8_e4m3fnuz");
}
Format float8_e4m3b11fnuz() {
  return make_format(4, 3, 11, true, Specials::fnuz, Overflow::special, true, "float8_e4m3b11fnuz");
}
Format float8_e5m2() { return named(ieee_like(5, 2), "float8_e5m2"); }
Format float8_e5m2fnuz() {
  return make_format(5, 2, 16, true, Specials::fnuz, Overflow::special, true, "float8_e5m2fnuz");
}
Format float8_e5m3fnu() {
  return make_format(5, 3, 15, true, Specials::fn, Overflow::special, false, "float8_e5m3fnu");
}
Format float8_e8m0fnu() {
  Format f;
  f.name = "float8_e8m0fnu";
  f.exponent_bits = 8;
  f.mantissa_bits = 0;
  f.bias = 127;
  f.subnormals = false;
  f.has_zero = false;
  f.specials = Specials::fn;
  f.is_signed = false;
  validate(f);
  return f;
}
Format float6_e2m3fn() { return make_format(2, 3, 1, true, Specials::finite, Overflow::special, true, "float6_e2m3fn"); }
Format float6_e3m2fn() { return make_format(3, 2, 3, true, Specials::finite, Overflow::special, true, "float6_e3m2fn"); }
Format float4_e2m1fn() { return make_format(2, 1, 1, true, Specials::finite, Overflow::special, true, "float4_e2m1fn"); }

std::vector<Format> ml_dtypes_presets() {
  return {bfloat16(),        float16(),         float8_e3m4(),     float8_e4m3(),     float8_e4m3fn(),
          float8_e4m3fnuz(), float8_e4m3b11fnuz(), float8_e5m2(),  float8_e5m2fnuz(), float8_e5m3fnu(), float8_e8m0fnu(),
          float6_e2m3fn(),   float6_e3m2fn(),   float4_e2m1fn()};
}

std::vector<Format> all_presets() {
  std::vector<Format> out;
  for (const auto& [name, make] : preset_table()) out.push_back(make());
  return out;
}
}  // namespace formats

Format parse_format(std::string_view name_in) {
  std::string name = lower(name_in);
  bool saturate = false;
  constexpr std::string_view kSat = "_sat";
  if (name.size() > kSat.size() && name.compare(name.size() - kSat.size(), kSat.size(), kSat) == 0) {
    saturate = true;
    name.resize(name.size() - kSat.size());
  }
  auto finish = [&](Format f) {
    if (saturate) {
      f.overflow = Overflow::saturate;
      f.name += "_sat";
    }
    return f;
  };
  for (const auto& [alias, target] : alias_table())
    if (name == alias) name = target;
  for (const auto& [preset, make] : preset_table())
    if (name == preset) return finish(make());
  // eXmY
  if (name.size() >= 4 && name[0] == 'e') {
    size_t m = name.find('m');
    auto all_digits = [](std::string_view s) {
      return !s.empty() && s.size() <= 2 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
    };
    if (m != std::string::npos && all_digits(std::string_view(name).substr(1, m - 1)) &&
        all_digits(std::string_view(name).substr(m + 1))) {
      const int e = std::stoi(name.substr(1, m - 1));
      const int mm = std::stoi(name.substr(m + 1));
      if (e < 2 || e > 8 || mm < 1 || mm > 23) {
        std::string why = "eXmY needs 2 <= X <= 8 and 1 <= Y <= 23";
        if (mm == 0) why += "; the exponent-only scale format is e8m0fnu";
        unknown_format(name_in, why);
      }
      return finish(canonical(ieee_like(e, mm)));
    }
  }
  unknown_format(name_in, "");
}

std::vector<std::string> format_names() {
  std::vector<std::string> out;
  for (const auto& [preset, make] : preset_table()) out.push_back(preset);
  for (const auto& [alias, target] : alias_table()) out.push_back(alias);
  return out;
}

std::string describe(const Format& f) {
  std::string s = f.name + ": " + (f.is_signed ? "" : "unsigned ") + "e" + std::to_string(f.exponent_bits) + "m" +
                   std::to_string(f.mantissa_bits) + " bias " + std::to_string(f.bias) + ", " +
                   specials_name(f.specials) + (f.subnormals ? ", subnormals" : ", no subnormals") +
                   (f.has_zero ? "" : ", no zero") + ", " + std::to_string(f.bits()) + " bits, max " +
                   shortest(f.max_finite()) + ", overflow " +
                   (f.overflow == Overflow::saturate ? "saturates" : "to inf/NaN");
  return s;
}

}  // namespace lobench::precision
