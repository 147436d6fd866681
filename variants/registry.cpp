#include <algorithm>
#include <cctype>
#include <cstdio>
#include <stdexcept>

#include "variants/plugin_api.hpp"
#include "variants/variant.hpp"

namespace lobench {

namespace {

constexpr const char* kBuiltIn = "built-in";

std::string key_of(const Variant& v) { return v.backend() + "/" + v.name(); }

// The factories LOBENCH_REGISTER_VARIANT records at static-initialisation time (a function-local
// static, so it exists before the first file's initialiser runs, whatever the order of the files).
std::vector<std::unique_ptr<Variant> (*)()>& builtin_factories() {
  static std::vector<std::unique_ptr<Variant> (*)()> factories;
  return factories;
}

}  // namespace

bool add_builtin_variant(std::unique_ptr<Variant> (*factory)()) {
  builtin_factories().push_back(factory);
  return true;
}

}  // namespace lobench

// The built-ins' registration function: the same signature and ABI rule as a plug-in's entry point,
// under another name (a plug-in links this file too, and its own lobench_register_v1 must be the one
// the loader finds).
extern "C" __attribute__((visibility("hidden"))) int lobench_register_builtins_v1(lobench::Registry* registry, int abi) {
  if (abi != LOBENCH_PLUGIN_ABI) return LOBENCH_PLUGIN_ABI;
  for (auto factory : lobench::builtin_factories()) registry->add(factory());
  return LOBENCH_PLUGIN_ABI;
}

namespace lobench {

namespace {

// A byte as a message can show it: printable ASCII as itself, others as \xHH.
std::string shown_byte(unsigned char c) {
  if (c >= 0x20 && c < 0x7f) return std::string(1, char(c));
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(c));
  return buf;
}

}  // namespace

std::string invalid_variant_name(const std::string& name) {
  if (name.empty()) return "a variant name is empty";
  std::string shown;
  for (unsigned char c : name.substr(0, 60)) shown += shown_byte(c);
  const std::string what = "variant name '" + shown + (name.size() > 60 ? "...'" : "'");
  if (name.size() > kMaxVariantNameBytes)
    return what + " is " + std::to_string(name.size()) + " bytes long; at most " + std::to_string(kMaxVariantNameBytes) +
           " (the run file's variant column)";
  for (unsigned char c : name)
    if (!(c < 0x80 && std::isalnum(c)) && c != '_' && c != '-' && c != '.' && c != '+')
      return what + " has the character '" + shown_byte(c) + "'; names take letters, digits and _ - . + only";
  return "";
}

Registry& Registry::instance() {
  static Registry registry = [] {
    Registry r;
    r.register_from(lobench_register_builtins_v1, kBuiltIn);
    return r;
  }();
  return registry;
}

bool Registry::add(std::unique_ptr<Variant> v) {
  const std::string key = key_of(*v);
  for (const auto& existing : variants_)
    if (key_of(*existing) == key) throw std::logic_error("variant registered twice: " + key);
  variants_.push_back(std::move(v));
  origins_.push_back(kBuiltIn);
  return true;
}

void Registry::register_from(lobench_register_fn fn, const std::string& origin) {
  Registry staged;
  int abi = 0;
  try {
    abi = fn(&staged, LOBENCH_PLUGIN_ABI);
  } catch (const std::exception& e) {
    throw std::invalid_argument("its registration failed: " + std::string(e.what()));
  } catch (...) {  // a plug-in's own exception type must not reach std::terminate
    throw std::invalid_argument("its registration failed: it threw an exception that is not a std::exception");
  }
  if (abi != LOBENCH_PLUGIN_ABI)
    throw std::invalid_argument("built for plug-in ABI " + std::to_string(abi) + ", but this lobench loads ABI " +
                                std::to_string(LOBENCH_PLUGIN_ABI) + " (rebuild it against this lobench's package)");
  if (staged.variants_.empty()) throw std::invalid_argument("it registers no variant");
  for (const auto& v : staged.variants_)
    if (const std::string why = invalid_variant_name(v->name()); !why.empty()) throw std::invalid_argument(why);
  for (const auto& v : staged.variants_)
    for (size_t i = 0; i < variants_.size(); ++i)
      if (key_of(*variants_[i]) == key_of(*v))
        throw std::invalid_argument("variant " + key_of(*v) + " is already registered (" + origins_[i] + ")");
  for (auto& v : staged.variants_) {
    variants_.push_back(std::move(v));
    origins_.push_back(origin);
  }
}

// Accepts "name" (the CPU one when several backends share it) or "backend/name".
const Variant* Registry::find(const std::string& name) const {
  const Variant* found = nullptr;
  for (const auto& v : variants_) {
    if (key_of(*v) == name) return v.get();
    if (v->name() == name && (!found || v->backend() == "cpu")) found = v.get();
  }
  return found;
}

std::vector<const Variant*> Registry::all() const {
  std::vector<const Variant*> out;
  for (const auto& v : variants_) out.push_back(v.get());
  std::sort(out.begin(), out.end(), [](const Variant* a, const Variant* b) {
    return std::pair(a->backend(), a->name()) < std::pair(b->backend(), b->name());
  });
  return out;
}

std::string Registry::origin(const Variant& v) const {
  for (size_t i = 0; i < variants_.size(); ++i)
    if (variants_[i].get() == &v) return origins_[i];
  return "";
}

std::vector<std::string> Registry::origins() const {
  std::vector<std::string> out;
  for (const auto& o : origins_)
    if (o != kBuiltIn && std::find(out.begin(), out.end(), o) == out.end()) out.push_back(o);
  return out;
}

}  // namespace lobench
