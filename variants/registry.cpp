#include <algorithm>
#include <stdexcept>

#include "variants/variant.hpp"

namespace lobench {

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

bool Registry::add(std::unique_ptr<Variant> v) {
  const std::string key = v->backend() + "/" + v->name();
  for (const auto& existing : variants_)
    if (existing->backend() + "/" + existing->name() == key)
      throw std::logic_error("variant registered twice: " + key);
  variants_.push_back(std::move(v));
  return true;
}

// Accepts "name" (the CPU one when several backends share it) or "backend/name".
const Variant* Registry::find(const std::string& name) const {
  const Variant* found = nullptr;
  for (const auto& v : variants_) {
    if (v->backend() + "/" + v->name() == name) return v.get();
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

}  // namespace lobench
