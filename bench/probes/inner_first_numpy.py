#!/usr/bin/env python3
"""numpy's time for the sums that bench/probes/inner_first.cpp times, for the
CPU backend's side of that probe (`inner_first --cpu`) on the same cores.

Reads the probe's "dtype dims axes bytes work" lines (f32 `reduce` rows) and
prints, per row, the median wall clock of 7 calls of x.sum(axis=axes) after
two warm-up calls:

    grep '^f32 .* reduce$' cases.txt > f32.txt
    NF_DEVICE=cpu /tmp/inner_first --cpu < f32.txt
    /usr/bin/python3 bench/probes/inner_first_numpy.py f32.txt
"""
import statistics
import sys
import time

import numpy as np


def median_us(f, runs=7):
    f()
    f()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def main():
    rng = np.random.default_rng(0)
    with open(sys.argv[1]) as fh:
        for line in fh:
            dtype, dims, axes, _, work = line.split()
            if dtype != "f32" or work != "reduce":
                continue
            shape = tuple(int(d) for d in dims.split(","))
            reduced = tuple(int(a) for a in axes.split(","))
            x = rng.standard_normal(shape, dtype=np.float32)
            us = median_us(lambda: x.sum(axis=reduced))
            print(f"{dims:16} {axes:6} numpy {us:9.0f} us")


if __name__ == "__main__":
    main()
