#!/usr/bin/env bash
# Everything that needs the GPU, in one call (device time is scarce). Expects build/ from
# `scripts/setup.sh` (built on the dev machine and carried; scripts/bundle_for_gpu.sh first).
#   scripts/gpu_check.sh [tests|tune|export|smoke|bench|all]...
# Results and logs go under $OUT/run (also packed into $OUT/run.tgz after each step); the
# tuning database is $FUSETUNE_DB (default $OUT/run/tuning.db) and its dump $OUT/run/h200.jsonl.
#   GPU_TESTS   test binaries to run (default: every build/gpu_*_test)
#   MATHS       math modes to tune (default: tf32 fp32); PRESETS likewise
#   BENCH_MATHS, BENCH_ARGS   for bench/bench_presets.py
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/fusetune-out}"
R="$OUT/run"
mkdir -p "$R"
export FUSETUNE_DB="${FUSETUNE_DB:-$R/tuning.db}"
# Paths baked into the carried build (test data, the worker binary) point at the dev checkout.
if [ "$(pwd)" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$(pwd)" /work/main; fi
# Prefer the cuDNN that PyTorch ships (9.19, what the targets were measured with) over the system's.
venv_cudnn=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib
[ -d "$venv_cudnn" ] && export LD_LIBRARY_PATH="$venv_cudnn:${LD_LIBRARY_PATH:-}"
# Libraries the image may lack, bundled by scripts/bundle_for_gpu.sh; last, so the image's win.
[ -d build/carrylib ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:$(pwd)/build/carrylib"
steps=("$@"); [ ${#steps[@]} -eq 0 ] && steps=(all)
want() { for s in "${steps[@]}"; do [ "$s" = all ] || [ "$s" = "$1" ] && return 0; done; return 1; }
pack() { tar czf "$OUT/run.tgz" -C "$OUT" run 2>/dev/null; }
rc=0

if want tests; then
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$R/nvidia-smi.txt"
  for t in ${GPU_TESTS:-build/gpu_*_test}; do
    echo "== $t"
    "$t" --gtest_brief=1 >>"$R/gpu-tests.log" 2>&1 || { rc=1; echo "FAILED: $t"; }
    grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$R/gpu-tests.log" | tail -3
  done
  build/fusetune devices | tee "$R/devices.txt"
  pack
fi

if want tune; then
  for math in ${MATHS:-tf32 fp32}; do
    for p in ${PRESETS:-kernelbench-31 kernelbench-32}; do
      echo "== tune $p $math"
      build/fusetune tune --preset "$p" --math "$math" --force --json "$R/tune-$p-$math.json" >"$R/tune-$p-$math.txt" \
        2>"$R/tune-$p-$math.err" || rc=1
      grep -E "^(winner|note)|variants:" "$R/tune-$p-$math.txt"; tail -2 "$R/tune-$p-$math.err"
    done
  done
  build/fusetune db dump -o "$R/h200.jsonl" && build/fusetune db verify
  build/fusetune query
  pack
fi

if want export; then
  for math in tf32 fp32; do
    for p in kernelbench-31 kernelbench-32; do
      build/fusetune export --preset "$p" --math "$math" --format torch -o "$R/$p-$math.py" || rc=1
    done
    echo "== torch export check $math"
    PYTHONUNBUFFERED=1 python3 bench/check_torch_export.py --m31 "$R/kernelbench-31-$math.py" \
      --m32 "$R/kernelbench-32-$math.py" --math "$math" 2>&1 | tee -a "$R/export-check.log" | tail -6 || rc=1
  done
  pack
fi

if want smoke; then
  echo "== smoke"
  build/fusetune smoke --json "$R/smoke.json" 2>&1 | tee "$R/smoke.log" | grep -vE "^ok  " || rc=1
  echo "== smoke with a planted stale winner (must FAIL)"
  FUSETUNE_TEST_STALE=1 build/fusetune smoke --checks winners 2>&1 | tee "$R/smoke-stale.log"
  [ "${PIPESTATUS[0]}" -eq 1 ] && echo "stale smoke failed as it must" || { rc=1; echo "STALE SMOKE DID NOT FAIL"; }
  pack
fi

if want bench; then
  for math in ${BENCH_MATHS:-tf32}; do
    echo "== bench $math"
    PYTHONUNBUFFERED=1 python3 bench/bench_presets.py --fusetune build/fusetune --json-dir "$R" --reuse \
      --math "$math" ${BENCH_ARGS:-} 2>&1 | tee "$R/bench-$math.md" | tail -12 || rc=1
  done
  pack
fi
cp "$R/h200.jsonl" "$OUT/" 2>/dev/null
exit $rc
