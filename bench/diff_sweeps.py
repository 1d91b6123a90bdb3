"""Compares two runs of bench/sweep_bench on one device, case by case: a
build against another (main and a change), or one build run twice (the
noise). For each class of pattern and dtype (merge_sweep.row_class): the
cases both ran, the median of B's wall time over A's, and the cases faster
or slower by more than the threshold; then every such case, fastest gain
first.

    python3 bench/diff_sweeps.py A.jsonl B.jsonl [--threshold 0.03] [--names main change]

Times are wall µs per call, as merge_sweep compares them with the peers.
Rows missing from either run are counted, not compared.
"""
import argparse
import statistics
import sys

from merge_sweep import case, read_rows, row_class, wall_us


def compare(a_rows, b_rows):
    a = {case(r): r for r in a_rows}
    b = {case(r): r for r in b_rows}
    both = [k for k in a if k in b]
    return [(wall_us(b[k]) / wall_us(a[k]), a[k], b[k]) for k in both], len(a), len(b)


def report(pairs, n_a, n_b, threshold, names):
    out = []
    out.append(f"{len(pairs)} cases in both runs ({n_a} in {names[0]}, {n_b} in {names[1]}); "
               f"{names[1]} wall time over {names[0]}'s, threshold {threshold:.0%}")
    out.append("")
    out.append("| class | cases | median | faster | slower |")
    out.append("|---|---:|---:|---:|---:|")
    classes = {}
    for p in pairs:
        classes.setdefault(row_class(p[1]), []).append(p[0])
    for name in sorted(classes):
        ratios = classes[name]
        faster = sum(x < 1 - threshold for x in ratios)
        slower = sum(x > 1 + threshold for x in ratios)
        out.append(f"| {name} | {len(ratios)} | {statistics.median(ratios):.3f} | "
                   f"{faster} | {slower} |")
    ratios = [p[0] for p in pairs]
    if ratios:
        out.append(f"| all | {len(ratios)} | {statistics.median(ratios):.3f} | "
                   f"{sum(x < 1 - threshold for x in ratios)} | "
                   f"{sum(x > 1 + threshold for x in ratios)} |")
    changed = sorted((p for p in pairs if abs(p[0] - 1) > threshold), key=lambda p: p[0])
    if changed:
        out.append("")
        out.append(f"| ratio | case | {names[0]} µs (of copy) | {names[1]} µs (of copy) |")
        out.append("|---:|---|---:|---:|")
        for x, ra, rb in changed:
            what = f"{ra['operand']}, {ra['shape']} {ra['dtype']} ({ra['form']})"
            out.append(f"| {x:.2f} | {what} | {wall_us(ra):.1f} ({ra['of_copy']:.0%}) | "
                       f"{wall_us(rb):.1f} ({rb['of_copy']:.0%}) |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--threshold", type=float, default=0.03)
    ap.add_argument("--names", nargs=2, default=["A", "B"])
    args = ap.parse_args()
    pairs, n_a, n_b = compare(read_rows([args.a]), read_rows([args.b]))
    if not pairs:
        sys.exit(f"diff_sweeps.py: no case is in both {args.a} and {args.b}")
    print(report(pairs, n_a, n_b, args.threshold, args.names))


if __name__ == "__main__":
    main()
