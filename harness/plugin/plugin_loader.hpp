// Loads plug-ins: shared libraries that register variants through lobench_register_v1
// (variants/plugin_api.hpp). Named by `--plugin PATH` (run, list) and by LOBENCH_PLUGIN_PATH, a
// colon-separated list of library files or folders (a folder: every *.so in it, in name order).
//
// Every way a library can be wrong is a usage error, std::invalid_argument with the file named: it
// does not exist, does not load (dlopen's reason), lacks the entry point, was built for another ABI,
// throws or registers nothing, or names a variant that is already registered. Its variants are then
// not registered. A library is never unloaded (its variants' code lives in it).
#pragma once

#include <string>
#include <vector>

#include "variants/variant.hpp"

namespace lobench::plugin {

// Loads the library at `path` into `registry`. A path already loaded into it is not loaded twice.
void load_plugin(const std::string& path, Registry& registry = Registry::instance());
void load_plugins(const std::vector<std::string>& paths, Registry& registry = Registry::instance());

// The libraries LOBENCH_PLUGIN_PATH names (its folders expanded); empty when it is unset.
// Throws std::invalid_argument naming the variable for an entry that does not exist.
std::vector<std::string> environment_plugin_paths();
// Loads them (main() calls this once, before any command runs).
void load_environment_plugins(Registry& registry = Registry::instance());

// The origin recorded for a library's variants: "plugin PATH sha256=HEX abi=N".
std::string plugin_origin(const std::string& canonical_path);

}  // namespace lobench::plugin
