// Bit-exact agreement with ml_dtypes (NumPy for float16), the project's oracle for number formats:
// every code decodes to ml_dtypes' value, and float32 -> format nearest-even (non-saturating) gives
// ml_dtypes' code on a stratified sample of >= 2^24 inputs and on every float32 subnormal of both signs,
// on the scalar path and on every SIMD path; every float type ml_dtypes exports is a preset. (CI's fast
// tier: about 2^20 of each; LOBENCH_ORACLE_TIER=full, ctest precision_sim_oracle_full: all of it.)
// Requires python3 with numpy and ml_dtypes; without them these tests fail (they never skip).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "precision_sim/tests/oracle_io.hpp"
#include "precision_sim/detail/plan.hpp"
#include "precision_sim/format.hpp"
#include "precision_sim/quantizer.hpp"

namespace lobench::precision {
namespace {

using testing::hex;

std::vector<std::string> oracle_formats() {
  std::vector<std::string> names;
  for (const Format& f : formats::ml_dtypes_presets()) names.push_back(f.name);
  return names;
}

class MlDtypesOracle : public ::testing::TestWithParam<std::string> {};

TEST_P(MlDtypesOracle, EveryCodeDecodesToTheOracleValue) {
  const Quantizer q(parse_format(GetParam()));
  const std::vector<uint32_t> expected = testing::read_decode(GetParam());
  ASSERT_EQ(expected.size(), size_t{1} << q.format().bits());
  int mismatches = 0;
  for (uint32_t code = 0; code < expected.size(); ++code) {
    const uint32_t ours = detail::f2u(q.decode(code));
    if (!testing::same_value_bits(ours, expected[code]) && ++mismatches <= 10)
      ADD_FAILURE() << GetParam() << " code " << hex(code) << ": ours " << hex(ours) << " ml_dtypes "
                    << hex(expected[code]);
  }
  EXPECT_EQ(mismatches, 0);
  // The array decode uses a table built from the same function; check it too.
  std::vector<float> table(expected.size());
  if (q.format().bits() <= 8) {
    std::vector<uint8_t> codes(expected.size());
    for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<uint8_t>(i);
    q.decode(codes, table);
  } else {
    std::vector<uint16_t> codes(expected.size());
    for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<uint16_t>(i);
    q.decode(codes, table);
  }
  for (size_t i = 0; i < table.size(); ++i)
    ASSERT_TRUE(testing::same_value_bits(detail::f2u(table[i]), expected[i])) << GetParam() << " code " << i;
}

// Encodes and rounds s.inputs nearest-even on every ISA this CPU runs and fails for each input whose
// code (or value) differs from ml_dtypes' (the first 10 are listed).
void expect_oracle_codes(const std::string& format_name, const testing::OracleSample& s) {
  const size_t n = s.inputs.size();
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = detail::u2f(s.inputs[i]);

  for (Isa isa : available_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    const Quantizer q(parse_format(format_name), isa);
    std::vector<uint32_t> codes(n);
    if (q.format().bits() <= 8) {
      std::vector<uint8_t> c(n);
      q.encode(x, c, {}, 2);
      for (size_t i = 0; i < n; ++i) codes[i] = c[i];
    } else {
      std::vector<uint16_t> c(n);
      q.encode(x, c, {}, 2);
      for (size_t i = 0; i < n; ++i) codes[i] = c[i];
    }
    std::vector<float> values(n);
    q.round(x, values, {}, 2);
    int mismatches = 0;
    for (size_t i = 0; i < n; ++i) {
      const bool code_ok = testing::same_code(q, codes[i], s.codes[i]);
      const bool value_ok = testing::same_value_bits(detail::f2u(values[i]), detail::f2u(q.decode(s.codes[i])));
      const bool scalar_ok = isa != Isa::scalar || testing::same_code(q, q.encode(x[i]), s.codes[i]);
      if ((!code_ok || !value_ok || !scalar_ok) && ++mismatches <= 10)
        ADD_FAILURE() << format_name << " input " << hex(s.inputs[i]) << " (" << x[i] << "): ours " << hex(codes[i])
                      << " value " << values[i] << ", ml_dtypes " << hex(s.codes[i]);
    }
    EXPECT_EQ(mismatches, 0) << "of " << n << " inputs";
  }
}

TEST_P(MlDtypesOracle, NearestEvenMatchesOracleOnStratifiedSample) {
  const testing::OracleSample s = testing::read_sample(GetParam());
  ASSERT_GE(s.inputs.size(), size_t{1} << (testing::oracle_full_tier() ? 24 : 20));
  expect_oracle_codes(GetParam(), s);
}

// Every float32 subnormal of both signs (and both zeros): 2^24 inputs per format (the fast tier: the
// 4096 smallest and largest of each sign and every 17th between).
TEST_P(MlDtypesOracle, NearestEvenMatchesOracleOnEveryFloat32Subnormal) {
  const testing::OracleSample s = testing::read_sample(GetParam(), "subnormals");
  if (testing::oracle_full_tier())
    ASSERT_EQ(s.inputs.size(), size_t{1} << 24);
  else
    ASSERT_GE(s.inputs.size(), size_t{1} << 19);
  expect_oracle_codes(GetParam(), s);
}

INSTANTIATE_TEST_SUITE_P(Formats, MlDtypesOracle, ::testing::ValuesIn(oracle_formats()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The range lobench (and ml_dtypes 0.6.0) used to round to 2^-126: x in (2^-127, 1.5 * 2^-127), whose
// nearest e8m0fnu value is 2^-127 (code 0x00). Checked against the oracle, and that it is code 0.
TEST(MlDtypesOracleE8m0fnu, InputsJustAboveTwoToMinus127RoundDown) {
  const testing::OracleSample all = testing::read_sample("float8_e8m0fnu", "subnormals", /*every_input=*/true);
  testing::OracleSample s;
  for (size_t i = 0; i < all.inputs.size(); ++i)
    if (all.inputs[i] >= 0x00400001u && all.inputs[i] <= 0x005FFFFFu) {
      s.inputs.push_back(all.inputs[i]);
      s.codes.push_back(all.codes[i]);
    }
  ASSERT_EQ(s.inputs.size(), size_t{0x001FFFFF});
  for (uint32_t c : s.codes) ASSERT_EQ(c, 0u) << "the pinned ml_dtypes does not round these to 2^-127";
  expect_oracle_codes("float8_e8m0fnu", s);
}

// "Every ml_dtypes float type" is a claim: a type ml_dtypes exports that has no preset here fails.
TEST(MlDtypesOracleCoverage, EveryFloatTypeOfMlDtypesIsAPreset) {
  const std::vector<std::string> exported = testing::read_float_types();
  ASSERT_FALSE(exported.empty());
  const std::vector<std::string> ours = oracle_formats();
  for (const std::string& name : exported)
    EXPECT_NE(std::find(ours.begin(), ours.end(), name), ours.end())
        << "ml_dtypes exports " << name << ", which is not in formats::ml_dtypes_presets()";
  // And no preset claims an ml_dtypes type that does not exist (float16 is NumPy's).
  for (const std::string& name : ours) {
    if (name == "float16") continue;
    EXPECT_NE(std::find(exported.begin(), exported.end(), name), exported.end())
        << name << " is not exported by the installed ml_dtypes";
  }
}

}  // namespace
}  // namespace lobench::precision
