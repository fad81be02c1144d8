#!/usr/bin/env bash
# call 99 (issue 11): the review's changes to this stop's tuner (the priors' re-ranking of the
# compile pool stops once the guided search runs; the trace's compile lines without cuDNN graph
# templates, with a failed compile's status): gpu_tune_test (its planted fault replaces a worker
# mid-search), then one cold traced #31 tune.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
tar -C .gpu -xJf .gpu/bins.tar.xz
mkdir -p build && cp -f .gpu/fusetune .gpu/*_test build/
venv_cudnn=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib
export LD_LIBRARY_PATH="$venv_cudnn:$(pwd)/.gpu/lib"
if [ "$(pwd)" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$(pwd)" /work/main; fi
timeout 250 build/gpu_tune_test --gtest_brief=1 > $R/gpu-tune-test.log 2>&1; echo "gpu_tune_test rc=$?"; tail -3 $R/gpu-tune-test.log
d=$(mktemp -d); s=$(date +%s.%N)
FUSETUNE_TRACE=$R/trace-1.txt FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout 40 build/fusetune tune \
  --preset kernelbench-31 --force --json $R/tune-1.json > $R/tune-1.txt 2> $R/tune-1.err
rc=$?; e=$(date +%s.%N); echo "tune-1 (kernelbench-31 cold) rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee $R/tune-time.txt
grep -E "^(winner|tie)" $R/tune-1.txt; grep -c "compiled " $R/trace-1.txt; grep "compiled cudnn" $R/trace-1.txt | head -2
tar -C $OUT -czf $OUT/call99.tar.gz run
