// Test helper: runs tests/ml_dtypes_oracle.py and reads its binary answers through a pipe, plus the
// comparison rule the oracle tests share (codes equal, or both NaN with the same sign).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "precision_sim/quantizer.hpp"

namespace lobench::precision::testing {

// A child process whose stdout we read. close() returns its exit status; a pipe that could not be
// started or a short read throws std::runtime_error with the command in the message.
class OraclePipe {
 public:
  // args: e.g. {"sample", "float8_e4m3fn"}
  explicit OraclePipe(const std::vector<std::string>& args);
  OraclePipe(const OraclePipe&) = delete;
  OraclePipe& operator=(const OraclePipe&) = delete;
  ~OraclePipe();
  void read_exact(void* dst, size_t bytes);
  int close();  // exit status (0 = success)
  const std::string& command() const { return command_; }
  FILE* file() const { return pipe_; }  // for reading a text answer

 private:
  std::string command_;
  FILE* pipe_ = nullptr;
};

struct OracleSample {
  std::vector<uint32_t> inputs;  // float32 bit patterns
  std::vector<uint32_t> codes;   // expected codes
};

// The tier of the oracle tests (issue 43): LOBENCH_ORACLE_TIER=full (ctest precision_sim_oracle_full,
// label slow) samples >= 2^24 inputs per format and every float32 subnormal; otherwise (the fast tier, CI)
// about 2^20 of each, every grid-derived input (values, ties, their neighbours, specials) still in.
bool oracle_full_tier();

// The whole `sample` answer (or, with mode "subnormals", the answer for every float32 subnormal and
// both zeros; in the fast tier a deterministic subset of each); throws (with the script's exit status) on
// any failure. every_input: the whole answer in either tier (a test of one range of inputs).
OracleSample read_sample(const std::string& format_name, const std::string& mode = "sample", bool every_input = false);
// The `float_types` answer: every real floating-point type ml_dtypes exports, by name.
std::vector<std::string> read_float_types();
// The `decode` answer: float32 bits of every code.
std::vector<uint32_t> read_decode(const std::string& format_name);

// Oracle and ours agree on a code: equal, or both NaN codes with the same sign (NumPy's float16 keeps
// NaN payloads; precision_sim produces the canonical quiet NaN, see rounding.hpp).
bool same_code(const Quantizer& q, uint32_t ours, uint32_t expected);
// Same for float32 values: equal bits, or both NaN with the same sign bit.
bool same_value_bits(uint32_t ours, uint32_t expected);

std::string hex(uint32_t v);

}  // namespace lobench::precision::testing
