#!/usr/bin/env bash
# call 83 (issue 11): the review's changes on the H200. The prebuilder now drops its queue and
# waits for the builds under way before every re-timing round (PlanPrebuilder::settle), retries
# inline a plan whose background build failed other than by cuDNN's refusal, and ignores what
# the hints throw; its GPU test loops over the configurations it asked for. gpu_cudnn_test, one
# cold kernelbench-31 tune and two `tune --force` re-tunes reading its compile cache (each traced),
# then gpu_tune_test with what the budget leaves.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-190} - ($(date +%s) - t0) )); }
B=$(mktemp -d) && tar -C $B -xJf .gpu/bins.tar.xz
mkdir -p build && cp -f $B/fusetune $B/gpu_*_test build/  # the tests start build/fusetune as their worker
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$B/lib"
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
stamp gpu_cudnn_test
timeout 60 build/gpu_cudnn_test > $R/gpu_cudnn_test.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|tests? from .* ran" $R/gpu_cudnn_test.log | tail -4
db=$(mktemp -d)
for n in cold warm1 warm2; do
  s=$(date +%s.%N)
  FUSETUNE_TRACE=$R/trace-31-$n.txt FUSETUNE_DB=$db/tuning.db CUDA_CACHE_PATH=$(mktemp -d) timeout 60 build/fusetune tune \
    --preset kernelbench-31 --force --json $R/tune-31-$n.json > $R/tune-31-$n.txt 2> $R/tune-31-$n.err
  rc=$?; e=$(date +%s.%N); echo "tune-31-$n rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-time.txt
done
python3 - $R > $R/phases.txt <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + '/tune-*.json')):
    d = json.load(open(f)); w = d.get('winner') or {}
    ph = {k: round(v, 2) for k, v in (d.get('phases_s') or {}).items()}
    print(os.path.basename(f), w.get('name'), round((w.get('time_ms') or {}).get('median', 0), 4), ph)
    for r in d.get('results', []):
        if r['name'] in ('cudnn.nhwc', 'unfused.nhwc-conv') and r.get('time_ms'):
            print('  ', r['name'], round(r['time_ms']['median'], 4), r['time_ms']['round'])
    for n in d.get('notes', []):
        if 'built ahead' in n or 'confirmation round' in n: print('  ', n)
PY
cat $R/phases.txt
tar -C $OUT -czf $OUT/call83.tar.gz run
stamp gpu_tune_test
timeout $(( $(left) - 5 )) build/gpu_tune_test > $R/gpu_tune_test.log 2>&1; echo "rc=$?"
grep -E "^\[ +(OK|FAILED) |^\[  (PASSED|FAILED)|Failure|tests? from .* ran" $R/gpu_tune_test.log | tail -14
tar -C $OUT -czf $OUT/call83.tar.gz run
stamp done
