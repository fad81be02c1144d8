#!/usr/bin/env bash
# call 77 (issue 11): cuDNN plans built ahead on a second worker thread (RunRequest::prebuild,
# tune/plan_prebuild.hpp) and the reference's NVRTC compiles started before the worker's context
# (reference::RefCompiles). The new GPU test of the prebuilder, then cold tunes (fresh database,
# compile cache and CUDA cache) of kernelbench-31 twice and kernelbench-32 once with
# FUSETUNE_TRACE, then gpu_tune_test and gpu_cudnn_test. Compare call 76
# (docs/runs/2026-12-04/call76-pipelined-sustain/). Everything is packed into one tar (the device
# tool returns at most 8 files).
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-300} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_*_test build/
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
pack() { tar -C $OUT -czf $OUT/call77.tar.gz run; }
stamp "gpu_cudnn_test (the prebuilder's test)"
timeout 120 build/gpu_cudnn_test --gtest_filter='*BuiltAhead*' > $R/gpu_cudnn_ahead.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure" $R/gpu_cudnn_ahead.log | tail -6
for t in kernelbench-31:1 kernelbench-31:2 kernelbench-32:1; do
  p=${t%%:*}; n=${t##*:}; stamp "cold tune $p ($n)"
  d=$(mktemp -d); s=$(date +%s.%N)
  FUSETUNE_TRACE=$R/trace-$p-$n.txt FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout 90 build/fusetune tune --preset $p --force \
    --json $R/tune-$p-$n.json > $R/tune-$p-$n.txt 2> $R/tune-$p-$n.err
  rc=$?; e=$(date +%s.%N); echo "tune-$p-$n rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-time.txt
done
python3 - $R > $R/phases.txt <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + '/tune-*.json')):
    d = json.load(open(f)); w = d.get('winner') or {}
    print(os.path.basename(f), 'winner', w.get('name'), (w.get('time_ms') or {}).get('median'), 'phases', d.get('phases_s'))
    for n in d.get('notes', []):
        if any(k in n for k in ('sustained', 'worker setup', 'confirmation round', 'guided search', 'built ahead')): print('  ', n)
PY
cat $R/phases.txt
grep -h "ahead\|setup in\|cudnn-fused" $R/trace-*.txt | head -40
pack
stamp gpu_tune_test
timeout $(( $(left) - 100 )) build/gpu_tune_test > $R/gpu_tune_test.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/gpu_tune_test.log | tail -6
pack
stamp gpu_cudnn_test
timeout $(( $(left) - 10 )) build/gpu_cudnn_test > $R/gpu_cudnn_test.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/gpu_cudnn_test.log | tail -6
pack
stamp done
