"""Merges a run of bench/sweep_bench with the peers' runs of the same grid
(bench/peers.py --grid) into one comparison: bench/results/sweep.md (tables)
and sweep.png (a chart, where matplotlib is there).

    python3 bench/merge_sweep.py --ours sweep.jsonl --peers torch.jsonl jax.jsonl ... \\
        [--out bench/results] [--command CMD] [--header LINE]...

Rows are JSON lines among other lines, which are skipped. A case is a row's
work, operand, form, shape and dtype. Times are compared as the peers are
timed: numfuse's wall µs per call (back-to-back calls ended by a sync), not
its CUDA-event µs. The peers' share of copy is their GB/s over the copy
numfuse measured for the same bytes in its run (its GB/s over its of_copy).
Tables: by class of pattern and dtype, numfuse's share of copy (median,
worst, and how many cases reach 90% of it), each framework's time against
numfuse's (median over the class's cases both ran; above 1: numfuse is
faster) and the cases where numfuse is slower than the better peer; then the
cases where numfuse trails the best peer most.
"""
import argparse
import datetime
import json
import os
import statistics
import sys

OURS = "numfuse"
WORST = 20  # cases listed where numfuse trails most
BOUND = 0.9  # the share of its least bytes' copy time a row is to reach (issue 22)


def read_rows(paths):
    rows = []
    for path in paths or []:
        with open(path) as fh:
            for line in fh:
                if line.startswith("{"):
                    rows.append(json.loads(line))
    return rows


def case(r):
    return r["work"], r["operand"], r["form"], r["shape"], r["dtype"]


def rank(shape):
    return len([d for d in shape.strip("()").split(",") if d.strip()])


def row_class(r):
    """The class a row measures: its pattern, with the axes it reduces (the
    innermost ones, others, or all) or its broadcast operand's rank, and its
    dtype."""
    work, n = r["work"], rank(r["shape"])
    if work in ("reduce", "reduce-back"):
        axes = sorted(int(a) for a in r["operand"].split("axes ")[1].split(","))
        if len(axes) == n:
            where = "all axes"
        elif axes == list(range(n - len(axes), n)):
            where = "innermost axes"
        else:
            where = "leading or middle axes"
        return f"{work}, {where}, {r['dtype']}"
    if work == "broadcast":
        return f"broadcast, rank {n}, {r['dtype']}"
    return f"{work}, {r['dtype']}"


def wall_us(r):
    """numfuse's time per call as the peers take theirs: wall clock."""
    return r.get("wall_us", r["us"])


def pct(x):
    return f"{100 * x:.0f}%"


class Merged:
    def __init__(self, ours, peers):
        self.ours = {case(r): r for r in ours if r.get("fw") == OURS}
        self.peers = {}  # fw -> case -> row
        for r in peers:
            self.peers.setdefault(r["fw"], {})[case(r)] = r
        self.classes = {}  # class -> cases, in numfuse's order
        for c, r in self.ours.items():
            self.classes.setdefault(row_class(r), []).append(c)

    def copy_gbps(self, c):
        r = self.ours[c]
        return r["GBps"] / r["of_copy"]

    def ratio(self, fw, c):
        """The peer's time over numfuse's for case c, or None."""
        p = self.peers.get(fw, {}).get(c)
        return p["us"] / wall_us(self.ours[c]) if p else None

    def trails(self, c):
        """Whether the best peer that ran case c took less time than numfuse."""
        return any(m < 1 for m in (self.ratio(fw, c) for fw in self.peers) if m is not None)


def class_table(m):
    fws = sorted(m.peers)
    head = ["class", "cases", "numfuse: of copy, median", "worst", f"at {pct(BOUND)} or more"]
    head += [f"{fw} time / numfuse's" for fw in fws]
    head += ["numfuse slower than the best peer"] if fws else []
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * (len(head) - 2)]
    for cls, cases in m.classes.items():
        shares = [m.ours[c]["of_copy"] for c in cases]
        cells = [cls, str(len(cases)), pct(statistics.median(shares)), pct(min(shares)),
                 str(sum(x >= BOUND for x in shares))]
        for fw in fws:
            ratios = [x for x in (m.ratio(fw, c) for c in cases) if x is not None]
            cells.append(f"{statistics.median(ratios):.2f}" if ratios else "—")
        if fws:
            cells.append(str(sum(m.trails(c) for c in cases)))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def worst_table(m):
    """The cases where the best peer's time is furthest below numfuse's."""
    trailing = []
    for c in m.ours:
        best = min(((m.ratio(fw, c), fw) for fw in m.peers if m.ratio(fw, c)), default=None)
        if best and best[0] < 1:
            trailing.append((best[0], best[1], c))
    trailing.sort()
    lines = [
        "| work | operand | shape | dtype | numfuse wall µs | of copy | best peer | its µs |",
        "|---|---|---|---|---:|---:|---|---:|",
    ]
    for r, fw, c in trailing[:WORST]:
        ours = m.ours[c]
        lines.append(f"| {c[0]} | {c[1]} | {c[3]} | {c[4]} | {wall_us(ours):.2f} | "
                     f"{pct(ours['of_copy'])} | {fw} | {m.peers[fw][c]['us']:.2f} |")
    return lines, len(trailing)


def chart(m, path):
    """Each class's median share of copy, numfuse beside each peer, each
    from its wall time per call."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("merge_sweep: no matplotlib, no chart", file=sys.stderr)
        return False
    fws = [OURS] + sorted(m.peers)
    classes = list(m.classes)
    fig, ax = plt.subplots(figsize=(max(8, len(classes) * 0.9), 4.5))
    width = 0.8 / len(fws)
    for k, fw in enumerate(fws):
        values = []
        for cls in classes:
            shares = []
            for c in m.classes[cls]:
                r = m.ours[c] if fw == OURS else m.peers[fw].get(c)
                if r:  # numfuse's from its wall time, as the peers'
                    us = wall_us(r) if fw == OURS else r["us"]
                    shares.append(r["GBps"] * r["us"] / us / m.copy_gbps(c))
            values.append(100 * statistics.median(shares) if shares else 0)
        ax.bar([i + k * width for i in range(len(classes))], values, width, label=fw)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(classes))])
    ax.set_xticklabels(classes, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("% of copy bandwidth (median over the class)")
    ax.axhline(100, color="grey", linewidth=0.5)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ours", required=True, help="sweep_bench's rows")
    p.add_argument("--peers", nargs="*", default=[], help="peers.py --grid's rows")
    p.add_argument("--out", default="bench/results")
    p.add_argument("--command", help="the command that made the rows, for the record")
    p.add_argument("--header", action="append", default=[], help="a line above the tables")
    args = p.parse_args()
    ours, peers = read_rows([args.ours]), read_rows(args.peers)
    m = Merged(ours, peers)
    if not m.ours:
        print(f"merge_sweep: no numfuse rows in {args.ours}", file=sys.stderr)
        return 1
    device = None
    with open(args.ours) as fh:  # sweep_bench's first line: "device: NAME (ARCH, N SMs)"
        device = next((line[8:].strip() for line in fh if line.startswith("device: ")), None)
    os.makedirs(args.out, exist_ok=True)
    lines = ["# sweep_bench against its peers", ""]
    lines += [f"Merged {datetime.date.today()} by bench/merge_sweep.py"
              + (f", device {device}" if device else "") + "."]
    lines += args.header
    if args.command:
        lines += ["", "    " + args.command]
    lines += ["", "## By class", ""] + class_table(m)
    worst, trailing = worst_table(m)
    lines += ["", f"## Where numfuse trails the best peer ({trailing} cases; "
              f"the {min(trailing, WORST)} furthest)", ""] + worst
    with open(os.path.join(args.out, "sweep.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    chart(m, os.path.join(args.out, "sweep.png"))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
