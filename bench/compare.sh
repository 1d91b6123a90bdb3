#!/usr/bin/env bash
# numfuse against its peers in one command, on a GPU machine: builds
# fusion_bench (Release), runs it, runs bench/peers.py and the reference
# peer_bench.py for each peer framework, and merges every row into
# OUT/comparison.md and OUT/comparison.png (bench/merge_results.py).
#
#   bench/compare.sh [OUT]        OUT defaults to bench/results
#
# Each part's output goes to a log in OUT (build.log, fusion_bench.log,
# peers-<fw>.log, reference-<fw>.log, merge.log), its rows also to
# OUT/*.jsonl, and how long it took to OUT/timings.txt and the table's header.
#
# Environment:
#   PEER_BENCH  the reference peer_bench.py (default .wt/peer_bench.py, a copy
#               in an ignored folder of the checkout); absent: no reference run
#   BUILD_DIR   build directory (default /tmp/numfuse-bench-build)
#   FRAMEWORKS  the peers (default "torch compile cupy jax")
#   BUDGET_S    seconds the whole script may take (default 570). Each part
#               gets at most what is left of it, so that the merge always
#               runs, and the reference runs with --quick when its full run,
#               estimated from peers.py's, would not fit
#   REF_QUICK   auto (default), 1 (always --quick) or 0 (never)
#   QUICK       1: fusion_bench and peers.py with --quick as well
# A caller may set up the build environment; otherwise .deps/env.sh is
# sourced where the checkout has one.
set -u
out=
if [ $# -gt 0 ]; then
  mkdir -p "$1" && out=$(cd "$1" && pwd) || exit 1
fi
cd "$(dirname "$0")/.." || exit 1
if [ -z "$out" ]; then
  mkdir -p bench/results && out=$PWD/bench/results || exit 1
fi
command="bench/compare.sh${*:+ $*}"
peer_bench=${PEER_BENCH:-.wt/peer_bench.py}
build_dir=${BUILD_DIR:-/tmp/numfuse-bench-build}
frameworks=${FRAMEWORKS:-torch compile cupy jax}
budget=${BUDGET_S:-570}
ref_quick=${REF_QUICK:-auto}
quick=()
[ "${QUICK:-0}" = 1 ] && quick=(--quick)
export PYTHONUNBUFFERED=1

if [ -f .deps/env.sh ] && [[ "${CMAKE_PREFIX_PATH:-}" != *"/.deps/root/"* ]]; then
  # shellcheck source=/dev/null
  source .deps/env.sh
fi

rm -f "$out"/*.jsonl "$out"/*.log "$out"/timings.txt
start=$SECONDS
merge_reserve=30  # seconds kept for the merge
headers=()

# part NAME MAX_SECONDS LOG COMMAND...: runs COMMAND with its output in LOG,
# stopped after MAX_SECONDS or when the budget (less the merge's reserve)
# runs out, whichever comes first; records how long it took.
part() {
  local name=$1 max=$2 log=$3
  shift 3
  local limit=$((budget - merge_reserve - (SECONDS - start)))
  ((limit > max)) && limit=$max
  if ((limit < 5)); then
    echo "$name: skipped, no time left" | tee -a "$out/timings.txt"
    return 1
  fi
  local t0=$SECONDS rc
  timeout -k 5 "$limit" "$@" >"$log" 2>&1
  rc=$?
  local line="$name: $((SECONDS - t0)) s"
  ((rc == 124 || rc == 137)) && line+=" (stopped at its limit of $limit s)"
  ((rc != 0 && rc != 124 && rc != 137)) && line+=" (exit $rc)"
  echo "$line" | tee -a "$out/timings.txt"
  return $rc
}

build="cmake -S . -B $(printf %q "$build_dir") -DCMAKE_BUILD_TYPE=Release -DNF_BUILD_TESTS=OFF \
  && cmake --build $(printf %q "$build_dir") -j$(nproc) --target fusion_bench"
if part build 300 "$out/build.log" bash -c "$build"; then
  part fusion_bench 240 "$out/fusion_bench.log" \
    "$build_dir/bench/fusion_bench" "${quick[@]}" --json "$out/numfuse.jsonl"
else
  tail -n 30 "$out/build.log"
fi

peers_start=$SECONDS
for fw in $frameworks; do
  part "peers.py $fw" 200 "$out/peers-$fw.log" \
    python3 bench/peers.py --fw "$fw" "${quick[@]}" --out "$out/peers.jsonl"
done
peers_s=$((SECONDS - peers_start))

if [ -f "$peer_bench" ]; then
  left=$((budget - merge_reserve - (SECONDS - start)))
  ref_args=()
  ref_header="the reference $peer_bench ran in full"
  if [ "$ref_quick" = 1 ] || { [ "$ref_quick" = auto ] && ((peers_s + 20 > left)); }; then
    ref_args=(--quick)
    ref_header="the reference $peer_bench ran with --quick (layernorm and softmax on two \
shapes): its full run, about ${peers_s} s as peers.py's, did not fit the ${left} s left"
  fi
  headers+=(--header "$ref_header")
  for fw in $frameworks; do
    part "peer_bench.py $fw${ref_args:+ --quick}" 200 "$out/reference-$fw.log" \
      python3 "$peer_bench" --fw "$fw" "${ref_args[@]}" --out "$out/reference.jsonl"
  done
else
  echo "no reference run: $peer_bench not found" | tee -a "$out/timings.txt"
fi

if command -v nvidia-smi >/dev/null; then
  headers+=(--header "driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)")
fi
headers+=(--header "parts: $(paste -sd ';' "$out/timings.txt" | sed 's/;/; /g'); \
total before the merge $((SECONDS - start)) s")
# The rows are read from the logs, which have each row as soon as it is
# measured, also those of a part stopped at its limit.
files() { for f in "$@"; do [ -f "$f" ] && echo "$f"; done; }
mapfile -t ours < <(files "$out/fusion_bench.log")
mapfile -t peers < <(files "$out"/peers-*.log)
mapfile -t reference < <(files "$out"/reference-*.log)
python3 bench/merge_results.py --ours "${ours[@]}" --peers "${peers[@]}" \
  --reference "${reference[@]}" --out "$out" --command "$command" "${headers[@]}" \
  >"$out/merge.log" 2>&1
rc=$?
echo "merge: exit $rc; total $((SECONDS - start)) s" | tee -a "$out/timings.txt"
cat "$out/comparison.md" 2>/dev/null
exit $rc
