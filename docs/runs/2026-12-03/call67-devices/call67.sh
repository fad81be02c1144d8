#!/usr/bin/env bash
# call 67 (issue 11, --devices): the lanes' path on the H200's one GPU. gpu_tune_test (its new
# TwoWorkersShareTheSolutionsAndEveryVariantStillVerifies runs two workers on GPU 0), the other
# tuning GPU tests (cuDNN, cuDNN fusion, fused conv: the worker protocol gained conv_choices),
# a cold `tune --preset kernelbench-31 --force` on one worker (the tuner's measure loop was
# rewritten: its time must not move from call 66's 10.7 s), and `--devices all --json` on
# kernelbench-32 (one GPU here: one lane; the JSON's devices and gpu fields).
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-300} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_*_test build/
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
cold() {  # name, then fusetune's arguments: a tune with a fresh database and compile cache
  local name=$1; shift
  local d; d=$(mktemp -d); local s; s=$(date +%s.%N)
  FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout 90 build/fusetune tune "$@" \
    > $R/$name.txt 2> $R/$name.err; local rc=$?; local e; e=$(date +%s.%N)
  echo "$name rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-time.txt
  grep -E "^(device|winner|tie)" -A1 $R/$name.txt | head -6
}
stamp "cold tune of kernelbench-31, one GPU"
cold tune-kernelbench-31 --preset kernelbench-31 --force; pack
stamp "cold tune of kernelbench-32, --devices all"
cold tune-kernelbench-32-all --preset kernelbench-32 --force --devices all --json $R/tune-kernelbench-32-all.json; pack
python3 - $R/tune-kernelbench-32-all.json <<'PY' | tee $R/devices-json.txt
import json, sys, collections
d = json.load(open(sys.argv[1]))
print("devices", d["devices"], "winner", d["winner"]["name"], "gpu", d["winner"]["gpu"])
print("gpu of timed results", collections.Counter(r["gpu"] for r in d["results"] if r["time_ms"]))
PY
pack
stamp "gpu_tune_test: two workers"
timeout $(( $(left) - 5 )) build/gpu_tune_test --gtest_filter='*TwoWorkers*' > $R/gpu_tune_two_workers.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/gpu_tune_two_workers.log | tail -4; pack
for t in gpu_tune_test gpu_cudnn_test gpu_cudnn_fused_test gpu_fused_conv_test; do
  stamp $t
  timeout $(( $(left) - 5 )) build/$t --gtest_filter='-*TwoWorkers*' > $R/$t.log 2>&1; echo "$t rc=$?"
  grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/$t.log | tail -4; pack
done
stamp done; pack
