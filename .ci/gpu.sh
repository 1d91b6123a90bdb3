#!/usr/bin/env bash
# What CI does, on a machine with a GPU: the release and ASan+UBSan builds and
# the whole suite in each (every test on the CPU backend and on cuda:0), the
# differential fuzzer at 10,000 GPU-against-CPU cases and its misuse mode at
# 10,000 hostile calls on the GPU, and the GPU tests under
# compute-sanitizer (memcheck, racecheck, synccheck, initcheck). CI has no
# GPU: this is where GPU bugs are caught. Exits non-zero on any failure.
#
#   bash .ci/gpu.sh [STAGE...]     stages: build warm suite fuzz sanitize (default: all five)
#
# Needs the CUDA driver and toolkit (compute-sanitizer comes with it), CMake,
# g++, and Catch2 2, fmt, OpenBLAS and xxHash: from Debian's packages
# (.ci/setup.sh), or from a prefix with an env.sh that puts them on the paths (.deps),
# which this script sources when it is there. NF_FUZZ_CASES (10000) and
# NF_FUZZ_JOBS (the core count) size the fuzzer's run; NF_GPU_PRESETS ("release asan") names
# the builds that build and suite use; logs go to NF_GPU_LOGS (build/gpu-logs).
set -uo pipefail
cd "$(dirname "$0")/.."
[[ -f .deps/env.sh ]] && source .deps/env.sh
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH

stages=("$@")
((${#stages[@]})) || stages=(build warm suite fuzz sanitize)
logs=${NF_GPU_LOGS:-build/gpu-logs}
mkdir -p "$logs"
jobs=$(nproc)
cases=${NF_FUZZ_CASES:-10000}
shards=${NF_FUZZ_JOBS:-$(nproc)}
read -r -a presets <<<"${NF_GPU_PRESETS:-release asan}"
# The CUDA driver maps memory where ASan keeps its shadow gap; its own
# allocations are not numfuse's leaks.
export ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=1
export LSAN_OPTIONS=suppressions=$PWD/.ci/lsan.supp:print_suppressions=0
# Kernels compiled by one stage are read from disk by the next.
export NF_CACHE_DIR=${NF_CACHE_DIR:-$PWD/build/gpu-kernel-cache}

failed=()
summary=()
note() { summary+=("$(printf '%-10s %-24s %s' "$1" "$2" "$3")"); }
run() {  # run NAME LOG COMMAND...: logs the command's output, notes its outcome
  local name=$1 log=$2
  shift 2
  local start=$SECONDS
  if "$@" >"$log" 2>&1; then
    note ok "$name" "$((SECONDS - start)) s, $(tail -n 3 "$log" | grep -E 'passed|tests|SUMMARY' | tail -n 1)"
  else
    failed+=("$name")
    note FAILED "$name" "$((SECONDS - start)) s, see $log"
    tail -n 40 "$log"
  fi
}

if [[ $(nvidia-smi -L 2>/dev/null | head -n 1) == "" ]]; then
  echo ".ci/gpu.sh: no GPU found (nvidia-smi -L lists none); .ci/test.sh is the run for this machine" >&2
  exit 1
fi

for stage in "${stages[@]}"; do
  case $stage in
    build)
      for preset in "${presets[@]}"; do
        run "build $preset" "$logs/build-$preset.log" \
          bash -c "cmake --preset $preset && cmake --build --preset $preset -j$jobs"
      done
      ;;
    warm)
      # The cuda: tests load thousands of kernels, each compiled by NVRTC on
      # first use, one at a time. Their CPU run records them as this GPU
      # would load them, and numfuse warmup compiles them side by side into
      # the cache the suite then reads (the asan run finds them there too).
      manifest=build/gpu-kernels.manifest
      rm -f "$manifest"
      arch=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d .)
      run "warm the kernel cache" "$logs/warmup.log" bash -c "
        NF_DEVICE=cpu NF_TARGET_ARCH=$arch NF_KERNEL_MANIFEST=$manifest \
          build/${presets[0]}/tests/numfuse_cpu_tests '~[cpu-backend]~[host]' >/dev/null &&
        build/${presets[0]}/numfuse warmup $manifest -j $jobs --cache-dir '$NF_CACHE_DIR'"
      ;;
    suite)
      for preset in "${presets[@]}"; do
        # Under ASan the CPU references of the large shapes (gpu-big, and the
        # six exhaustive reductions gpu-every*) take from ten minutes to half
        # an hour each; the release run covers them, and every other test
        # runs in both builds.
        exclude=()
        [[ $preset == asan ]] && exclude=(-E '^gpu-(every|big)')
        run "ctest $preset" "$logs/ctest-$preset.log" \
          ctest --preset "$preset" -j"$jobs" --output-on-failure "${exclude[@]}"
        # A skipped cuda: test means the GPU run did not happen; but for the
        # distributed run on two GPUs, where the machine has one.
        skipped=$(grep '(Skipped)' "$logs/ctest-$preset.log")
        (($(nvidia-smi -L | wc -l) < 2)) && skipped=$(grep -v 'dist: cuda, 2 ranks' <<<"$skipped")
        if [[ -n $skipped ]]; then
          failed+=("skips in $preset")
          note FAILED "skips in $preset" "$(wc -l <<<"$skipped") tests skipped with a GPU present"
        fi
      done
      ;;
    fuzz)
      per=$(((cases + shards - 1) / shards))
      pids=()
      for ((k = 0; k < shards; ++k)); do
        build/release/tests/fuzz/numfuse_fuzz --mode gpu --first $((k * per)) --cases "$per" \
          >"$logs/fuzz-$k.log" 2>&1 &
        pids+=($!)
      done
      start=$SECONDS
      passed=0 mismatched=0 bad=0
      for ((k = 0; k < shards; ++k)); do
        wait "${pids[k]}" || bad=1
        read -r p f < <(grep -E '^[0-9]+ passed, [0-9]+ failed' "$logs/fuzz-$k.log" | tail -n 1 |
          sed -E 's/([0-9]+) passed, ([0-9]+) failed.*/\1 \2/')
        passed=$((passed + ${p:-0})) mismatched=$((mismatched + ${f:-0}))
      done
      # One log for the run, shard after shard.
      for ((k = 0; k < shards; ++k)); do cat "$logs/fuzz-$k.log" && rm "$logs/fuzz-$k.log"; done >"$logs/fuzz.log"
      if ((bad || passed + mismatched < cases)); then
        failed+=("fuzz gpu")
        note FAILED "fuzz gpu" "$((SECONDS - start)) s, $passed passed, $mismatched failed; see $logs/fuzz.log"
        grep -h -A30 'MISMATCH\|error' "$logs/fuzz.log" | head -n 80
      else
        note ok "fuzz gpu" "$((SECONDS - start)) s, $passed passed, $mismatched failed"
      fi
      # Hostile shapes, dtypes, scalars and environments on the GPU: each
      # call works or throws a user error, and leaves every array as it was.
      run "fuzz misuse" "$logs/fuzz-misuse.log" \
        build/release/tests/fuzz/numfuse_fuzz --mode misuse --cases "$cases"
      ;;
    sanitize)
      # The GPU tests but the large shapes and the 60,000 statements of the
      # memory test (minutes each under a sanitizer), and fuzz cases, under
      # each tool at once: they share the GPU. -d yes logs each test as it
      # ends. The tests that take most of the device's memory run after,
      # alone.
      gpu_tests=build/release/tests/gpu/numfuse_gpu_tests
      tools=(memcheck racecheck synccheck initcheck)
      pids=()
      start=$SECONDS
      for tool in "${tools[@]}"; do
        extra=()
        # numfuse checks the status of every CUDA call and throws; the tests
        # provoke failing calls on purpose (out of memory, bad images).
        [[ $tool == memcheck ]] && extra=(--leak-check full --report-api-errors no)
        spec='~[big]~[many]~[whole-device]'
        # initcheck does not see cuBLASLt's sm_90 kernels write their outputs
        # (the products' values are checked against the CPU), so it reports
        # every later read of one; the other tests' reads it checks.
        [[ $tool == initcheck ]] && spec+='~[gemm]'
        compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 1 \
          "$gpu_tests" "$spec" -d yes >"$logs/sanitize-$tool.log" 2>&1 &
        pids+=($!)
      done
      compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 1 \
        build/release/tests/fuzz/numfuse_fuzz --mode gpu --first 100000 --cases 300 \
        >"$logs/sanitize-fuzz.log" 2>&1 &
      pids+=($!)
      tools+=(fuzz)
      for k in "${!tools[@]}"; do
        log=$logs/sanitize-${tools[k]}.log
        if wait "${pids[k]}"; then
          note ok "sanitize ${tools[k]}" "$((SECONDS - start)) s, $(grep -E 'passed|SUMMARY' "$log" | tail -n 1)"
        else
          failed+=("sanitize ${tools[k]}")
          note FAILED "sanitize ${tools[k]}" "$((SECONDS - start)) s, see $log"
          tail -n 40 "$log"
        fi
      done
      run "sanitize whole-device" "$logs/sanitize-whole-device.log" \
        compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 1 \
        "$gpu_tests" '[whole-device]'
      ;;
    *)
      echo ".ci/gpu.sh: unknown stage '$stage' (build, warm, suite, fuzz, sanitize)" >&2
      exit 2
      ;;
  esac
done

echo
echo "== .ci/gpu.sh $(date -u +%Y-%m-%dT%H:%MZ) on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1), $(git rev-parse --short HEAD 2>/dev/null)"
printf '%s\n' "${summary[@]}"
if ((${#failed[@]})); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all passed"
