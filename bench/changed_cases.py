"""The rows of the sweep that two builds plan differently: their kernels'
signatures (`sweep_bench --list --signatures`, what each kernel's source
depends on) or, where both lists have them, the hashes of the kernels' sources
differ, or one build lists the row and the other does not. Prints A's line of
each such row, for `sweep_bench --cases` to time only those.

    build-a/bench/sweep_bench --list --signatures [grid] > a.jsonl
    build-b/bench/sweep_bench --list --signatures [grid] > b.jsonl
    python3 bench/changed_cases.py a.jsonl b.jsonl > cases.jsonl

`--signatures-only` compares the signatures alone: a change to the runtime
prelude, which every kernel's source holds, changes every source's hash.
"""
import argparse
import json
import sys

from merge_sweep import case


def signed_rows(path):
    rows = {}
    with open(path) as fh:
        for line in fh:
            if line.startswith("{"):
                r = json.loads(line)
                if "signatures" not in r:
                    sys.exit(f"changed_cases: {path} has rows without signatures "
                             "(list them with sweep_bench --list --signatures)")
                rows[case(r)] = (line.rstrip("\n"), (r["signatures"], r.get("sources")))
    return rows


def differ(x, y, signatures_only):
    """Whether two rows' kernels differ: their signatures, or their sources'
    hashes where both lists have them (unless `signatures_only`)."""
    (sig_x, src_x), (sig_y, src_y) = x, y
    if signatures_only or src_x is None or src_y is None:
        return sig_x != sig_y
    return sig_x != sig_y or src_x != src_y


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--signatures-only", action="store_true",
                    help="compare the kernels' signatures, not their sources' hashes")
    args = ap.parse_args()
    a, b = signed_rows(args.a), signed_rows(args.b)
    changed = [k for k in a if k not in b or differ(a[k][1], b[k][1], args.signatures_only)]
    for k in changed:
        print(a[k][0])
    only_b = [k for k in b if k not in a]
    print(f"changed_cases: {len(changed)} of {len(a)} rows of {args.a} planned otherwise in "
          f"{args.b}" + (f"; {len(only_b)} rows only in {args.b}" if only_b else ""), file=sys.stderr)


if __name__ == "__main__":
    main()
