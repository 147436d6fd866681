// Bit-exact agreement with ml_dtypes (NumPy for float16), the project's oracle for number formats:
// every code decodes to ml_dtypes' value, and float32 -> format nearest-even (non-saturating) gives
// ml_dtypes' code on a stratified sample of >= 2^24 inputs, on the scalar path and on every SIMD path.
// Requires python3 with numpy and ml_dtypes; without them these tests fail (they never skip).
#include <gtest/gtest.h>

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

TEST_P(MlDtypesOracle, NearestEvenMatchesOracleOnStratifiedSample) {
  const testing::OracleSample s = testing::read_sample(GetParam());
  ASSERT_GE(s.inputs.size(), size_t{1} << 24);
  const size_t n = s.inputs.size();
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = detail::u2f(s.inputs[i]);

  for (Isa isa : available_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    const Quantizer q(parse_format(GetParam()), isa);
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
        ADD_FAILURE() << GetParam() << " input " << hex(s.inputs[i]) << " (" << x[i] << "): ours " << hex(codes[i])
                      << " value " << values[i] << ", ml_dtypes " << hex(s.codes[i]);
    }
    EXPECT_EQ(mismatches, 0) << "of " << n << " inputs";
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, MlDtypesOracle, ::testing::ValuesIn(oracle_formats()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace lobench::precision
