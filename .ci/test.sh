#!/usr/bin/env bash
# Builds and runs every test twice: a release build, then an ASan+UBSan build.
set -euo pipefail
cd "$(dirname "$0")/.."

for preset in release asan; do
  cmake --preset "$preset"
  cmake --build --preset "$preset" -j2
  ctest --preset "$preset" -j2 --output-on-failure
done
