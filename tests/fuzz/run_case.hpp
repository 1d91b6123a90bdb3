// Running one statement on two backends from the same inputs.
#pragma once

#include <cstdint>
#include <string>

#include "codegen/reduce_spec.hpp"
#include "statement.hpp"

namespace nf::fuzz {

enum class Mode { emulator, gpu, misuse };

struct Outcome {
  bool ok = true;
  std::string report;  // what differed, or what threw
};

// The generated kernels, run in the emulator as a GPU would run them,
// against the CPU interpreter. Reductions walk as `limits` say.
Outcome run_emulated_case(const Statement& s, const jit::ReduceLimits& limits);

// The statement on cuda:0 against the CPU backend (computing in f64).
Outcome run_gpu_case(const Statement& s);

// The reduction walks the emulator mode takes turns at, by case: an sm_90
// device's, and limits lowered so that small shapes reach the other walks
// (rows read again per pass, split across blocks, shared by a cluster).
jit::ReduceLimits emulator_limits(std::uint64_t index, std::string* name);

}  // namespace nf::fuzz
