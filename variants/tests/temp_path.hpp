// Unique scratch file names for tests: ctest may run several test processes (and several build trees)
// at once, and HDF5 locks files it has open.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace lobench::testing {

inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("lobench_" + std::to_string(getpid()) + "_" + name)).string();
}

}  // namespace lobench::testing
