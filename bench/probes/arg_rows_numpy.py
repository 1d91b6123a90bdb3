#!/usr/bin/env python3
"""numpy's time for the rows bench/probes/arg_rows.cpp times (argmax and
argmin over the innermost axis, every dtype and width there), the same
lines: median wall clock of 7 calls after two warm-up calls.

    /usr/bin/python3 bench/probes/arg_rows_numpy.py
"""
import numpy as np

from inner_first_numpy import median_us


def main():
    rng = np.random.default_rng(5)
    elements = 1 << 24
    for name, dtype in (("f32", np.float32), ("f64", np.float64), ("i32", np.int32),
                        ("i64", np.int64)):
        for width in (5, 33, 100, 1021, 4099, 65537):
            rows = elements // width
            x = (rng.standard_normal((rows, width)) * 1000).astype(dtype)
            for op in ("argmax", "argmin"):
                f = getattr(x, op)
                print(f"{op} {name} ({rows}, {width}) {median_us(lambda: f(1)):.1f}", flush=True)


if __name__ == "__main__":
    main()
