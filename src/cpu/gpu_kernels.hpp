// What a CPU run leaves for a GPU: the kernels a GPU would load for the
// same plan, recorded in the kernel manifest (NF_KERNEL_MANIFEST), so that
// `numfuse warmup` compiles a program's kernels on a machine without one.
#pragma once

#include <span>
#include <vector>

#include "codegen/step_kernels.hpp"

#include "numfuse/array.hpp"
#include "plan/schedule.hpp"

namespace nf::cpu {

// The schedule a GPU of nf::target_arch() runs for `p` writing `outputs`
// (jit::kernel_schedule): the CPU runs it too, so that both backends round
// the same intermediates.
Schedule gpu_schedule(const Program& p, std::span<const Array> outputs,
                      const ScheduleOptions& options);

// The kernels a GPU of nf::target_arch() loads for the statement of `p`
// writing `outputs`: its program made again for a GPU, where make_program
// cuts reductions that the host runs whole (ProgramTarget).
std::vector<jit::GeneratedKernel> gpu_kernels(const Program& p, std::span<const Array> outputs);

// Records gpu_kernels(p, outputs) in the kernel manifest.
void record_gpu_kernels(const Program& p, std::span<const Array> outputs);

}  // namespace nf::cpu
