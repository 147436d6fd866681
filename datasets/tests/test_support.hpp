// Helpers shared by the datasets tests: where the real data is, and expecting a ParseError with a given
// line and message fragment.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "datasets/parse_error.hpp"

namespace lobench::data::testing {

inline std::filesystem::path shared_datasets() { return std::filesystem::path(LOBENCH_SHARED_DATASETS); }

// Skips the current test when FILE (relative to the shared datasets folder) is absent.
#define LOBENCH_REQUIRE_SHARED_FILE(rel)                                                             \
  do {                                                                                               \
    if (!std::filesystem::exists(::lobench::data::testing::shared_datasets() / (rel))) {              \
      GTEST_SKIP() << "real dataset " << (::lobench::data::testing::shared_datasets() / (rel)).string() \
                   << " not found (shared datasets folder absent); skipping";                        \
    }                                                                                                \
  } while (0)

// Runs f, expects a ParseError from source at line whose message contains fragment; returns the message.
inline std::string expect_parse_error(const std::function<void()>& f, const std::string& source, int64_t line,
                                      const std::string& fragment) {
  try {
    f();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), source) << e.what();
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message '" << e.what() << "' lacks '" << fragment << "'";
    const std::string prefix = line > 0 ? source + ":" + std::to_string(line) + ": " : source + ": ";
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected ParseError, got another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected ParseError containing '" << fragment << "', nothing was thrown";
  return {};
}

}  // namespace lobench::data::testing
