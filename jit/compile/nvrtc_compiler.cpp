#include "compile/nvrtc_compiler.hpp"

#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <string_view>

#include "core/config.hpp"
#include "numfuse/errors.hpp"

namespace nf::jit {

namespace {

std::atomic<std::uint64_t> g_compiles{0};
std::atomic<std::uint64_t> g_compile_ns{0};

// Failures of calls that cannot fail on a program NVRTC compiled are ours.
void check(nvrtcResult result, const char* call) {
  if (result != NVRTC_SUCCESS) {
    throw InternalError(std::string(call) + " failed: " + nvrtcGetErrorString(result));
  }
}

class Program {
 public:
  Program(const std::string& source, const std::string& name) {
    check(nvrtcCreateProgram(&program_, source.c_str(), name.c_str(), 0, nullptr, nullptr),
          "nvrtcCreateProgram");
  }
  ~Program() { nvrtcDestroyProgram(&program_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  nvrtcProgram get() const { return program_; }

  std::string log() const {
    std::size_t size = 0;
    check(nvrtcGetProgramLogSize(program_, &size), "nvrtcGetProgramLogSize");
    std::string text(size, '\0');
    check(nvrtcGetProgramLog(program_, text.data()), "nvrtcGetProgramLog");
    while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) text.pop_back();
    return text;
  }

 private:
  nvrtcProgram program_ = nullptr;
};

// The device arch NVRTC is asked to target: a cubin for `name`, or PTX for a
// virtual arch.
struct Target {
  std::string name;
  bool cubin;
};

std::string supported_list() {
  std::string list;
  for (int a : nvrtc_supported_archs())
    list += (list.empty() ? "sm_" : ", sm_") + std::to_string(a);
  return list;
}

// PTX of a virtual arch runs on that arch and every later one, so a device
// this NVRTC does not know gets PTX for the newest arch not above its own.
Target resolve(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0) throw InternalError("not a CUDA device arch: \"" + arch + "\"");
  const int number = arch_number(arch);
  const std::vector<int>& supported = nvrtc_supported_archs();
  if (std::binary_search(supported.begin(), supported.end(), number)) return {arch, true};
  const auto above = std::upper_bound(supported.begin(), supported.end(), number);
  if (above == supported.begin()) {
    throw CompileError("NVRTC " + nvrtc_version() + " cannot compile for " + arch +
                           ", which is older than every arch it supports; use a CUDA toolkit "
                           "that supports this GPU",
                       std::string(), "supported: " + supported_list());
  }
  return {"compute_" + std::to_string(*(above - 1)), false};
}

std::vector<std::string> options_for(const Target& target) {
  return {"-std=c++17", "--gpu-architecture=" + target.name, "-default-device", "--fmad=true"};
}

// NVRTC logs carry warnings and notes too; the first error says most.
std::string first_error(const std::string& log) {
  std::size_t begin = 0;
  std::string first_line;
  while (begin < log.size()) {
    std::size_t end = log.find('\n', begin);
    if (end == std::string::npos) end = log.size();
    const std::string line = log.substr(begin, end - begin);
    if (line.find("error") != std::string::npos) return line;
    if (first_line.empty()) first_line = line;
    begin = end + 1;
  }
  return first_line;
}

std::vector<char> output(const Program& program, bool cubin) {
  std::size_t size = 0;
  if (cubin) {
    check(nvrtcGetCUBINSize(program.get(), &size), "nvrtcGetCUBINSize");
  } else {
    check(nvrtcGetPTXSize(program.get(), &size), "nvrtcGetPTXSize");
  }
  std::vector<char> data(size);
  if (cubin) {
    check(nvrtcGetCUBIN(program.get(), data.data()), "nvrtcGetCUBIN");
  } else {
    check(nvrtcGetPTX(program.get(), data.data()), "nvrtcGetPTX");
  }
  return data;
}

}  // namespace

// The identifier before the first parenthesis that is not an attribute's
// (__launch_bounds__, __cluster_dims__).
std::string kernel_name_of(const std::string& source) {
  const std::size_t global = source.find("__global__");
  std::size_t from = global;
  while (from != std::string::npos) {
    const std::size_t paren = source.find('(', from);
    if (paren == std::string::npos) break;
    std::size_t end = paren;
    while (end > global && std::isspace(static_cast<unsigned char>(source[end - 1]))) --end;
    std::size_t begin = end;
    while (begin > global && (std::isalnum(static_cast<unsigned char>(source[begin - 1])) ||
                              source[begin - 1] == '_')) {
      --begin;
    }
    const std::string name = source.substr(begin, end - begin);
    // Attributes with arguments come before the name.
    if (name != "__launch_bounds__" && name != "__cluster_dims__") {
      return name.empty() ? "kernel" : name;
    }
    from = source.find(')', paren);
  }
  return "kernel";
}

bool is_device_arch(const std::string& arch) {
  return config::is_device_arch_name(arch);
}

std::string nvrtc_version() {
  static const std::string version = [] {
    int major = 0, minor = 0;
    check(nvrtcVersion(&major, &minor), "nvrtcVersion");
    return std::to_string(major) + "." + std::to_string(minor);
  }();
  return version;
}

int arch_number(const std::string& arch) {
  // Archs come from the device or from NVRTC's own choice, so anything else
  // is our bug.
  const std::string_view prefix = arch.rfind("compute_", 0) == 0 ? "compute_" : "sm_";
  std::size_t end = prefix.size();
  while (end < arch.size() && std::isdigit(static_cast<unsigned char>(arch[end]))) ++end;
  const bool suffix_ok = std::all_of(arch.begin() + end, arch.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c));
  });
  if (arch.rfind(prefix, 0) != 0 || end == prefix.size() || end > prefix.size() + 4 || !suffix_ok) {
    throw InternalError("not a CUDA device arch: \"" + arch + "\"");
  }
  return std::stoi(arch.substr(prefix.size(), end - prefix.size()));
}

std::vector<int> nvrtc_supported_archs() {
  static const std::vector<int> archs = [] {
    int count = 0;
    check(nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
    std::vector<int> list(count);
    check(nvrtcGetSupportedArchs(list.data()), "nvrtcGetSupportedArchs");
    std::sort(list.begin(), list.end());
    return list;
  }();
  return archs;
}

std::vector<std::string> compile_options(const std::string& arch) {
  return options_for(resolve(arch));
}

namespace {

KernelImage compile_for(const std::string& source, const Target& target) {
  const std::vector<std::string> options = options_for(target);
  std::vector<const char*> option_ptrs;
  for (const std::string& option : options) option_ptrs.push_back(option.c_str());
  const std::string name = kernel_name_of(source);

  const auto start = std::chrono::steady_clock::now();
  Program program(source, name + ".cu");
  const nvrtcResult result =
      nvrtcCompileProgram(program.get(), static_cast<int>(option_ptrs.size()), option_ptrs.data());
  const auto elapsed = std::chrono::steady_clock::now() - start;
  g_compiles.fetch_add(1, std::memory_order_relaxed);
  g_compile_ns.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count(),
                         std::memory_order_relaxed);

  if (result != NVRTC_SUCCESS) {
    std::string log = program.log();
    if (log.empty()) log = nvrtcGetErrorString(result);
    const std::string what =
        "NVRTC failed to compile kernel " + name + " for " + target.name + ": " + first_error(log);
    throw CompileError(what, source, std::move(log));
  }
  return {target.name, target.cubin, output(program, target.cubin)};
}

}  // namespace

KernelImage compile(const std::string& source, const std::string& arch) {
  return compile_for(source, resolve(arch));
}

std::string compile_ptx(const std::string& source, const std::string& arch) {
  const Target target = resolve(arch);
  const std::string virtual_arch = target.cubin ? "compute_" + arch.substr(3) : target.name;
  const KernelImage ptx = compile_for(source, {virtual_arch, false});
  return std::string(ptx.data.data(), ptx.data.size() - (ptx.data.empty() ? 0 : 1));
}

CompileStats compile_stats() {
  return {g_compiles.load(std::memory_order_relaxed),
          static_cast<double>(g_compile_ns.load(std::memory_order_relaxed)) / 1e6};
}

}  // namespace nf::jit
