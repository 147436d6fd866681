#include "harness/meters/products_cache.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "harness/provenance.hpp"
#include "variants/cpu/cache_info.hpp"
#include "variants/cpu/cpu_model.hpp"
#include "variants/cpu/fused_tile.hpp"
#include "variants/cpu/onednn.hpp"
#include "variants/cpu/sgemm.hpp"

namespace lobench::meters {
namespace {

constexpr const char* kHeader = "lobench fp32 products cache, version 5";
// The class, then own and library CPU seconds, own and library wall seconds, oneDNN's CPU and wall seconds
// ("none" where not timed), and what the screening left out.
constexpr size_t kLinesPerClass = 8;
constexpr const char* kNotTimed = "none";

// A modified tree's commit does not name its kernels: the binary's own size and modification time do.
std::string modified_binary_stamp() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&products_cache_key), &info) || !info.dli_fname) return "binary unknown";
  struct stat st {};
  if (stat(info.dli_fname, &st) != 0) return "binary unknown";
  return fmt::format("binary {} bytes, modified {}.{:09d}", int64_t(st.st_size), int64_t(st.st_mtim.tv_sec),
                     int64_t(st.st_mtim.tv_nsec));
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string samples_line(const char* name, const Samples& s) {
  std::string line = name;
  for (double x : s.seconds) line += fmt::format(" {}", x);  // shortest text that reads back exactly
  return s.seconds.empty() ? line + " " + kNotTimed : line;
}

// "NAME: VALUE" with the expected NAME, else nothing.
std::optional<std::string> field(const std::string& line, const std::string& name) {
  if (line.rfind(name + ": ", 0) != 0) return std::nullopt;
  return line.substr(name.size() + 2);
}

// Positive finite seconds, at least one.
std::optional<Samples> parse_samples(const std::string& text) {
  std::istringstream in(text);
  Samples s;
  std::string word;
  while (in >> word) {
    char* end = nullptr;
    const double x = std::strtod(word.c_str(), &end);
    if (*end || !std::isfinite(x) || x <= 0) return std::nullopt;
    s.seconds.push_back(x);
  }
  if (s.seconds.empty()) return std::nullopt;
  return s;
}

std::optional<ProductsTiming> parse_timing(const std::string& cls, const std::string* samples) {
  ProductsTiming t;
  char name[16] = {0};
  long long P = 0, V = 0, D = 0;
  char tail = 0;
  if (std::sscanf(cls.c_str(), "%15s P=%lld V=%lld D=%lld%c", name, &P, &V, &D, &tail) != 4 || P < 1 || V < 1 || D < 1)
    return std::nullopt;
  t.shape_class = name, t.P = P, t.V = V, t.D = D;
  Samples* into[] = {&t.own, &t.library, &t.own_wall, &t.library_wall, &t.onednn, &t.onednn_wall};
  const char* names[] = {"own_cpu_seconds",  "library_cpu_seconds", "own_wall_seconds",
                         "library_wall_seconds", "onednn_cpu_seconds", "onednn_wall_seconds"};
  for (int i = 0; i < 6; ++i) {
    const auto text = field(samples[i], names[i]);
    if (text == kNotTimed) continue;  // (a path not timed)
    auto parsed = text ? parse_samples(*text) : std::nullopt;
    if (!parsed) return std::nullopt;
    *into[i] = std::move(*parsed);
  }
  const auto screened = field(samples[6], "screened");
  if (!screened && samples[6] != "screened:") return std::nullopt;
  t.screened = screened.value_or("");
  // Some path timed; every one in the same rounds; a path's CPU and wall samples both or neither.
  if (t.rounds() == 0) return std::nullopt;
  for (const Samples* s : into)
    if (!s->seconds.empty() && s->seconds.size() != t.rounds()) return std::nullopt;
  if (t.own.seconds.empty() != t.own_wall.seconds.empty() || t.onednn.seconds.empty() != t.onednn_wall.seconds.empty() ||
      t.library.seconds.empty() != t.library_wall.seconds.empty())
    return std::nullopt;
  return t;
}

}  // namespace

bool ProductsTiming::faster_than_own(const Samples& other) const {
  if (other.seconds.empty() || own.seconds.empty()) return false;
  return beats(other, own);
}

bool ProductsTiming::beats(const Samples& other, const Samples& base) {
  if (other.seconds.empty() || base.seconds.empty()) return false;
  const Samples& own = base;
  size_t wins = 0;
  for (size_t i = 0; i < own.seconds.size() && i < other.seconds.size(); ++i) wins += other.seconds[i] < own.seconds[i];
  return 4 * wins >= 3 * own.seconds.size() && other.median() < (1.0 - kMinLibraryGain) * own.median();
}

std::string products_cache_key() {
  const cpu::CacheSizes& caches = cpu::cache_sizes();
  std::string key = fmt::format("cpu {} | {} | {} | L1d {} L2 {} L3 {} | {} | {} | {} | build {}{} | {}",
                                cpu::cpu_model_name(), cpu::cpu_identity(), cpu::cpu_simd_flags(),
                                caches.l1d, caches.l2, caches.l3,
                                cpu::own_tile_kernels_available() ? "own kernels" : "no own kernels (LOBENCH_ISA, CPU)",
                                cpu::sgemm_library_name(),
                                cpu::onednn_unavailable() ? "no oneDNN" : cpu::onednn_name(), build_commit(),
                                build_dirty() ? " modified, " + modified_binary_stamp() : "", build_flags());
  for (char& c : key)
    if (c == '\n' || c == '\r') c = ' ';
  return key;
}

std::optional<std::string> products_cache_path(const std::string& key) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path dir;
  if (xdg && *xdg) dir = xdg;
  else if (home && *home) dir = std::filesystem::path(home) / ".cache";
  else return std::nullopt;
  return (dir / "lobench" / fmt::format("fp32-products-{:016x}.txt", fnv1a(key))).string();
}

CacheRead read_products_cache(const std::string& path, const std::string& key) {
  CacheRead r;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    r.why = "no cache file";
    return r;
  }
  std::ifstream f(path);
  std::vector<std::string> lines;
  for (std::string line; f && std::getline(f, line);) lines.push_back(line);
  r.corrupt = true;
  if (!f.eof()) {
    r.why = "cannot be read";
    return r;
  }
  CachedProducts c;
  const auto k = lines.size() > 1 ? field(lines[1], "key") : std::nullopt;
  const auto utc = lines.size() > 2 ? field(lines[2], "measured_utc") : std::nullopt;
  const auto threads = lines.size() > 3 ? field(lines[3], "threads") : std::nullopt;
  if (lines.empty() || lines[0] != kHeader || !k || !utc || !threads || lines.size() != 4 + 2 * kLinesPerClass) {
    r.why = "is not a products cache of this version (corrupt?)";
    return r;
  }
  c.key = *k, c.measured_utc = *utc, c.threads = std::atoi(threads->c_str());
  for (size_t at = 4; at + kLinesPerClass <= lines.size(); at += kLinesPerClass) {
    const auto cls = field(lines[at], "class");
    auto t = cls ? parse_timing(*cls, &lines[at + 1]) : std::nullopt;
    if (!t) {
      r.why = fmt::format("line {} is malformed (corrupt?)", at + 1);
      return r;
    }
    c.timings.push_back(std::move(*t));
  }
  if (c.threads < 1) {
    r.why = "its thread count is malformed (corrupt?)";
    return r;
  }
  r.corrupt = false;
  if (c.key != key) {
    r.why = "measured for another CPU or build";
    return r;
  }
  r.products = std::move(c);
  return r;
}

bool write_products_cache(const std::string& path, const CachedProducts& c, std::string* why) {
  const std::filesystem::path target(path);
  std::error_code ec;
  std::filesystem::create_directories(target.parent_path(), ec);
  if (ec) {
    *why = fmt::format("cannot create {}: {}", target.parent_path().string(), ec.message());
    return false;
  }
  const std::string temp = fmt::format("{}.tmp.{}", path, int64_t(getpid()));
  {
    std::ofstream f(temp, std::ios::trunc);
    f << kHeader << "\nkey: " << c.key << "\nmeasured_utc: " << c.measured_utc << "\nthreads: " << c.threads << "\n";
    for (const ProductsTiming& t : c.timings)
      f << fmt::format("class: {} P={} V={} D={}\n", t.shape_class, t.P, t.V, t.D)
        << samples_line("own_cpu_seconds:", t.own) << "\n" << samples_line("library_cpu_seconds:", t.library) << "\n"
        << samples_line("own_wall_seconds:", t.own_wall) << "\n"
        << samples_line("library_wall_seconds:", t.library_wall) << "\n"
        << samples_line("onednn_cpu_seconds:", t.onednn) << "\n"
        << samples_line("onednn_wall_seconds:", t.onednn_wall) << "\n"
        << (t.screened.empty() ? std::string("screened:") : "screened: " + t.screened) << "\n";
    f.close();
    if (!f) {
      std::filesystem::remove(temp, ec);
      *why = fmt::format("cannot write {}", temp);
      return false;
    }
  }
  std::filesystem::rename(temp, target, ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    *why = fmt::format("cannot rename {} to {}: {}", temp, path, ec.message());
    return false;
  }
  return true;
}

MeasurementLock::MeasurementLock(const std::string& cache_path,
                                 const std::function<void(const std::string& lock_path)>& on_wait, double max_wait_s) {
  const std::filesystem::path target(cache_path);
  std::error_code ec;
  std::filesystem::create_directories(target.parent_path(), ec);
  const std::string lock_path = cache_path + ".lock";
  const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  // (polled, not a blocking flock: a holder that never finishes — stopped, or hung on a network file
  // system — must not stop every later run; after max_wait_s this process measures unlocked)
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::duration<double>(max_wait_s);
  bool told = false;
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if ((errno != EWOULDBLOCK && errno != EINTR) || std::chrono::steady_clock::now() > give_up) {
      close(fd);  // (a file system without locks, or waited long enough: measure unlocked)
      return;
    }
    if (errno == EWOULDBLOCK && !told) on_wait(lock_path), told = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  fd_ = fd;
}

MeasurementLock::~MeasurementLock() {
  if (fd_ >= 0) close(fd_);  // (closing drops the lock)
}

}  // namespace lobench::meters
