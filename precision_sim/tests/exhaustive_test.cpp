// Exhaustive checks (label slow; CI runs a rotating share of that label, scripts/slow_tests.sh):
//  * every one of the 2^32 float32 inputs against ml_dtypes (streamed from Python in 2^24 chunks):
//    nearest-even codes from the default SIMD path and from the scalar path, and the float32 result
//    of round() equal to the decoded code;
//  * every input on every SIMD path against the scalar reference for every rounding mode, for a few
//    formats that between them reach every branch (normal pattern path, subnormal path, fnuz, finite,
//    saturation, bfloat16's single-shift path).
// The check against ml_dtypes is cut into kParts tests per format, each of 2^32 / kParts consecutive
// inputs (bit patterns), which together are all of them: a whole format took 75-312 s on 2 shared cores
// (float16, whose answers are twice as long, the most), beyond the 3 minutes CI gives its share of the
// slow tier. The SIMD checks (30-61 s each) are whole.
#include <gtest/gtest.h>

#include <omp.h>

#include <ostream>
#include <string>
#include <vector>

#include "precision_sim/tests/oracle_io.hpp"
#include "precision_sim/detail/plan.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"

namespace lobench::precision {
namespace {

using testing::hex;
constexpr size_t kChunk = size_t{1} << 24;
constexpr int kParts = 4;
constexpr uint64_t kPartInputs = (uint64_t{1} << 32) / kParts;
static_assert(kPartInputs % kChunk == 0);

// "_part0of4": a test name's suffix for part `part`.
std::string part_name(int part) { return "_part" + std::to_string(part) + "of" + std::to_string(kParts); }

void fill_chunk(uint64_t start, std::vector<float>& x) {
  for (size_t i = 0; i < x.size(); ++i) x[i] = detail::u2f(static_cast<uint32_t>(start + i));
}

template <typename Code>
void encode_chunk(const Quantizer& q, const std::vector<float>& x, std::vector<uint32_t>& out, const RoundingOptions& o) {
  std::vector<Code> c(x.size());
  q.encode(x, c, o, 1);
  for (size_t i = 0; i < x.size(); ++i) out[i] = c[i];
}

struct OracleCase {
  std::string format;
  int part;  // inputs [part·kPartInputs, (part + 1)·kPartInputs)
};

void PrintTo(const OracleCase& c, std::ostream* os) { *os << c.format << part_name(c.part); }

class ExhaustiveOracle : public ::testing::TestWithParam<OracleCase> {};

TEST_P(ExhaustiveOracle, AllFloat32InputsMatchMlDtypes) {
  const std::string& format = GetParam().format;
  const uint64_t first = uint64_t(GetParam().part) * kPartInputs;
  const Quantizer simd(parse_format(format));
  const Quantizer scalar(parse_format(format), Isa::scalar);
  const bool wide = simd.format().bits() > 8;
  testing::OraclePipe pipe({"stream", format, std::to_string(first), std::to_string(kPartInputs)});
  std::vector<float> x(kChunk), values(kChunk);
  std::vector<uint32_t> expected(kChunk), ours(kChunk);
  std::vector<uint8_t> buf8(wide ? 0 : kChunk);
  std::vector<uint16_t> buf16(wide ? kChunk : 0);
  uint64_t mismatches = 0;
  for (uint64_t start = first; start < first + kPartInputs; start += kChunk) {
    fill_chunk(start, x);
    if (wide) {
      pipe.read_exact(buf16.data(), kChunk * 2);
      for (size_t i = 0; i < kChunk; ++i) expected[i] = buf16[i];
      encode_chunk<uint16_t>(simd, x, ours, {});
    } else {
      pipe.read_exact(buf8.data(), kChunk);
      for (size_t i = 0; i < kChunk; ++i) expected[i] = buf8[i];
      encode_chunk<uint8_t>(simd, x, ours, {});
    }
    simd.round(x, values);
    uint64_t bad = 0;
#pragma omp parallel for reduction(+ : bad) num_threads(2)
    for (size_t i = 0; i < kChunk; ++i) {
      const bool ok = testing::same_code(simd, ours[i], expected[i]) &&
                      testing::same_code(simd, scalar.encode(x[i]), expected[i]) &&
                      testing::same_value_bits(detail::f2u(values[i]), detail::f2u(simd.decode(expected[i])));
      bad += ok ? 0 : 1;
    }
    if (bad) {
      for (size_t i = 0, shown = 0; i < kChunk && shown < 5; ++i) {
        if (!testing::same_code(simd, ours[i], expected[i]) || !testing::same_code(simd, scalar.encode(x[i]), expected[i])) {
          ADD_FAILURE() << format << " input " << hex(static_cast<uint32_t>(start + i)) << ": ours " << hex(ours[i])
                        << " scalar " << hex(scalar.encode(x[i])) << " ml_dtypes " << hex(expected[i]);
          ++shown;
        }
      }
    }
    mismatches += bad;
  }
  EXPECT_EQ(pipe.close(), 0) << pipe.command();
  EXPECT_EQ(mismatches, 0u);
}

std::vector<OracleCase> oracle_cases() {
  std::vector<OracleCase> cases;
  for (const Format& f : formats::ml_dtypes_presets())
    for (int part = 0; part < kParts; ++part) cases.push_back({f.name, part});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Formats, ExhaustiveOracle, ::testing::ValuesIn(oracle_cases()),
                         [](const ::testing::TestParamInfo<OracleCase>& info) {
                           return info.param.format + part_name(info.param.part);
                         });

// --- SIMD vs scalar, every input, every mode.

struct SimdCase {
  std::string format;
  Rounding mode;
};

void PrintTo(const SimdCase& c, std::ostream* os) { *os << c.format << " " << rounding_name(c.mode); }

class ExhaustiveSimd : public ::testing::TestWithParam<SimdCase> {};

TEST_P(ExhaustiveSimd, AllFloat32InputsMatchScalar) {
  const auto& [name, mode] = GetParam();
  const Quantizer scalar(parse_format(name), Isa::scalar);
  RoundingOptions opt;
  opt.mode = mode;
  opt.seed = 0x1234567890ABCDEFull;
  opt.stream = 7;
  std::vector<float> x(kChunk), want(kChunk), got(kChunk);
  for (Isa isa : available_isas()) {
    if (isa == Isa::scalar) continue;
    SCOPED_TRACE(std::string(isa_name(isa)));
    const Quantizer simd(parse_format(name), isa);
    uint64_t mismatches = 0;
    for (uint64_t start = 0; start < (uint64_t{1} << 32); start += kChunk) {
      fill_chunk(start, x);
      opt.index_offset = start;
      scalar.round(x, want, opt, 2);
      simd.round(x, got, opt, 2);
      for (size_t i = 0; i < kChunk; ++i) {
        if (detail::f2u(want[i]) != detail::f2u(got[i]) && ++mismatches <= 5)
          ADD_FAILURE() << name << " " << rounding_name(mode) << " input " << hex(static_cast<uint32_t>(start + i))
                        << ": simd " << hex(detail::f2u(got[i])) << " scalar " << hex(detail::f2u(want[i]));
      }
    }
    EXPECT_EQ(mismatches, 0u);
  }
}

std::vector<SimdCase> simd_cases() {
  std::vector<SimdCase> cases;
  for (const char* f : {"float8_e4m3fn", "bfloat16"})
    for (Rounding m : kAllRoundings) cases.push_back({f, m});
  for (const char* f : {"float8_e5m2fnuz", "float4_e2m1fn", "e5m7_sat", "float16"})
    cases.push_back({f, Rounding::stochastic});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cases, ExhaustiveSimd, ::testing::ValuesIn(simd_cases()),
                         [](const ::testing::TestParamInfo<SimdCase>& info) {
                           return info.param.format + "_" + std::string(rounding_name(info.param.mode));
                         });

}  // namespace
}  // namespace lobench::precision
