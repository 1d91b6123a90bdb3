#!/usr/bin/env bash
# A warm start on a GPU: kernels recorded on the CPU backend (at the shape the
# GPU run uses, for the GPU's arch) and compiled by `numfuse warmup` leave a
# fresh process running the layer-norm example nothing to compile: NVRTC is
# not called once. The same holds where the GPU run's rows have another
# length than the recorded ones but take the same walks: a kernel's source
# carries no run-time value. Exits 77 (skipped) without a GPU.
#
#   warm_start.sh NUMFUSE_TOOL LAYERNORM_EXAMPLE
set -euo pipefail
tool=$1
example=$2
"$tool" info | grep -Eq '^devices: +0$' && exit 77
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
arch=$("$tool" info --arch)
shape=(8192 8192)  # the example's shape on a GPU

echo "== a cold start compiles (so that the count below means something)"
NF_CACHE_DIR="$work/cold" "$example" "${shape[@]}" | tee "$work/cold.log"
grep -Eq '^kernels: [1-9][0-9]* compiled by NVRTC' "$work/cold.log" || fail "a cold start compiled nothing"

echo "== record on the CPU backend for $arch, then warm a fresh cache"
NF_DEVICE=cpu NF_TARGET_ARCH="$arch" NF_KERNEL_MANIFEST="$work/manifest" "$example" "${shape[@]}"
"$tool" warmup "$work/manifest" --arch "$arch" --quiet --cache-dir "$work/cache"

echo "== a fresh process on the GPU"
NF_CACHE_DIR="$work/cache" "$example" "${shape[@]}" | tee "$work/warm.log"
grep -q '^check: .*: ok$' "$work/warm.log" || fail "the example's check failed"
grep -Eq '^kernels: 0 compiled by NVRTC .* [1-9][0-9]* read from the disk cache$' "$work/warm.log" ||
  fail "the warm start compiled kernels or read none from the cache"

echo "== recorded with rows of 1,000,000, run with rows of 1,200,000 (rows split across blocks)"
NF_DEVICE=cpu NF_TARGET_ARCH="$arch" NF_KERNEL_MANIFEST="$work/split.manifest" "$example" 2 1000000
"$tool" warmup "$work/split.manifest" --arch "$arch" --quiet --cache-dir "$work/split"
NF_CACHE_DIR="$work/split" "$example" 2 1200000 | tee "$work/split.log"
grep -q '^check: .*: ok$' "$work/split.log" || fail "the example's check failed"
grep -Eq '^kernels: 0 compiled by NVRTC .* [1-9][0-9]* read from the disk cache$' "$work/split.log" ||
  fail "rows of another length compiled kernels or read none from the cache"
echo "ok"
