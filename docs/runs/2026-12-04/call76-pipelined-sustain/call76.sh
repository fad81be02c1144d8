#!/usr/bin/env bash
# call 76 (issue 11): sustained timing with one sample queued ahead and no spin where a sample
# outlasts the host's enqueue (Timer::sustained). Cold tunes (fresh database, compile cache and
# CUDA cache) of kernelbench-31 twice and kernelbench-32 once, their phases and sustained runs,
# then gpu_tune_test; each tune with FUSETUNE_TRACE (trace-*.txt: the tuner's timeline). Compare call 68 (docs/runs/2026-12-03/call68-async-confirm/phases.txt).
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-300} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_*_test build/
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
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
        if 'sustained' in n or 'worker setup' in n or 'confirmation round' in n or 'guided search' in n: print('  ', n)
PY
cat $R/phases.txt
stamp gpu_tune_test
timeout $(( $(left) - 5 )) build/gpu_tune_test > $R/gpu_tune_test.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/gpu_tune_test.log | tail -6
stamp done
