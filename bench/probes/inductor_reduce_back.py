#!/usr/bin/env python3
"""What torch.compile runs for a reduction broadcast back, x - x.mean(axes):
the Triton source it generates, the launch configuration its autotuner keeps
(XBLOCK, R0_BLOCK, warps, stages) and its CUDA-event time, so that numfuse's
kernel for the same statement can be set beside it (`numfuse inspect
--expr-file`, bench/sweep_bench.cpp's rows).

    python3 bench/probes/inductor_reduce_back.py                       # configs and times
    TORCH_LOGS=output_code python3 bench/probes/inductor_reduce_back.py # and the source

Runs where PyTorch sees a GPU (the device machine's python3).
"""
import sys

import torch

CASES = [
    ((75, 75, 75, 75), (1, 3), torch.float16),
    ((75, 75, 75, 75), (0, 3), torch.float16),
    ((63, 63, 63, 63), (1, 3), torch.float32),
    ((76, 76, 76, 76), (0, 3), torch.float16),
]
CALLS = 100


def event_us(f, x):
    for _ in range(3):
        f(x)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(CALLS):
        f(x)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1000 / CALLS


def kept_configs(seen):
    """The launch configurations of the Triton kernels compiled since the last
    call: after autotuning, each kernel keeps the one launcher it chose."""
    for module in list(sys.modules.values()):
        for name, obj in list(getattr(module, "__dict__", {}).items()):
            if name.startswith("triton_") and hasattr(obj, "launchers") and id(obj) not in seen:
                seen.add(id(obj))
                for launcher in obj.launchers:
                    c = launcher.config
                    yield name, c.kwargs, c.num_warps, c.num_stages


def main():
    seen = set()
    for shape, axes, dtype in CASES:
        torch._dynamo.reset()
        x = torch.randn(shape, device="cuda", dtype=dtype)
        f = torch.compile(lambda x, axes=axes: x - x.mean(axes, keepdim=True), dynamic=False)
        us = event_us(f, x)
        for name, kwargs, warps, stages in kept_configs(seen):
            print(f"{shape} {axes} {dtype}: {us:.1f} us, {name} {kwargs} warps {warps} stages {stages}",
                  flush=True)


if __name__ == "__main__":
    main()
