#!/usr/bin/env python3
"""numpy's time (one thread) for the rows bench/probes/column_tiles.cpp times
(reductions that keep the innermost axis, every shape, axis set, op and
dtype there), the same lines: median wall clock of 9 calls after two warm-up
calls. sum of i32 gives i64, as numfuse's does.

    /usr/bin/python3 bench/probes/column_tiles_numpy.py [FILTER]
"""
import sys

import numpy as np

from inner_first_numpy import median_us


def rows():
    r3, tall, square, wide = (64, 257, 1021), (65521, 257), (4096, 4099), (257, 65521)
    few, narrow, r4 = (3, 5000011), (524287, 31), (43, 61, 37, 127)
    out = []
    for t in ("f32", "f64", "f16", "i32"):
        out += [("sum", t, r3, (0,)), ("sum", t, r3, (1,)), ("sum", t, r3, (0, 1)),
                ("sum", t, square, (0,))]
    out += [("sum", "f32", s, (0,)) for s in (tall, wide, few, narrow)]
    out += [("sum", "f32", r4, (1, 2)), ("sum", "f32", r4, (1,)), ("sum", "f32", r4, (2,)),
            ("sum", "f64", r4, (1, 2))]
    out += [("center", "f32", r3, (0,)), ("center", "f32", square, (0,)),
            ("center", "f32", r3, (0, 1)), ("var", "f32", r3, (0,)), ("var", "f32", square, (0,)),
            ("var", "f32", r3, (0, 1)), ("var", "f64", r3, (1,))]
    return out


def main():
    filt = sys.argv[1] if len(sys.argv) > 1 else ""
    rng = np.random.default_rng(7)
    types = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i32": np.int32}
    for op, t, shape, axes in rows():
        name = (f"{op} {t} {'x'.join(map(str, shape))} "
                f"({','.join(map(str, axes))})")
        if filt not in name:
            continue
        x = (rng.standard_normal(shape, dtype=np.float32) * 100).astype(types[t])
        if op == "sum":
            f = lambda: np.sum(x, axis=axes)
        elif op == "center":
            f = lambda: x - np.mean(x, axis=axes, keepdims=True)
        else:
            f = lambda: np.var(x, axis=axes)
        print(f"{name} {median_us(f, runs=9):.1f}", flush=True)


if __name__ == "__main__":
    main()
