"""Merges a run of fusion_bench with the peers' rows into one comparison:
bench/results/comparison.md (tables) and comparison.png (a chart).

    python3 bench/merge_results.py --ours numfuse.jsonl --peers peers.jsonl \\
        [--reference reference.jsonl] [--out bench/results] [--command CMD] [--header LINE]...

Each file holds JSON lines, among other lines that are skipped, so a log of
stdout serves as well as a file of rows. --ours: fusion_bench's rows.
--peers: bench/peers.py's rows. --reference: the reference peer_bench.py's
rows, compared with peers.py's in a table of their own; where peers.py has no
row for a framework and case, the reference's stands in, marked. The chart
needs matplotlib; without it only the tables are written.
"""
import argparse
import datetime
import json
import os
import sys

PEERS = ["torch", "compile", "cupy", "jax"]
OURS, UNFUSED, COPY = "numfuse", "numfuse-unfused", "cudaMemcpy"
DIFFERS = 0.10  # peers.py and the reference disagree when their times differ by more
# Why peers.py's and the reference's figures may differ (bench/peers.py says more).
KNOWN_DIFFERENCES = [
    "compile: peers.py specialises torch.compile to each shape (dynamic=False); the reference "
    "lets it compile a function's third and later shapes with dynamic shapes",
    "jax: peers.py's products are full f32 (Precision.HIGHEST) but for the \"tf32\" row; the "
    "reference's run JAX's default on this GPU, TF32, in its \"fp32\" product and its rbm_up",
    "rows of a few tens of µs are bound by the host's dispatch of each call, and vary between "
    "processes by tens of percent",
]


def read_rows(paths):
    rows = []
    for path in paths or []:
        with open(path) as fh:
            for line in fh:
                line = line.strip()
                if line.startswith("{"):
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError:
                        print(f"merge_results: {path}: not JSON: {line[:80]}", file=sys.stderr)
    return rows


def key(r):
    """A case: work, shape and note ("fp32"/"tf32" for products)."""
    return r["work"], r["shape"], r.get("note", "")


def timed(r):
    return "GBps" in r or "TFLOPs" in r


def fmt(x, digits=2):
    return "—" if x is None else f"{x:,.{digits}f}"


def label(case):
    work, shape, note = case
    return f"{work} {note}".strip(), shape


class Merged:
    """The rows by case and framework, and what the tables compute from them."""

    def __init__(self, ours, peers, reference):
        self.cases = []  # in the order fusion_bench ran them, then any only the peers have
        self.us = {}  # (case, fw) -> µs
        self.rate = {}  # case -> numfuse's (value, unit)
        self.stand_in = set()  # (case, fw) whose µs come from the reference
        self.copy_gbps = None
        for r in ours:
            if r.get("fw") == COPY:
                self.copy_gbps = r["GBps"]
            elif timed(r):
                self._add(r)
                if r["fw"] == OURS:
                    gbps = "GBps" in r
                    self.rate[key(r)] = (r["GBps"], "GB/s") if gbps else (r["TFLOPs"], "TFLOP/s")
        for r in peers:
            self._add(r)
        for r in reference:
            if (key(r), r["fw"]) not in self.us:
                self._add(r)
                self.stand_in.add((key(r), r["fw"]))
        listed = set(PEERS)
        others = {fw for (_, fw) in self.us} - listed - {OURS, UNFUSED}
        self.peers = PEERS + sorted(others)

    def _add(self, r):
        if key(r) not in self.cases:
            self.cases.append(key(r))
        self.us[key(r), r["fw"]] = r["us"]

    def best_peer(self, case):
        times = [(self.us[case, fw], fw) for fw in self.peers if (case, fw) in self.us]
        return min(times) if times else (None, None)

    def of_copy(self, case):
        value, unit = self.rate.get(case, (None, None))
        if unit != "GB/s" or not self.copy_gbps:
            return None
        return 100 * value / self.copy_gbps

    def speedup(self, case):
        """Best peer's time over numfuse's: above 1, numfuse is faster."""
        best, _ = self.best_peer(case)
        ours = self.us.get((case, OURS))
        return best / ours if best and ours else None


def comparison_table(m):
    head = ["work", "shape", "numfuse µs", "numfuse rate", "% of copy", "unfused µs"]
    head += [f"{fw} µs" for fw in m.peers] + ["best peer", "best peer µs / numfuse µs"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * (len(head) - 2)]
    for case in m.cases:
        value, unit = m.rate.get(case, (None, ""))
        peers = []
        for fw in m.peers:
            us = m.us.get((case, fw))
            peers.append(fmt(us) + (" †" if (case, fw) in m.stand_in else ""))
        _, best = m.best_peer(case)
        ratio = m.speedup(case)
        cells = [*label(case), fmt(m.us.get((case, OURS))), f"{fmt(value)} {unit}".strip()]
        of_copy = m.of_copy(case)
        cells += [f"{of_copy:.1f}%" if of_copy else "—", fmt(m.us.get((case, UNFUSED)))] + peers
        cells += [best or "—", f"**{ratio:.2f}**" if ratio else "—"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def reference_table(peers, reference):
    """peers.py's time over the reference's for each row both have."""
    theirs = {(key(r), r["fw"]): r["us"] for r in reference}
    lines = [
        "| fw | work | shape | peers.py µs | peer_bench.py µs | ratio | |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for r in peers:
        ref = theirs.get((key(r), r["fw"]))
        if ref is None:
            continue
        ratio = r["us"] / ref
        flag = f"⚠ differs by {abs(ratio - 1) * 100:.0f}%" if abs(ratio - 1) > DIFFERS else ""
        work, shape = label(key(r))
        cells = [r["fw"], work, shape, fmt(r["us"]), fmt(ref), f"{ratio:.2f}", flag]
        lines.append("| " + " | ".join(cells) + " |")
    return lines if len(lines) > 2 else []


def host_tables(ours):
    """numfuse's first use of each kernel, and host time per warm statement."""
    first = [r for r in ours if r.get("work", "").endswith("-first-use")]
    host = [r for r in ours if r.get("fw") == OURS and "us" in r and not timed(r)]
    lines = []
    if first:
        lines += [
            "| kernels of | shape | kernel | name | NVRTC ms (cold) | disk read ms "
            "| module load ms |",
            "|---|---|---:|---|---:|---:|---:|",
        ]
        for r in first:
            work = r["work"].removesuffix("-first-use")
            cells = [work, r["shape"], str(r["kernel"]), f"`{r['name']}`"]
            for field, digits in (("nvrtc_ms", 1), ("disk_read_ms", 3), ("load_ms", 3)):
                cells.append(fmt(r.get(field), digits))
            if "error" in r:
                cells[-1] += " (error: " + " ".join(r["error"].replace("|", "/").split())[:80] + ")"
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    if host:
        lines += ["| host, warm statement | shape | wall µs per call |", "|---|---|---:|"]
        lines += [f"| {r['work']} | {r['shape']} | {fmt(r['us'])} |" for r in host]
        lines.append("")
    for r in ours:
        if r.get("work") == "nvrtc-first-compile":
            lines.append(f"- NVRTC's first compile in the process, its start-up included: "
                         f"{r['nvrtc_ms']} ms.")
        if r.get("work") == "nvrtc":
            lines.append(f"- NVRTC in the timed part of the run (the first call of each "
                         f"statement, fused and unfused, the inputs' random fills included): "
                         f"{r['compiles']} compiles, {r['ms_per_compile']} ms each.")
    return lines


def chart(m, path):
    """Bars: each framework's speed relative to the best peer (best peer µs / its µs)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("merge_results: no matplotlib, no chart", file=sys.stderr)
        return False
    cases = [c for c in m.cases if m.best_peer(c)[0]]
    fws = [OURS, UNFUSED] + m.peers
    colors = {OURS: "#d62728", UNFUSED: "#ff9896", "torch": "#1f77b4", "compile": "#aec7e8",
              "cupy": "#2ca02c", "jax": "#9467bd"}
    width = 0.8 / len(fws)
    fig, ax = plt.subplots(figsize=(max(10, 0.9 * len(cases)), 6))
    for i, fw in enumerate(fws):
        xs, ys = [], []
        for j, case in enumerate(cases):
            us = m.us.get((case, fw))
            if us:
                xs.append(j - 0.4 + (i + 0.5) * width)
                ys.append(m.best_peer(case)[0] / us)
        ax.bar(xs, ys, width, label=fw, color=colors.get(fw))
        if fw == OURS:
            for x, y in zip(xs, ys):
                ax.annotate(f"{y:.2f}", (x, y), xytext=(0, 2), textcoords="offset points",
                            ha="center", fontsize=7)
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_yscale("log")
    ax.set_ylabel("speed relative to the best peer (best peer µs / µs; log)")
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels(["\n".join(label(c)) for c in cases], rotation=60, ha="right", fontsize=8)
    ax.set_title("numfuse and its peers: speed relative to the fastest peer per case "
                 "(higher is faster)")
    ax.legend(ncol=len(fws), fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.35))
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def device_name(ours):
    for r in ours:
        if r.get("work") == "device":
            return f"{r['name']} ({r['arch']}, {r['sm_count']} SMs)"
    return "unknown device"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ours", nargs="*", default=[])
    p.add_argument("--peers", nargs="*", default=[])
    p.add_argument("--reference", nargs="*", default=[])
    p.add_argument("--out", default="bench/results")
    p.add_argument("--command", default="", help="the command that made the rows")
    p.add_argument("--header", action="append", default=[], help="a line for the header")
    args = p.parse_args()

    ours, peers, reference = read_rows(args.ours), read_rows(args.peers), read_rows(args.reference)
    m = Merged(ours, peers, reference)
    os.makedirs(args.out, exist_ok=True)
    md = [
        "# numfuse against its peers",
        "",
        f"- device: {device_name(ours)}",
        f"- date: {datetime.date.today().isoformat()}",
    ]
    if args.command:
        md.append(f"- command: `{args.command}`")
    md += [f"- {h}" for h in args.header]
    md += [
        f"- copy ceiling: cudaMemcpy device to device, 8192×8192 f32, {fmt(m.copy_gbps, 1)} GB/s "
        "(read + write); \"% of copy\" is numfuse's GB/s over it",
        "- numfuse: CUDA-event time, median of 9 batches after warm-up (fusion_bench); peers: wall "
        "clock of batches of back-to-back calls ended by a device sync, median of 5 (3 for the "
        "product), after warm-up (peers.py, as peer_bench.py). GB/s count each input read once and "
        "each output written once; TFLOP/s count 2·m·k·n",
        "- last column: the best peer's µs over numfuse's; above 1, numfuse is faster",
    ]
    if m.stand_in:
        md.append("- † peers.py gave no row for this framework and case: the reference "
                  "peer_bench.py's µs")
    md += ["", "## Device time per call", ""] + comparison_table(m)
    ref = reference_table(peers, reference)
    if ref:
        md += [
            "",
            "## peers.py against the reference peer_bench.py (same device, same run)",
            "",
            f"Ratio: peers.py µs / peer_bench.py µs; ⚠ where they differ by more than "
            f"{DIFFERS * 100:.0f}%. Known differences:",
            "",
        ]
        md += [f"- {d}" for d in KNOWN_DIFFERENCES] + [""] + ref
    host = host_tables(ours)
    if host:
        md += ["", "## numfuse: a kernel's first use, and the host's time per warm statement", ""]
        md += host
    if chart(m, os.path.join(args.out, "comparison.png")):
        md += ["", "![speed relative to the best peer](comparison.png)"]
    with open(os.path.join(args.out, "comparison.md"), "w") as fh:
        fh.write("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
