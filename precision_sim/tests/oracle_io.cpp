#include "precision_sim/tests/oracle_io.hpp"

#include <cstdlib>

#include <sys/wait.h>

#include <cstring>
#include <stdexcept>

namespace lobench::precision::testing {

OraclePipe::OraclePipe(const std::vector<std::string>& args) {
  command_ = std::string(LOBENCH_PYTHON) + " '" + LOBENCH_ORACLE_SCRIPT + "'";
  for (const auto& a : args) command_ += " '" + a + "'";
  pipe_ = popen(command_.c_str(), "r");
  if (!pipe_) throw std::runtime_error("cannot start: " + command_ + " (" + std::strerror(errno) + ")");
}

OraclePipe::~OraclePipe() {
  if (pipe_) pclose(pipe_);
}

void OraclePipe::read_exact(void* dst, size_t bytes) {
  char* p = static_cast<char*>(dst);
  while (bytes > 0) {
    const size_t got = std::fread(p, 1, bytes, pipe_);
    if (got == 0) {
      const int status = close();
      throw std::runtime_error("the oracle ended early (exit status " + std::to_string(status) + "): " + command_ +
                               "; python3 with numpy and ml_dtypes is required for this test");
    }
    p += got;
    bytes -= got;
  }
}

int OraclePipe::close() {
  if (!pipe_) return -1;
  const int status = pclose(pipe_);
  pipe_ = nullptr;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

bool oracle_full_tier() {
  const char* tier = std::getenv("LOBENCH_ORACLE_TIER");
  return tier && std::string(tier) == "full";
}

OracleSample read_sample(const std::string& format_name, const std::string& mode, bool every_input) {
  std::vector<std::string> args = {mode, format_name};
  if (!every_input && !oracle_full_tier()) args.push_back("fast");
  OraclePipe pipe(args);
  uint64_t n = 0;
  uint32_t code_bytes = 0;
  pipe.read_exact(&n, sizeof n);
  pipe.read_exact(&code_bytes, sizeof code_bytes);
  if (code_bytes != 1 && code_bytes != 2) throw std::runtime_error("oracle: bad code width from " + pipe.command());
  OracleSample s;
  s.inputs.resize(n);
  s.codes.resize(n);
  pipe.read_exact(s.inputs.data(), n * 4);
  if (code_bytes == 1) {
    std::vector<uint8_t> c(n);
    pipe.read_exact(c.data(), n);
    for (size_t i = 0; i < n; ++i) s.codes[i] = c[i];
  } else {
    std::vector<uint16_t> c(n);
    pipe.read_exact(c.data(), n * 2);
    for (size_t i = 0; i < n; ++i) s.codes[i] = c[i];
  }
  if (const int status = pipe.close(); status != 0)
    throw std::runtime_error("oracle failed with exit status " + std::to_string(status));
  return s;
}

std::vector<uint32_t> read_decode(const std::string& format_name) {
  OraclePipe pipe({"decode", format_name});
  uint64_t n = 0;
  pipe.read_exact(&n, sizeof n);
  std::vector<uint32_t> v(n);
  pipe.read_exact(v.data(), n * 4);
  if (const int status = pipe.close(); status != 0)
    throw std::runtime_error("oracle failed with exit status " + std::to_string(status));
  return v;
}

std::vector<std::string> read_float_types() {
  OraclePipe pipe({"float_types"});
  std::vector<std::string> names;
  std::string line;
  char c = 0;
  while (std::fread(&c, 1, 1, pipe.file()) == 1) {
    if (c != '\n') {
      line += c;
    } else if (!line.empty()) {
      names.push_back(line);
      line.clear();
    }
  }
  if (const int status = pipe.close(); status != 0)
    throw std::runtime_error("oracle failed with exit status " + std::to_string(status) + ": " + pipe.command());
  return names;
}

bool same_value_bits(uint32_t ours, uint32_t expected) {
  if (ours == expected) return true;
  const bool nan_o = (ours & 0x7FFFFFFFu) > 0x7F800000u;
  const bool nan_e = (expected & 0x7FFFFFFFu) > 0x7F800000u;
  return nan_o && nan_e && (ours >> 31) == (expected >> 31);
}

bool same_code(const Quantizer& q, uint32_t ours, uint32_t expected) {
  if (ours == expected) return true;
  if (!q.is_nan_code(ours) || !q.is_nan_code(expected)) return false;
  const int sign_bit = q.format().bits() - 1;
  return q.format().is_signed && ((ours >> sign_bit) & 1) == ((expected >> sign_bit) & 1);
}

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

}  // namespace lobench::precision::testing
