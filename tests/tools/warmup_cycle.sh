#!/usr/bin/env bash
# The kernel-cache warm-up, end to end and without a GPU: record the kernels
# of the layer-norm example on the CPU backend, warm a fresh cache for sm_90
# with `numfuse warmup`, and check it with `numfuse cache verify`, which must
# then find and remove an entry corrupted on purpose.
#
#   warmup_cycle.sh NUMFUSE_TOOL LAYERNORM_EXAMPLE
set -euo pipefail
tool=$1
example=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/checks.sh"
cache=(--cache-dir "$work/cache")

echo "== record the example's kernels on the CPU backend, for sm_90"
NF_DEVICE=cpu NF_TARGET_ARCH=sm_90 NF_KERNEL_MANIFEST="$work/manifest" "$example" | tee "$work/example.log"
expect "$work/example.log" '^check: .*: ok$'
kernels=$(grep -c '^numfuse-kernel 2$' "$work/manifest")
# randn(...) * 3 + 5 is one fused kernel; the layer norm is one reduction.
[[ $kernels -ge 2 ]] || fail "the manifest lists $kernels kernels, expected the fill and the layer norm"
[[ $(grep -c '^arch: sm_90$' "$work/manifest") -eq $kernels ]] || fail "records not all for sm_90"
expect "$work/manifest" '^name: nf_reduce_'

echo "== warm a fresh cache for sm_90"
"$tool" warmup "$work/manifest" --arch sm_90 -j 2 "${cache[@]}" | tee "$work/warmup.log"
expect "$work/warmup.log" "^  compiled +$kernels$"
expect "$work/warmup.log" '^  failed +0$'
[[ $(find "$work/cache" -name '*.nfk' | wc -l) -eq $kernels ]] || fail "expected $kernels entries"

echo "== verify: every entry valid"
"$tool" cache verify "${cache[@]}" | tee "$work/verify.log"
expect "$work/verify.log" "$kernels valid, 0 corrupt"

echo "== corrupt one entry; verify finds and removes it"
victim=$(find "$work/cache" -name '*.nfk' | sort | head -1)
key=$(basename "$victim" .nfk)
middle=$(($(stat -c %s "$victim") / 2))
byte=$(od -An -tu1 -j "$middle" -N1 "$victim" | tr -d ' ')
printf "\\$(printf %o $((byte ^ 0x10)))" | dd of="$victim" bs=1 seek="$middle" conv=notrunc status=none
"$tool" cache verify "${cache[@]}" | tee "$work/verify.log"
expect "$work/verify.log" "$((kernels - 1)) valid, 1 corrupt"
expect "$work/verify.log" "removed $key"
[[ ! -e $victim ]] || fail "the corrupt entry $victim is still there"

echo "== warming again compiles only what is missing"
"$tool" warmup "$work/manifest" --arch sm_90 --quiet "${cache[@]}" | tee "$work/warmup.log"
expect "$work/warmup.log" '^  compiled +1$'
expect "$work/warmup.log" "^  already cached +$((kernels - 1))$"

echo "== list, stats and inspect name the kernels"
"$tool" cache list "${cache[@]}" | tee "$work/list.log"
reduce_key=$(awk '/nf_reduce_/ {print $1; exit}' "$work/list.log")
[[ -n $reduce_key ]] || fail "cache list shows no reduction kernel"
"$tool" cache stats "${cache[@]}" | tee "$work/stats.log"
expect "$work/stats.log" "entries +$kernels \\($kernels cubin, 0 PTX\\)"
"$tool" inspect "${reduce_key:0:8}" "${cache[@]}" >"$work/source.cu"
expect "$work/source.cu" '^// numfuse reduction kernel nf_reduce_'
"$tool" inspect "$reduce_key" --ptx "${cache[@]}" >"$work/kernel.ptx"
expect "$work/kernel.ptx" '^\.target sm_90'

echo "== a statement in a file"
printf 'A: f32[1024, 4096]\nA = reciprocal(sqrt(var(A, 1) + 1e-5)) * (A - mean(A, 1))\n' >"$work/ln.nf"
"$tool" inspect --expr-file "$work/ln.nf" --plan >"$work/ln.cu"
expect "$work/ln.cu" '^total: 1 steps'
expect "$work/ln.cu" '^// numfuse reduction kernel nf_reduce_'
printf 'A: f32[4, 5]\nB: f32[3]\nA + B\n' >"$work/bad.nf"
if "$tool" inspect --expr-file "$work/bad.nf" 2>"$work/bad.log"; then fail "a bad statement passed"; fi
expect "$work/bad.log" 'bad.nf:3: .*\(4, 5\) and \(3,\)'

echo "== bad input is refused and changes nothing"
before=$(ls "$work/cache")
set +e
"$tool" warmup "$work/manifest" --arch sm90 "${cache[@]}" 2>"$work/bad.log"
status=$?
set -e
[[ $status -eq 2 ]] || fail "--arch sm90 exited with $status, expected 2"
expect "$work/bad.log" '"sm90" is not a GPU architecture'
head -c 100 "$work/manifest" >"$work/cut"
if "$tool" warmup "$work/cut" "${cache[@]}" 2>"$work/bad.log"; then fail "a cut manifest passed"; fi
expect "$work/bad.log" 'cut:[0-9]+: not a numfuse kernel manifest'
[[ $(ls "$work/cache") == "$before" ]] || fail "a refused command changed the cache"

echo "== --help on every subcommand"
for command in info warmup "cache list" "cache stats" "cache verify" "cache clear" inspect; do
  # shellcheck disable=SC2086
  "$tool" $command --help | grep -q "^usage: numfuse $command" || fail "numfuse $command --help"
done

echo "== clear"
"$tool" cache clear "${cache[@]}" | tee "$work/clear.log"
expect "$work/clear.log" "^removed $kernels files"
echo "ok"
