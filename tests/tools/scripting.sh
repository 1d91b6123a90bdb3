#!/usr/bin/env bash
# The numfuse tool as scripts use it: a manifest that several runs record
# into keeps one record per kernel and the device runtime once; warmup prints
# plain progress lines where stdout is not a terminal; inspect --expr-file
# plans every statement of a file under its line number; bad arguments give
# one line and a non-zero exit; `numfuse info` and the README list the same
# NF_* variables, and a value numfuse does not allow is refused by name.
#
#   scripting.sh NUMFUSE_TOOL LAYERNORM_EXAMPLE README
set -euo pipefail
tool=$1
example=$2
readme=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/checks.sh"
# refused STATUS COMMAND...: the command exits with STATUS and writes one line
# on stderr, which is left in $work/err.
refused() {
  local want=$1
  shift
  set +e
  "$@" >/dev/null 2>"$work/err"
  local got=$?
  set -e
  [[ $got -eq $want ]] || fail "'$*' exited with $got, expected $want"
  [[ $(wc -l <"$work/err") -eq 1 ]] || fail "'$*' wrote not one line on stderr:"$'\n'"$(cat "$work/err")"
}
record() {
  NF_DEVICE=cpu NF_TARGET_ARCH=sm_90 NF_KERNEL_MANIFEST="$work/manifest" "$example" >/dev/null
}

echo "== three runs record into one manifest: one record per kernel, the runtime once"
record
kernels=$(grep -c '^numfuse-kernel 2$' "$work/manifest")
size=$(stat -c %s "$work/manifest")
record
record
[[ $(grep -c '^numfuse-kernel 2$' "$work/manifest") -eq $kernels ]] || fail "kernels recorded again"
[[ $(stat -c %s "$work/manifest") -eq $size ]] || fail "the manifest grew on runs that add nothing"
[[ $(grep -c '^numfuse-runtime 2$' "$work/manifest") -eq 1 ]] || fail "the runtime is not stored once"
runtime=$(awk '/^numfuse-runtime 2$/ {getline; getline; print $2; exit}' "$work/manifest")
((size < runtime + kernels * 20000)) || fail "a $size-byte manifest for $kernels kernels and a $runtime-byte runtime"

echo "== warmup prints progress lines where stdout is a pipe"
"$tool" warmup "$work/manifest" --arch sm_90 -j 1 --progress-every 0.02 --cache-dir "$work/cache" |
  cat >"$work/warmup.log"
cat "$work/warmup.log"
expect "$work/warmup.log" \
  "^warmup: [0-9]+/$kernels kernels \\(compiled [0-9]+, cached [0-9]+, failed 0\\), [0-9.]+/s, ETA ([0-9hms]+|unknown)$"
expect "$work/warmup.log" "^  compiled +$kernels$"
"$tool" warmup "$work/manifest" --quiet --progress-every 0.02 --cache-dir "$work/quiet" |
  cat >"$work/quiet.log"
if grep -q '^warmup: [0-9]*/' "$work/quiet.log"; then fail "--quiet printed progress"; fi

echo "== inspect --expr-file plans every statement under its line number"
cat >"$work/three.nf" <<'NF'
# three statements; B and C read what the ones before them stored
A: f32[64, 1000]
B = exp(A) * 2

C = B - mean(B, 1)   # a reduction
sum(C, 0)
NF
"$tool" inspect --expr-file "$work/three.nf" --plan >"$work/three.cu"
grep '^// .*three.nf:' "$work/three.cu" >"$work/headers"
cat "$work/headers"
diff "$work/headers" - <<HEADERS || fail "not every statement, in order, under its line"
// $work/three.nf:3: B = exp(A) * 2
// $work/three.nf:5: C = B - mean(B, 1)
// $work/three.nf:6: sum(C, 0)
HEADERS
[[ $(grep -c '^total: 1 steps' "$work/three.cu") -eq 3 ]] || fail "expected a one-step plan each"
[[ $(grep -c '^// numfuse .*kernel nf_' "$work/three.cu") -eq 3 ]] || fail "expected a kernel each"
if grep -q 'NF_HD' "$work/three.cu"; then fail "inspect printed the device runtime without --full"; fi

echo "== inspect --expr-file reads views of a named array, numpy's indices"
cat >"$work/views.nf" <<'NF'
x: f32[64, 512]
y: f32[64, 1024]
x + y[:, ::2]
y[-1, 1:9] * 2
NF
"$tool" inspect --expr-file "$work/views.nf" >"$work/views.cu"
grep -q '^// signature: fused;.*;in:f32/flat:f32/strided;' "$work/views.cu" ||
  fail "y[:, ::2] not read through its stride"
[[ $(grep -c '^// numfuse .*kernel nf_' "$work/views.cu") -eq 2 ]] || fail "expected a kernel each"
printf 'y: f32[64, 1024]\ny[1.5]\n' >"$work/bad-index.nf"
"$tool" inspect --expr-file "$work/bad-index.nf" 2>"$work/bad-index.err" && fail "y[1.5] accepted"
grep -q 'bad-index.nf:2:3: indices are integers' "$work/bad-index.err" || fail "y[1.5] not named"
printf 'y: f32[64, 1024]\ny[99999999999999999999999]\n' >"$work/huge-index.nf"
"$tool" inspect --expr-file "$work/huge-index.nf" 2>"$work/huge-index.err" && fail "a huge index accepted"
grep -q "huge-index.nf:2:3: the index is past" "$work/huge-index.err" || fail "a huge index not named"
printf 'y: f32[99999999999999999999999]\n' >"$work/huge-dim.nf"
"$tool" inspect --expr-file "$work/huge-dim.nf" 2>"$work/huge-dim.err" && fail "a huge dim accepted"
grep -q "huge-dim.nf:1:.*a dimension past" "$work/huge-dim.err" || fail "a huge dim not named"

echo "== inspect --expr-file: transpose(A, axes...) reads A in that order"
printf 'p: f32[40, 6, 31]\nq: f32[31, 6, 40]\ntranspose(p, 2, 1, 0) + q\n' >"$work/perm.nf"
"$tool" inspect --expr-file "$work/perm.nf" >"$work/perm.cu"
grep -q '^// signature: fused;.*;tiles0:.*;in:f32/tile:f32/flat;' "$work/perm.cu" ||
  fail "transpose(p, 2, 1, 0) not read through tiles"
printf 'p: f32[40, 6, 31]\ntranspose(p, 0, 1)\n' >"$work/bad-perm.nf"
"$tool" inspect --expr-file "$work/bad-perm.nf" 2>"$work/bad-perm.err" && fail "a short order accepted"
grep -q 'bad-perm.nf:2:' "$work/bad-perm.err" || fail "a short order not named"
printf 'p: f32[40, 6, 31]\ntranspose(p, 4294967298, 1, 0)\n' >"$work/huge-axis.nf"
"$tool" inspect --expr-file "$work/huge-axis.nf" 2>"$work/huge-axis.err" && fail "a huge axis accepted"
grep -q 'huge-axis.nf:2:.*axis 4294967298 is past' "$work/huge-axis.err" || fail "a huge axis not named"

echo "== bad arguments: one line, a non-zero exit"
refused 2 "$tool" warmup
refused 2 "$tool" warmup "$work/manifest" --bogus
refused 2 "$tool" warmup "$work/manifest" -j 0
refused 2 "$tool" warmup "$work/manifest" --progress-every soon
refused 2 "$tool" info extra
refused 2 "$tool" info --arch=sm_90
refused 2 "$tool" cache
refused 2 "$tool" cache bogus
refused 2 "$tool" cache list extra --cache-dir "$work/cache"
refused 2 "$tool" inspect
refused 2 "$tool" inspect a b
refused 2 "$tool" bogus
refused 1 "$tool" warmup "$work/missing-manifest" --cache-dir "$work/cache"
refused 1 "$tool" inspect --expr-file "$work/missing.nf"
for command in info warmup "cache list" "cache stats" "cache verify" "cache clear" inspect; do
  # shellcheck disable=SC2086
  "$tool" $command --help | grep -q "^usage: numfuse $command" || fail "numfuse $command --help"
done
"$tool" cache --help | grep -q '^usage: numfuse cache' || fail "numfuse cache --help"

echo "== info lists each NF_ variable, as the README does; bad values are refused by name"
# Where none is set: the caller's own (.ci/gpu.sh sets NF_CACHE_DIR) would
# not read "(default)".
(
  for variable in $(compgen -e | grep '^NF_'); do unset "$variable"; done
  "$tool" info
) >"$work/info.log"
sed -n '/^environment:$/,$p' "$work/info.log" | awk 'NR > 1 {print $1}' >"$work/variables"
[[ $(wc -l <"$work/variables") -ge 8 ]] || fail "info lists $(wc -l <"$work/variables") variables"
[[ $(grep -c '^| `NF_[A-Z_]*` |' "$readme") -eq $(wc -l <"$work/variables") ]] ||
  fail "README's table of variables lists others than numfuse info"
while read -r variable; do
  grep -q "^| \`$variable\` |" "$readme" || fail "README's table of variables lacks $variable"
  expect "$work/info.log" "^  $variable +.* \\(default\\)$"
done <"$work/variables"
NF_FUSION=off "$tool" info >"$work/info.log"
expect "$work/info.log" '^  NF_FUSION +off \(environment\)$'
refused 1 env NF_FUSION=banana "$tool" info
expect "$work/err" 'not allow'
# Refused at the first statement, even where the variable goes unused there.
for setting in NF_FUSION=banana NF_CACHE=maybe NF_DEVICE=banana NF_TARGET_ARCH=sm90 \
  NF_REDUCE_LIMITS=fast; do
  # The program dies of the uncaught error; the braces keep the shell's
  # report of that out of the log.
  got=$({ env NF_DEVICE=cpu "$setting" "$example" >/dev/null 2>"$work/err" && echo 0 || echo $?; } 2>/dev/null)
  [[ $got -ne 0 ]] || fail "$setting ran"
  expect "$work/err" "$setting is not allowed: expected "
done

echo "== info names the CPU BLAS and who chose its kernels; the user's choice wins"
env OPENBLAS_CORETYPE=Haswell "$tool" info >"$work/info.log"
expect "$work/info.log" '^CPU BLAS: +OpenBLAS [0-9.]+ \(.*\), Haswell kernels chosen by OPENBLAS_CORETYPE, tiles of each product on numfuse.s [0-9]+ threads$'
env -u OPENBLAS_CORETYPE OPENBLAS_NUM_THREADS=3 "$tool" info >"$work/info.log"
expect "$work/info.log" '^CPU BLAS: +OpenBLAS [0-9.]+ \(.*\), [A-Za-z]+ kernels chosen by .*, [0-9]+ threads per call \(OPENBLAS_NUM_THREADS\)$'
echo "ok"
