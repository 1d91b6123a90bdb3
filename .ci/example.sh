#!/usr/bin/env bash
# Builds and runs the headline example, examples/layernorm.cpp.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake --preset release
cmake --build --preset release -j2 --target layernorm
build/release/examples/layernorm
