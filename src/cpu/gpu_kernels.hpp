// What a CPU run leaves for a GPU: the kernels a GPU would load for the
// same plan, recorded in the kernel manifest (NF_KERNEL_MANIFEST), so that
// `numfuse warmup` compiles a program's kernels on a machine without one.
#pragma once

#include <span>

#include "numfuse/array.hpp"
#include "plan/schedule.hpp"

namespace nf::cpu {

// The schedule a GPU of nf::target_arch() runs for `p` writing `outputs`
// (jit::kernel_schedule): the CPU runs it too, so that both backends round
// the same intermediates.
Schedule gpu_schedule(const Program& p, std::span<const Array> outputs,
                      const ScheduleOptions& options);

// Records the kernels of schedule `s` of `p` writing `outputs` for
// nf::target_arch().
void record_gpu_kernels(const Program& p, const Schedule& s, std::span<const Array> outputs);

}  // namespace nf::cpu
