#include "harness/plugin/plugin_loader.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "datasets/sha256.hpp"
#include "variants/plugin_api.hpp"

namespace lobench::plugin {

namespace fs = std::filesystem;

namespace {

std::string canonical_or_throw(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw std::invalid_argument("plug-in " + path + ": no such file");
  if (fs::is_directory(path, ec)) throw std::invalid_argument("plug-in " + path + ": a folder, not a shared library");
  return fs::canonical(path).string();
}

bool already_loaded(const std::string& origin_prefix, const Registry& registry) {
  const auto origins = registry.origins();
  return std::any_of(origins.begin(), origins.end(),
                     [&](const std::string& o) { return o.rfind(origin_prefix, 0) == 0; });
}

// Every *.so in a folder of LOBENCH_PLUGIN_PATH, in name order.
std::vector<std::string> libraries_in(const fs::path& dir) {
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".so") found.push_back(entry.path().string());
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

std::string plugin_origin(const std::string& canonical_path) {
  return "plugin " + canonical_path + " sha256=" + data::sha256_file(canonical_path) +
         " abi=" + std::to_string(LOBENCH_PLUGIN_ABI);
}

void load_plugin(const std::string& path, Registry& registry) {
  const std::string file = canonical_or_throw(path);
  if (already_loaded("plugin " + file + " ", registry)) return;
  // RTLD_LOCAL: the library's own symbols (its copy of the contract library included) stay its own.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    throw std::invalid_argument("plug-in " + path + ": cannot be loaded: " + (why ? why : "unknown reason"));
  }
  dlerror();
  void* symbol = dlsym(handle, LOBENCH_PLUGIN_ENTRY_POINT);
  if (!symbol)
    throw std::invalid_argument("plug-in " + path + ": no " LOBENCH_PLUGIN_ENTRY_POINT
                                " entry point (define it with LOBENCH_PLUGIN, variants/plugin_api.hpp)");
  try {
    registry.register_from(reinterpret_cast<lobench_register_fn>(symbol), plugin_origin(file));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("plug-in " + path + ": " + e.what());
  }
  // The handle stays open for the process's life: the registered variants' code is in it.
}

void load_plugins(const std::vector<std::string>& paths, Registry& registry) {
  for (const auto& p : paths) load_plugin(p, registry);
}

std::vector<std::string> environment_plugin_paths() {
  const char* value = std::getenv("LOBENCH_PLUGIN_PATH");
  std::vector<std::string> paths;
  if (!value) return paths;
  const std::string list = value;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(':', start), list.size());
    const std::string entry = list.substr(start, end - start);
    start = end + 1;
    if (entry.empty()) continue;
    std::error_code ec;
    if (fs::is_directory(entry, ec)) {
      for (auto& lib : libraries_in(entry)) paths.push_back(lib);
    } else if (fs::exists(entry, ec)) {
      paths.push_back(entry);
    } else {
      throw std::invalid_argument("LOBENCH_PLUGIN_PATH: " + entry +
                                  " does not exist (a colon-separated list of plug-in libraries or folders)");
    }
  }
  return paths;
}

void load_environment_plugins(Registry& registry) {
  const auto paths = environment_plugin_paths();
  try {
    load_plugins(paths, registry);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("LOBENCH_PLUGIN_PATH: " + std::string(e.what()));
  }
}

}  // namespace lobench::plugin
