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

// What is at `path`, as a message for a plug-in that cannot be one; "" for a regular file (or a
// symlink to one). Checked before dlopen: dlopen of a FIFO blocks until a writer comes, forever.
std::string not_a_library(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);  // follows symlinks
  if (ec) {
    if (ec == std::errc::too_many_symbolic_link_levels) return "a symlink loop (too many levels of symbolic links)";
    if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) {
      std::error_code lec;
      return fs::is_symlink(fs::symlink_status(path, lec)) ? "a dangling symlink (its target does not exist)"
                                                           : "no such file";
    }
    return "cannot be examined: " + ec.message();
  }
  switch (st.type()) {
    case fs::file_type::regular: return "";
    case fs::file_type::directory: return "a folder, not a shared library";
    case fs::file_type::fifo: return "a FIFO, not a shared library (a regular file)";
    case fs::file_type::socket: return "a socket, not a shared library (a regular file)";
    case fs::file_type::block:
    case fs::file_type::character: return "a device, not a shared library (a regular file)";
    default: return "not a regular file";
  }
}

std::string canonical_or_throw(const std::string& path) {
  if (const std::string why = not_a_library(path); !why.empty()) throw std::invalid_argument("plug-in " + path + ": " + why);
  std::error_code ec;
  const fs::path file = fs::canonical(path, ec);
  if (ec) throw std::invalid_argument("plug-in " + path + ": cannot be resolved: " + ec.message());
  return file.string();
}

bool already_loaded(const std::string& origin_prefix, const Registry& registry) {
  const auto origins = registry.origins();
  return std::any_of(origins.begin(), origins.end(),
                     [&](const std::string& o) { return o.rfind(origin_prefix, 0) == 0; });
}

// Every *.so in a folder of LOBENCH_PLUGIN_PATH, in name order, whatever it is (a FIFO or a symlink
// loop named *.so is refused by load_plugin with its file named, not skipped or read).
std::vector<std::string> libraries_in(const fs::path& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".so") found.push_back(it->path().string());
  if (ec) throw std::invalid_argument("LOBENCH_PLUGIN_PATH: folder " + dir.string() + " cannot be read: " + ec.message());
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
  } catch (const std::exception& e) {  // plugin_origin's read of the file, among others
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
    } else if (const std::string why = not_a_library(entry); why == "no such file") {
      throw std::invalid_argument("LOBENCH_PLUGIN_PATH: " + entry +
                                  " does not exist (a colon-separated list of plug-in libraries or folders)");
    } else {
      paths.push_back(entry);  // load_plugin refuses what is not a library, naming it
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
