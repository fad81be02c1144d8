#!/usr/bin/env bash
# Everything that needs the GPU, in one call (device time is scarce): GPU tests, `devices`,
# `tune` of both presets in tf32 and fp32, and the bench against PyTorch eager and
# torch.compile. Expects build/ from `scripts/setup.sh` (built on the dev machine and carried).
#   scripts/gpu_check.sh [tests|tune|bench|all]...      results and logs under $OUT (or /tmp/fusetune-out)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/fusetune-out}"
mkdir -p "$OUT"
# Paths baked into the carried build (test data, CTest files) point at the dev checkout.
if [ "$(pwd)" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$(pwd)" /work/main; fi
# Prefer the cuDNN that PyTorch ships (9.19, what the targets were measured with) over the system's.
venv_cudnn=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib
[ -d "$venv_cudnn" ] && export LD_LIBRARY_PATH="$venv_cudnn:${LD_LIBRARY_PATH:-}"
# Libraries the image may lack, bundled by scripts/bundle_for_gpu.sh; last, so the image's win.
[ -d build/carrylib ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:$(pwd)/build/carrylib"
steps=("$@"); [ ${#steps[@]} -eq 0 ] && steps=(all)
want() { for s in "${steps[@]}"; do [ "$s" = all ] || [ "$s" = "$1" ] && return 0; done; return 1; }
rc=0

if want tests; then
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$OUT/nvidia-smi.txt"
  for t in build/gpu_*_test; do
    echo "== $t"
    "$t" --gtest_brief=1 2>&1 | tee -a "$OUT/gpu-tests.log" | tail -25 || rc=1
  done
  build/fusetune devices | tee "$OUT/devices.txt"
fi

if want tune; then
  for math in ${MATHS:-tf32 fp32}; do
    for p in ${PRESETS:-kernelbench-31 kernelbench-32}; do
      echo "== tune $p $math"
      build/fusetune tune --preset "$p" --math "$math" --json "$OUT/tune-$p-$math.json" >"$OUT/tune-$p-$math.txt" \
        2>"$OUT/tune-$p-$math.err" || rc=1
      grep -E "^(problem|device|winner)|variants:" "$OUT/tune-$p-$math.txt"; tail -3 "$OUT/tune-$p-$math.err"
    done
  done
fi

if want bench; then
  # Reuses the tune JSON of this run (or one copied into $OUT) for the winner's variant.
  for math in ${BENCH_MATHS:-tf32}; do
    echo "== bench $math"
    PYTHONUNBUFFERED=1 python3 bench/bench_presets.py --fusetune build/fusetune --json-dir "$OUT" --reuse \
      --math "$math" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench-$math.md" | tail -12 || rc=1
  done
fi
exit $rc
