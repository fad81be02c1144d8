#!/usr/bin/env bash
# call 21: HEAD ad89f5a on the GPU: gpu_tune_test, smoke, compile-cache cold/warm tunes.
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
export FUSETUNE_DB=$R/tuning.db
GPU_TESTS=build/gpu_tune_test scripts/gpu_check.sh tests 2>&1 | tail -5
venv_cudnn=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib
export LD_LIBRARY_PATH="$venv_cudnn:$(pwd)/.gpu/lib"
for p in kernelbench-31 kernelbench-32; do
  for pass in cold warm; do
    s=$(date +%s.%N)
    build/fusetune tune --preset $p --force --json $R/tune-$p-$pass.json > $R/tune-$p-$pass.txt 2>$R/tune-$p-$pass.err; rc=$?
    e=$(date +%s.%N); echo "tune $p $pass --force: rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-times.txt
    grep -E "^(winner|phases)" $R/tune-$p-$pass.txt
  done
  s=$(date +%s.%N); build/fusetune tune --preset $p > $R/tune-$p-stored.txt 2>&1; e=$(date +%s.%N)
  echo "tune $p stored answer: wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-times.txt
done
ls $R/compile-cache 2>/dev/null | wc -l | sed 's/^/compile cache entries: /' | tee -a $R/tune-times.txt
build/fusetune smoke --checks gpu-tiny,winners > $R/smoke.log 2>&1; echo "smoke exit $?" >> $R/smoke.log
grep -E "^(FAIL|smoke:)|exit" $R/smoke.log
tar czf $OUT/run.tgz -C $OUT run
