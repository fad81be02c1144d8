#!/usr/bin/env bash
# call 36: fusetune's interleaved rounds after ~300 ms of the same plans back to back (sustained
# clocks, src/tune/timer.cpp): cold tf32 tunes of both presets, their torch exports timed against
# tune's figures (issue 14: within 5%); then fp32 tunes, exports and KernelBench's procedure; then,
# with the time left, the KernelBench models patched and timed beside eager and torch.compile.
cd "$(dirname "$0")/../../../.."  # run from the repository root
export OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
export FUSETUNE_DB=/tmp/ftdb36/tuning.db PYTHONUNBUFFERED=1
t0=$(date +%s); stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
stamp "tf32"
MATHS=tf32 EXTRA=0 bash scripts/gpu_check.sh tune export
stamp "fp32"
MATHS=fp32 EXTRA=0 bash scripts/gpu_check.sh tune export
if [ $(( $(date +%s) - t0 )) -lt 400 ]; then
  stamp "patch the KernelBench models"
  PATCH_FILTER=level2 bash scripts/gpu_check.sh patch
fi
build/fusetune db dump -o $R/h200.jsonl
stamp done
tar czf $OUT/run.tgz -C $OUT run
