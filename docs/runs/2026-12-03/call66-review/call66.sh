#!/usr/bin/env bash
# call 66 (issue 11, review): the final binaries after the review's refactor (GuidedSearch::next()
# as the head of rank(), one prefer_next per pick): gpu_tune_test, gpu_cudnn_test, and a cold
# `tune --preset kernelbench-31 --force` (fresh database and compile cache).
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-300} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_*_test build/
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
stamp "cold tune of kernelbench-31"
d=$(mktemp -d); s=$(date +%s.%N)
FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout 60 build/fusetune tune --preset kernelbench-31 --force \
  > $R/tune-kernelbench-31.txt 2> $R/tune-kernelbench-31.err; rc=$?; e=$(date +%s.%N)
echo "rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee $R/tune-time.txt; grep -E "^(device|winner|tie)" -A1 $R/tune-kernelbench-31.txt | head -6; pack
for t in gpu_tune_test gpu_cudnn_test; do
  stamp $t
  timeout $(( $(left) - 5 )) build/$t > $R/$t.log 2>&1; echo "$t rc=$?"
  grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/$t.log | tail -4; pack
done
stamp done; pack
