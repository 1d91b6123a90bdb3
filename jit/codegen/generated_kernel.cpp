#include "codegen/generated_kernel.hpp"

#include <cstdio>

#include <xxhash.h>

namespace nf::jit {

std::string kernel_name(const char* kind, const std::string& signature) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(signature.data(), signature.size())));
  return std::string("nf_") + kind + "_" + hex;
}

}  // namespace nf::jit
