#!/usr/bin/env python3
"""numpy on the workloads of cpu_bench.cpp, and the two side by side.

    python3 bench/cpu_numpy.py [--quick] [--numfuse PATH/TO/cpu_bench]

Times each workload as cpu_bench does (two warm-up calls, then the median
wall clock of at least 5-10 calls and about a second), prints one JSON line
per workload, and with --numfuse runs cpu_bench (NF_DEVICE=cpu) first and
ends with a table of both and numfuse's speed-up.
"""
import argparse
import json
import os
import subprocess
import time

import numpy as np


def median_ms(f, min_runs):
    for _ in range(2):
        f()
    ms = []
    while len(ms) < min_runs or (sum(ms) < 1000 and len(ms) < 200):
        t0 = time.perf_counter()
        f()
        ms.append((time.perf_counter() - t0) * 1e3)
    return sorted(ms)[len(ms) // 2]


def workloads(quick):
    rng = np.random.default_rng(0)
    out = []

    m, k = (200, 4000) if quick else (2000, 40000)
    A = rng.standard_normal((m, k), dtype=np.float32)
    B = rng.standard_normal((k, m), dtype=np.float32)
    C = np.empty((m, m), np.float32)
    out.append(("gemm", f"({m}, {k}, {m})", lambda: np.matmul(A, B, out=C), 5))

    b, nv, nh = (512 if quick else 4096), 2048, 256
    v = rng.random((b, nv), dtype=np.float32)
    W = (rng.standard_normal((nv, nh), dtype=np.float32) * np.float32(0.1))
    bias = rng.standard_normal((1, nh), dtype=np.float32)

    def up():
        h = 1 / (1 + np.exp(-(v @ W + bias)))
        return (rng.random(h.shape, dtype=np.float32) < h).astype(np.float32)

    out.append(("rbm_up", f"({b}, {nv}, {nh})", up, 10))

    rows, cols = (1024 if quick else 8192), 4096
    x = rng.standard_normal((rows, cols), dtype=np.float32)
    eps = np.float32(1e-5)

    def ln():
        return (x - x.mean(1, keepdims=True)) * np.reciprocal(np.sqrt(x.var(1, keepdims=True) + eps))

    out.append(("layernorm", f"({rows}, {cols})", ln, 10))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--numfuse", help="path of cpu_bench, run first and compared")
    args = ap.parse_args()
    rows = {}
    if args.numfuse:
        cmd = [args.numfuse] + (["--quick"] if args.quick else [])
        env = dict(os.environ, NF_DEVICE="cpu")
        for line in subprocess.run(cmd, env=env, check=True, capture_output=True,
                                   text=True).stdout.splitlines():
            print(line, flush=True)
            r = json.loads(line)
            if "work" in r:
                rows[r["work"]] = {"numfuse": r["ms"], "shape": r["shape"]}
    for work, shape, f, runs in workloads(args.quick):
        ms = median_ms(f, runs)
        print(json.dumps({"work": work, "shape": shape, "impl": "numpy", "ms": round(ms, 3)}),
              flush=True)
        rows.setdefault(work, {"shape": shape})["numpy"] = ms
    if args.numfuse:
        print(f"\n{'work':<10} {'shape':<20} {'numfuse ms':>11} {'numpy ms':>10} {'speed-up':>9}")
        for work, r in rows.items():
            print(f"{work:<10} {r['shape']:<20} {r['numfuse']:>11.2f} {r['numpy']:>10.2f} "
                  f"{r['numpy'] / r['numfuse']:>8.2f}x")


if __name__ == "__main__":
    main()
