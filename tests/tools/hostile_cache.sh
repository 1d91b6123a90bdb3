#!/usr/bin/env bash
# The kernel cache in hostile directories, driven through the numfuse tool:
# several processes warming one directory at once leave it valid; a cache
# that cannot be written is still read, and says so; the cache commands
# report exactly what they could not remove and exit with 1.
#
# "Cannot be written" must hold for root too, who writes anywhere: as root,
# the commands run as nobody (setpriv), on a directory made read-only.
#
#   hostile_cache.sh NUMFUSE_TOOL LAYERNORM_EXAMPLE
set -euo pipefail
tool=$1
example=$2
if [[ $(id -u) -eq 0 ]] && ! command -v setpriv >/dev/null; then
  echo "skipped: running as root without setpriv, nothing can be read-only"
  exit 77
fi
work=$(mktemp -d)
chmod 755 "$work"  # readable by nobody
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
source "$(dirname "$0")/checks.sh"
# as_reader COMMAND...: as a user who cannot write what is read-only.
as_reader() {
  if [[ $(id -u) -eq 0 ]]; then
    setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
  else
    "$@"
  fi
}
# status COMMAND...: runs it, prints its exit status and never fails.
status() {
  set +e
  "$@"
  echo $? >"$work/status"
  set -e
}
cache=(--cache-dir "$work/cache")

echo "== record the example's kernels on the CPU backend, for sm_90"
NF_DEVICE=cpu NF_TARGET_ARCH=sm_90 NF_KERNEL_MANIFEST="$work/manifest" "$example" >/dev/null
kernels=$(grep -c '^numfuse-kernel 2$' "$work/manifest")
[[ $kernels -ge 2 ]] || fail "the manifest lists $kernels kernels"

echo "== four processes warm one directory at once"
pids=()
for i in 1 2 3 4; do
  "$tool" warmup "$work/manifest" --arch sm_90 -j 2 --quiet "${cache[@]}" >"$work/warmup.$i.log" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || fail "a warmup running beside others failed"; done
"$tool" cache verify "${cache[@]}" | tee "$work/verify.log"
expect "$work/verify.log" "$kernels valid, 0 corrupt"
[[ $(find "$work/cache" -name '*.nfk' | wc -l) -eq $kernels ]] || fail "expected $kernels entries"
[[ $(find "$work/cache" -name '*.tmp' | wc -l) -eq 0 ]] || fail "temporary files were left"

echo "== a read-only cache is read: warming it again finds every kernel there"
chmod -R a-w "$work/cache"
as_reader "$tool" warmup "$work/manifest" --arch sm_90 --quiet "${cache[@]}" | tee "$work/ro.log"
expect "$work/ro.log" "^  already cached +$kernels$"
expect "$work/ro.log" '^  compiled +0$'
as_reader env NF_CACHE_DIR="$work/cache" "$tool" info | tee "$work/info.log"
expect "$work/info.log" "^kernel cache: +$work/cache, $kernels entries, .*, read-only$"

echo "== a kernel missing from a read-only cache fails to warm, saying why"
chmod u+w "$work/cache"
victim=$(find "$work/cache" -name '*.nfk' | sort | head -1)
rm "$victim"
chmod a-w "$work/cache"
status as_reader "$tool" warmup "$work/manifest" --arch sm_90 --quiet "${cache[@]}" >"$work/ro.log"
cat "$work/ro.log"
[[ $(cat "$work/status") -eq 1 ]] || fail "warmup into a read-only cache exited with $(cat "$work/status")"
expect "$work/ro.log" '^  failed +1$'
expect "$work/ro.log" 'cannot write the cache: cannot create a file in'
[[ ! -e $victim ]] || fail "a read-only cache was written"

echo "== verify and clear report what they could not remove, and exit with 1"
chmod u+w "$work/cache"
other=$(find "$work/cache" -name '*.nfk' | sort | head -1)
chmod u+w "$other"
truncate -s 10 "$other"
chmod -R a-w "$work/cache"
status as_reader "$tool" cache verify "${cache[@]}" >"$work/verify.log" 2>"$work/verify.err"
cat "$work/verify.log" "$work/verify.err"
[[ $(cat "$work/status") -eq 1 ]] || fail "verify exited with $(cat "$work/status")"
expect "$work/verify.log" "1 corrupt, 1 of them not removed"
expect "$work/verify.err" "^numfuse: could not remove $other: truncated \\(10 bytes\\); cannot remove it: "
[[ -e $other ]] || fail "verify removed a file it said it could not"
left=$(find "$work/cache" -name '*.nfk' | wc -l)
status as_reader "$tool" cache clear "${cache[@]}" >"$work/clear.log" 2>"$work/clear.err"
cat "$work/clear.log" "$work/clear.err"
[[ $(cat "$work/status") -eq 1 ]] || fail "clear exited with $(cat "$work/status")"
expect "$work/clear.log" "^removed 0 files from $work/cache; could not remove $left$"
[[ $(grep -c '^numfuse: could not remove ' "$work/clear.err") -eq $left ]] ||
  fail "clear did not name each file it could not remove"
[[ $(find "$work/cache" -name '*.nfk' | wc -l) -eq $left ]] || fail "clear removed files it said it kept"

echo "== writable again, clear removes them all"
chmod -R u+w "$work/cache"
"$tool" cache clear "${cache[@]}" | tee "$work/clear.log"
expect "$work/clear.log" "^removed $left files from $work/cache$"
[[ $(find "$work/cache" -type f | wc -l) -eq 0 ]] || fail "clear left files"
echo "ok"
