// NVRTC compilation of kernels written against the embedded runtime prelude:
// cubins for the archs CI targets, PTX for archs this NVRTC does not know,
// CompileError with source and log. Needs no GPU.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "compile/nvrtc_compiler.hpp"
#include "compile/runtime_source.hpp"
#include "numfuse/errors.hpp"

namespace {

using nf::jit::compile;
using nf::jit::compile_options;
using nf::jit::nvrtc_supported_archs;

// Touches every runtime header, so the whole prelude must compile.
const char* const kKernel = R"(
extern "C" __global__ void nf_test_kernel(float* out, const unsigned short* in,
                                          nf_dims<long long, 1> n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n.d[0]) return;
  const float x = nf_f16_bits_to_f32(in[i]);
  const nf_u32x4 r = nf_philox4x32_10(nf_u32x4{(unsigned)i, 0u, 0u, 0u}, 1u, 2u);
  out[i] = nf_convert<nf_f32>(nf_convert<nf_i32>(x)) + nf_uniform_f32(r.x);
}
)";

std::string kernel_source() {
  return std::string(nf::jit::runtime_prelude()) + kKernel;
}

bool is_elf(const std::vector<char>& data) {
  const char magic[] = {0x7f, 'E', 'L', 'F'};
  return data.size() > sizeof magic && std::memcmp(data.data(), magic, sizeof magic) == 0;
}

}  // namespace

TEST_CASE("the runtime prelude is the runtime headers without includes of each other",
          "[host][jit]") {
  const std::string prelude(nf::jit::runtime_prelude());
  std::size_t last = 0;
  for (const char* header :
       {"nf_defs.h", "nf_half.h", "nf_cast.h", "nf_ops.h", "nf_philox.h", "nf_kernel.h"}) {
    const std::size_t at = prelude.find(std::string("==== jit/runtime/") + header + " ====");
    REQUIRE(at != std::string::npos);
    CHECK(at >= last);
    last = at;
  }
  CHECK(prelude.find("#pragma once") == std::string::npos);
  CHECK(prelude.find("#include \"") == std::string::npos);
  CHECK(prelude.find("\n\n\n") == std::string::npos);
}

TEST_CASE("compile makes cubins for sm_80 and sm_90 and counts its time", "[host][jit]") {
  const nf::jit::CompileStats before = nf::jit::compile_stats();
  for (const std::string arch : {"sm_80", "sm_90"}) {
    const nf::jit::KernelImage image = compile(kernel_source(), arch);
    CHECK(image.arch == arch);
    CHECK(image.cubin);
    CHECK(is_elf(image.data));
  }
  const nf::jit::CompileStats after = nf::jit::compile_stats();
  CHECK(after.compiles == before.compiles + 2);
  CHECK(after.ms > before.ms);
}

TEST_CASE("an arch newer than NVRTC knows gets PTX of the newest arch it knows", "[host][jit]") {
  const std::string newest = std::to_string(nvrtc_supported_archs().back());
  const nf::jit::KernelImage image = compile(kernel_source(), "sm_999");
  CHECK(image.arch == "compute_" + newest);
  CHECK_FALSE(image.cubin);
  REQUIRE_FALSE(image.data.empty());
  CHECK(image.data.back() == '\0');  // the loaders take PTX as a C string
  CHECK(std::string(image.data.data()).find(".target sm_" + newest) != std::string::npos);
}

TEST_CASE("compile_options are what compile passes, with the target it picks", "[host][jit]") {
  const std::vector<int> archs = nvrtc_supported_archs();
  REQUIRE_FALSE(archs.empty());
  CHECK(std::is_sorted(archs.begin(), archs.end()));
  CHECK(compile_options("sm_80") == std::vector<std::string>{"-std=c++17",
                                                             "--gpu-architecture=sm_80",
                                                             "-default-device", "--fmad=true"});
  CHECK(compile_options("sm_90a")[1] == "--gpu-architecture=sm_90a");
  CHECK(compile_options("sm_999")[1] ==
        "--gpu-architecture=compute_" + std::to_string(archs.back()));
  // An arch between two known ones runs PTX of the older one.
  for (std::size_t i = 1; i < archs.size(); ++i) {
    if (archs[i] - archs[i - 1] > 1) {
      CHECK(compile_options("sm_" + std::to_string(archs[i] - 1))[1] ==
            "--gpu-architecture=compute_" + std::to_string(archs[i - 1]));
    }
  }
  CHECK_THROWS_AS(compile_options("sm_" + std::to_string(archs.front() - 1)), nf::CompileError);
  for (const char* bad : {"", "sm_", "80", "compute_80", "sm_80.1", "gfx90a"}) {
    CHECK_THROWS_AS(compile_options(bad), nf::InternalError);
  }
}

TEST_CASE("NVRTC rejecting a kernel throws CompileError with the source and the log",
          "[host][jit]") {
  const std::string source = std::string(nf::jit::runtime_prelude()) +
                             "extern \"C\" __global__ void __launch_bounds__(256)\n"
                             "nf_broken(float* out) { out[0] = 1 }\n";
  try {
    compile(source, "sm_80");
    FAIL("compile accepted a syntax error");
  } catch (const nf::CompileError& e) {
    CHECK(e.source() == source);
    CHECK(e.log().find("error") != std::string::npos);
    const std::string what = e.what();
    CHECK(what.find("nf_broken") != std::string::npos);
    CHECK(what.find("sm_80") != std::string::npos);
    CHECK(what.find("error") != std::string::npos);
  }
}

TEST_CASE("a kernel's name is found past its attributes", "[host][jit]") {
  using nf::jit::kernel_name_of;
  CHECK(kernel_name_of("extern \"C\" __global__ void nf_a(float* x) {}") == "nf_a");
  CHECK(kernel_name_of("extern \"C\" __global__ void __launch_bounds__(256) nf_b(\n"
                       "    float* x) {}") == "nf_b");
  CHECK(kernel_name_of("extern \"C\" __global__ void __cluster_dims__(8, 1, 1) "
                       "__launch_bounds__(256) nf_c(float* x) {}") == "nf_c");
  CHECK(kernel_name_of("__device__ int f(int x) { return x; }") == "kernel");
}

TEST_CASE("nvrtc_version is major.minor", "[host][jit]") {
  const std::string version = nf::jit::nvrtc_version();
  const std::size_t dot = version.find('.');
  REQUIRE(dot != std::string::npos);
  CHECK(std::stoi(version.substr(0, dot)) >= 12);
  CHECK(version.find_first_not_of("0123456789", dot + 1) == std::string::npos);
}
