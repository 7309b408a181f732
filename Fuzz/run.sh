#!/usr/bin/env bash
# Builds the libFuzzer targets (address sanitizer + coverage) into their own scratch path and runs each for a
# bounded time, starting from seed corpora made from Protocol/vectors plus whatever earlier runs kept.
# usage: Fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]      (exit 1 if a target crashed: see the artifact)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-45}"; shift || true
targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(FuzzFrames FuzzMessages FuzzValues)
scratch="${FUZZ_SCRATCH:-.build-fuzz}"
export GROUPSYNC_FUZZ=1 SWIFT_BACKTRACE=enable=no
flags=(--scratch-path "$scratch" --sanitize=fuzzer --sanitize=address
       -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp)
python3 Fuzz/make-corpus.py "$scratch/seeds" >/dev/null
status=0
for target in "${targets[@]}"; do
  # One product at a time: the package's own executable has a main, which libFuzzer's would clash with.
  # Show the build's progress and errors, but stop on its failure: fuzzing a stale binary would pass.
  build=0
  swift build "${flags[@]}" --product "$target" 2>&1 | grep -E "error|Compiling|Build" || build=${PIPESTATUS[0]}
  [ "$build" -eq 0 ] || { echo "building $target failed"; exit 1; }
  bin="$(swift build "${flags[@]}" --show-bin-path)/$target"
  mkdir -p "$scratch/corpus/$target" "$scratch/artifacts"
  echo "fuzzing $target for ${seconds}s"
  if ! "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$scratch/artifacts/$target-" "$scratch/corpus/$target" "$scratch/seeds/$target" \
      Fuzz/regressions/"$target" >"$scratch/$target.log" 2>&1; then
    status=1
    grep -E "ERROR|SUMMARY|Fatal error|Test unit written" "$scratch/$target.log" | head -20
    echo "$target CRASHED: full log $scratch/$target.log; copy the artifact into Fuzz/regressions/$target/ (FuzzRegressionTests replays it)"
  fi
  grep -E "^Done|exec_per_sec|new_units_added" "$scratch/$target.log" | tr '\n' ' '; echo
done
exit $status
