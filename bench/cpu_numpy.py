#!/usr/bin/env python3
"""numpy on the workloads of cpu_bench.cpp, and the two side by side.

    python3 bench/cpu_numpy.py [--quick] [--numfuse PATH/TO/cpu_bench] [--rounds N]

Times each workload as cpu_bench does (two warm-up calls, then the median
wall clock of at least 5-10 calls and about a second), prints one JSON line
per workload, and with --numfuse runs cpu_bench (NF_DEVICE=cpu) first and
ends with a table of both and numfuse's speed-up. With --rounds N the two
take turns N times and the table holds each one's median over the rounds:
a shared host's load drifts by several percent within minutes, and turns
spread that drift over both.
"""
import argparse
import json
import os
import statistics
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
    return out + class_sample(rng, quick)


def class_sample(rng, quick):
    """The class sample of cpu_bench.cpp: the same names, shapes and statements."""
    m2 = (256, 259) if quick else (4096, 4099)
    m3 = (8, 33, 127) if quick else (64, 257, 1021)
    m4 = (4, 9, 7, 11) if quick else (43, 61, 37, 127)
    sq = 509 if quick else 4093
    f32 = np.float32

    def randn(shape, dtype=f32):
        return rng.standard_normal(shape, dtype=f32).astype(dtype)

    x, x3, s = randn(m2), randn(m3), randn((sq, sq))
    x4, x3h = randn(m4), randn(m3, np.float16)
    row, col = randn((1, m2[1])), randn((m2[0], 1))
    last, middle = randn((1, 1, m3[2])), randn((1, m3[1], 1))
    xd, xh = rng.standard_normal(m2), randn(m2, np.float16)
    xi = (rng.random(m2, dtype=f32) * 1000).astype(np.int32)
    xb = (rng.random(m2, dtype=f32) * 255).astype(np.uint8)
    eps = f32(1e-5)

    def softmax():
        e = np.exp(x - x.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    gm, gk = (200, 400) if quick else (2000, 4000)
    ad, bd = rng.standard_normal((gm, gk)), rng.standard_normal((gk, gm))
    tk, tm, tn = (199, 301, 203) if quick else (1999, 3001, 2003)
    at, bt = randn((tk, tm)), randn((tk, tn))
    batch = 16 if quick else 256
    ab, bb = randn((batch, 64, 128)), randn((batch, 128, 64))

    shape = lambda t: "(" + ", ".join(map(str, t)) + ")"
    return [(work, shape(dims), f, 10) for work, dims, f in [
        ("add_row", m2, lambda: x + row),
        ("add_col", m2, lambda: x + col),
        ("bias_relu_3d", m3, lambda: np.maximum(x3 + last, 0) * f32(2)),
        ("middle_3d", m3, lambda: x3 * middle),
        ("transpose_add", (sq, sq), lambda: s + s.T),
        ("chain_f64", m2, lambda: np.exp(-xd * xd) * 0.5 + xd),
        ("chain_f16", m2, lambda: np.exp(-xh * xh) * np.float16(0.5) + xh),
        ("max_i32", m2, lambda: np.maximum(xi * 3, xi + 7)),
        ("u8_to_f32", m2, lambda: xb.astype(f32) * f32(1 / 255)),
        ("sum_axis0", m3, lambda: x3.sum(0, keepdims=True)),
        ("sum_axis1", m3, lambda: x3.sum(1, keepdims=True)),
        ("sum_axis2", m3, lambda: x3.sum(2, keepdims=True)),
        ("sum_axes02", m3, lambda: x3.sum((0, 2), keepdims=True)),
        ("sum_all", m3, lambda: x3.sum()),
        ("sum_axes01", m3, lambda: x3.sum((0, 1), keepdims=True)),
        ("sum_axes13_4d", m4, lambda: x4.sum((1, 3), keepdims=True)),
        ("sum_axes02_f16", m3, lambda: x3h.sum((0, 2), keepdims=True)),
        ("center_axes02", m3, lambda: x3 - x3.mean((0, 2), keepdims=True)),
        ("var_axes01", m3, lambda: x3.var((0, 1), keepdims=True)),
        ("max_axis1", m3, lambda: x3.max(1, keepdims=True)),
        ("argmax_axis2", m3, lambda: x3.argmax(2, keepdims=True)),
        ("normalize_cols", m2,
         lambda: (x - x.mean(0, keepdims=True)) * np.reciprocal(np.sqrt(x.var(0, keepdims=True) + eps))),
        ("softmax_rows", m2, softmax),
        ("gemm_f64", (gm, gk, gm), lambda: ad @ bd),
        ("gemm_t_odd", (tm, tk, tn), lambda: at.T @ bt),
        ("matmul_batched", (batch, 64, 128, 64), lambda: ab @ bb),
    ]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--numfuse", help="path of cpu_bench, run first and compared")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--work", help="only these workloads, comma-separated")
    args = ap.parse_args()
    rows = {}
    work_list = workloads(args.quick)
    if args.work:
        names = set(args.work.split(","))
        work_list = [w for w in work_list if w[0] in names]
    for r in range(args.rounds):
        if args.numfuse:
            cmd = [args.numfuse] + (["--quick"] if args.quick else []) + (
                ["--work", args.work] if args.work else [])
            env = dict(os.environ, NF_DEVICE="cpu")
            for line in subprocess.run(cmd, env=env, check=True, capture_output=True,
                                       text=True).stdout.splitlines():
                print(line, flush=True)
                row = json.loads(line)
                if "work" in row:
                    rows.setdefault(row["work"], {"shape": row["shape"]}).setdefault(
                        "numfuse", []).append(row["ms"])
        for work, shape, f, runs in work_list:
            ms = median_ms(f, runs)
            print(json.dumps({"work": work, "shape": shape, "impl": "numpy", "ms": round(ms, 3),
                              "round": r}), flush=True)
            rows.setdefault(work, {"shape": shape}).setdefault("numpy", []).append(ms)
    if args.numfuse:
        print(f"\n{'work':<15} {'shape':<22} {'numfuse ms':>11} {'numpy ms':>10} {'speed-up':>9}")
        for work, r in rows.items():
            nf_ms, np_ms = statistics.median(r["numfuse"]), statistics.median(r["numpy"])
            print(f"{work:<15} {r['shape']:<22} {nf_ms:>11.2f} {np_ms:>10.2f} "
                  f"{np_ms / nf_ms:>8.2f}x")


if __name__ == "__main__":
    main()
