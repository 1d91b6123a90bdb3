#!/usr/bin/env bash
# sweep_bench --list --signatures names each row's kernels (signatures and
# source hashes), --cases takes only a file's rows, and bench/changed_cases.py
# finds the rows whose kernels differ between two lists. No GPU needed.
#
#   sweep_cases.sh SWEEP_BENCH BENCH_DIR
set -euo pipefail
source "$(dirname "$0")/checks.sh"
sweep=$1 bench=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
grid=(--patterns reduce,reduce-back --sizes 1M --ranks 3 --dtypes f16)

"$sweep" --list --signatures "${grid[@]}" >"$dir/all.jsonl"
rows=$(wc -l <"$dir/all.jsonl")
((rows > 10)) || fail "the grid listed $rows rows"
[[ $(grep -c '"signatures":\["reduce;' "$dir/all.jsonl") == "$rows" ]] ||
  fail "a listed row names no reduction kernel:"$'\n'"$(grep -v '"signatures":\["reduce;' "$dir/all.jsonl")"

# Three rows of the grid, and only those, taken by --cases.
sed -n '2p;5p;9p' "$dir/all.jsonl" >"$dir/three.jsonl"
"$sweep" --list --signatures --cases "$dir/three.jsonl" "${grid[@]}" >"$dir/taken.jsonl"
cmp -s "$dir/three.jsonl" "$dir/taken.jsonl" ||
  fail "--cases took other rows:"$'\n'"$(diff "$dir/three.jsonl" "$dir/taken.jsonl")"

# --signatures names kernels of listed rows only; a cases file must exist.
if "$sweep" --signatures "${grid[@]}" 2>"$dir/err"; then fail "--signatures without --list ran"; fi
expect "$dir/err" "give --list"
if "$sweep" --list --cases "$dir/none.jsonl" 2>"$dir/err"; then fail "a missing cases file was taken"; fi
expect "$dir/err" "cannot read the cases file"

# Another build planning row 5 otherwise: changed_cases.py names that row.
sed '5s/;tr[0-9]*;/;tr2048;/' "$dir/all.jsonl" >"$dir/other.jsonl"
python3 "$bench/changed_cases.py" "$dir/all.jsonl" "$dir/other.jsonl" >"$dir/changed.jsonl"
cmp -s "$dir/changed.jsonl" <(sed -n '5p' "$dir/all.jsonl") ||
  fail "changed_cases.py named:"$'\n'"$(cat "$dir/changed.jsonl")"
# A row whose kernel's source differs under the same signature (a change in
# how a walk writes its code): named too.
[[ $(grep -c '"sources":\["[0-9a-f]\{32\}"' "$dir/all.jsonl") == "$rows" ]] ||
  fail "a listed row has no hash of its kernels' sources"
sed -E '7s/"sources":\["[0-9a-f]/"sources":["g/' "$dir/all.jsonl" >"$dir/recoded.jsonl"
python3 "$bench/changed_cases.py" "$dir/all.jsonl" "$dir/recoded.jsonl" >"$dir/changed.jsonl"
cmp -s "$dir/changed.jsonl" <(sed -n '7p' "$dir/all.jsonl") ||
  fail "changed_cases.py named, for a source changed alone:"$'\n'"$(cat "$dir/changed.jsonl")"
python3 "$bench/changed_cases.py" "$dir/all.jsonl" "$dir/all.jsonl" >"$dir/changed.jsonl"
[[ ! -s $dir/changed.jsonl ]] || fail "changed_cases.py found changes in one list against itself"
echo "sweep_bench lists kernels and takes cases: ok"
