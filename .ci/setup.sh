#!/usr/bin/env bash
# Installs what building and testing numfuse needs on Debian 12. Idempotent:
# when everything is installed already it changes nothing and skips the
# package index update. The CUDA toolkit (12 or later) is expected in
# /usr/local/cuda or on PATH; Debian's own is too old.
set -euo pipefail

# dataset-fashion-mnist: the IDX files under /usr/share/datasets/fashion-mnist
# that the examples and nf::load_idx's tests read; libpng-dev and gnuplot-nox
# draw the training examples' pictures (examples/rbm.cpp, examples/mlp.cpp).
packages=(cmake make g++ catch2 libfmt-dev libopenblas0 libxxhash-dev zlib1g-dev python3
          libopenmpi-dev openmpi-bin dataset-fashion-mnist libpng-dev gnuplot-nox)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=()
  ((EUID == 0)) || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update
  "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi

if ! command -v nvcc >/dev/null && [[ ! -x /usr/local/cuda/bin/nvcc && -z "${CUDAToolkit_ROOT:-}" ]]; then
  echo "numfuse needs the CUDA toolkit (12 or later) to build, even without a GPU:" >&2
  echo "install it to /usr/local/cuda or set CUDAToolkit_ROOT." >&2
  exit 1
fi
