#!/usr/bin/env bash
# call 23: re-ship the H200 records with the final templates (both presets, tf32 and fp32, cold
# --force tunes, timed), then the GPU tests in priority order within what is left of the call.
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
export OUT FUSETUNE_DB=$R/tuning.db
t0=$(date +%s)
mkdir -p build && cp -f .gpu/fusetune .gpu/*_test build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.txt
for math in tf32 fp32; do
  for p in kernelbench-31 kernelbench-32; do
    s=$(date +%s.%N)
    build/fusetune tune --preset $p --math $math --force --json $R/tune-$p-$math.json > $R/tune-$p-$math.txt 2>$R/tune-$p-$math.err; rc=$?
    e=$(date +%s.%N)
    echo "tune $p $math --force (cold): rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-times.txt
    grep -E "^(winner|phases)" $R/tune-$p-$math.txt
  done
done
build/fusetune db dump -o $R/h200.jsonl; echo "dump rc=$?"
build/fusetune query > $R/query.txt 2>&1
echo "tunes done at +$(( $(date +%s) - t0 )) s"
for t in gpu_tune_test gpu_reference_test gpu_cudnn_test gpu_layer_test gpu_cudnn_fused_test gpu_op_math_test; do
  left=$(( 575 - ($(date +%s) - t0) ))
  [ $left -lt 20 ] && { echo "SKIPPED $t: ${left}s left" | tee -a $R/gpu-tests.log; continue; }
  echo "== $t (limit ${left}s)" >> $R/gpu-tests.log
  timeout $left build/$t --gtest_brief=1 >> $R/gpu-tests.log 2>&1; echo "$t rc=$?" | tee -a $R/gpu-tests.log
done
grep -E "^\[  (PASSED|FAILED)|FAILED  \]" $R/gpu-tests.log | head -30
echo "end at +$(( $(date +%s) - t0 )) s"
