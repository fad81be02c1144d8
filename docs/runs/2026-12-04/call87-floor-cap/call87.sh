#!/usr/bin/env bash
# call 87 (issue 11): the floor's sustained run capped at 1 s of GPU time (SustainPolicy::
# floor_max_ms), with call 85's baselines' confirmation first: cold tunes of kernelbench-31 (twice),
# kernelbench-32 and bench/problems.txt's second problem (13.4 s cold in call 86, 5.1 s of it the
# floor's run to the 3 s cap), fresh database, compile cache and CUDA cache each, traced; then
# gpu_tune_test.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-400} - ($(date +%s) - t0) )); }
N=$(mktemp -d) && tar -C $N -xJf .gpu/bins.tar.xz
mkdir -p build && cp -f $N/fusetune $N/gpu_*_test build/  # the tests start build/fusetune as their worker
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$N/lib"
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
i=0
for p in --preset=kernelbench-31 --preset=kernelbench-31 --preset=kernelbench-32 \
         "conv2d(n=4,c=32,h=56,w=56,k=64,r=3,pad=1) | relu | reduce_max(channel)"; do
  i=$((i + 1)); d=$(mktemp -d); s=$(date +%s.%N)
  FUSETUNE_TRACE=$R/trace-$i.txt FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout 90 build/fusetune tune "$p" --force \
    --json $R/tune-$i.json > $R/tune-$i.txt 2> $R/tune-$i.err
  rc=$?; e=$(date +%s.%N); echo "tune-$i ($p) rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-time.txt
done
python3 - $R > $R/phases.txt <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + '/tune-*.json')):
    d = json.load(open(f)); w = d.get('winner') or {}
    ph = {k: round(v, 2) for k, v in (d.get('phases_s') or {}).items()}
    print(os.path.basename(f), w.get('name'), round((w.get('time_ms') or {}).get('median', 0), 4), ph)
    for n in d.get('notes', []):
        if 'confirmation round' in n or 'sustained timing' in n: print('  ', n)
    for r in d.get('results', []):
        if r['name'] in ('cudnn.nhwc', 'cudnn.nchw') and r.get('time_ms'):
            print('  ', r['name'], round(r['time_ms']['median'], 4), r['time_ms']['round'])
PY
cat $R/phases.txt
tar -C $OUT -czf $OUT/call87.tar.gz run
stamp gpu_tune_test
timeout $(( $(left) - 5 )) build/gpu_tune_test > $R/gpu_tune_test.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|tests? from .* ran" $R/gpu_tune_test.log | tail -4
cp $R/gpu_tune_test.log $OUT/
stamp done
