#!/usr/bin/env bash
# call 70 (issue 11): main 3eaae2c's binaries, the review commit (one early-confirmation predicate,
# running_ sized once; no behaviour change): the two-worker test, gpu_tune_test, and a cold
# `tune --preset kernelbench-32 --force --devices all --json`.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-300} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_*_test build/
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
stamp "cold tune of kernelbench-32, --devices all"
d=$(mktemp -d); s=$(date +%s.%N)
FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout 90 build/fusetune tune --preset kernelbench-32 --force \
  --devices all --json $R/tune-kernelbench-32-all.json > $R/tune-kernelbench-32-all.txt 2> $R/tune-kernelbench-32-all.err
rc=$?; e=$(date +%s.%N); echo "rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee $R/tune-time.txt
grep -E "^(device|winner|tie)" -A1 $R/tune-kernelbench-32-all.txt | head -6; pack
stamp "gpu_tune_test: two workers"
timeout $(( $(left) - 5 )) build/gpu_tune_test --gtest_filter='*TwoWorkers*' > $R/gpu_tune_two_workers.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/gpu_tune_two_workers.log | tail -4; pack
stamp gpu_tune_test
timeout $(( $(left) - 5 )) build/gpu_tune_test --gtest_filter='-*TwoWorkers*' > $R/gpu_tune_test.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/gpu_tune_test.log | tail -4; pack
stamp done; pack
