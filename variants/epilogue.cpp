#include "variants/epilogue.hpp"

#include <stdexcept>
#include <string>

namespace lobench {

Epilogue parse_epilogue(std::string_view name) {
  if (name.empty() || name == "fp32" || name == "float32") return Epilogue::fp32;
  if (name == "bf16" || name == "bfloat16") return Epilogue::bf16;
  if (name == "fp16" || name == "float16" || name == "half") return Epilogue::fp16;
  throw std::invalid_argument("unknown epilogue precision '" + std::string(name) + "' (valid: fp32, bf16, fp16)");
}

const char* to_string(Epilogue e) {
  switch (e) {
    case Epilogue::fp32: return "fp32";
    case Epilogue::bf16: return "bf16";
    case Epilogue::fp16: return "fp16";
  }
  return "?";
}

}  // namespace lobench
