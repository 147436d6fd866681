// Test support: an environment variable set (or unset) for a scope and restored after it, also when an
// ASSERT leaves the test early (LOBENCH_ISA standing for another CPU, LOBENCH_PRODUCTS, XDG_CACHE_HOME, ...).
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace lobench::testing {

class ScopedEnv {
 public:
  // value nullptr: unset for the scope.
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace lobench::testing
