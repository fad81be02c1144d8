#!/usr/bin/env bash
# call 85 (issue 11): the guided search's cold tunes with the baselines' sustained confirmation
# started as the search begins (new, .gpu/bins.tar.xz) against it started at the search's first
# wait for a compile (old, .gpu/old.tar.xz: 5e44aab, calls 83's binary), alternating in one
# sitting: kernelbench-31 three times each, kernelbench-32 twice each, fresh database, compile
# cache and CUDA cache per tune, each traced; a stored answer; then gpu_tune_test of the new code.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-560} - ($(date +%s) - t0) )); }
N=$(mktemp -d) && tar -C $N -xJf .gpu/bins.tar.xz
O=$(mktemp -d) && tar -C $O -xJf .gpu/old.tar.xz
mkdir -p build && cp -f $N/fusetune $N/gpu_*_test build/  # the tests start build/fusetune as their worker
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$N/lib"
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
nproc; uptime
k=0
for t in kernelbench-31:1 kernelbench-31:2 kernelbench-31:3 kernelbench-32:1 kernelbench-32:2; do
  p=${t%%:*}; n=${t##*:}
  for j in 0 1; do
    if [ $(( (j + k) % 2 )) -eq 0 ]; then b=new; exe=$N/fusetune; else b=old; exe=$O/fusetune; fi
    d=$(mktemp -d); s=$(date +%s.%N)
    FUSETUNE_TRACE=$R/trace-$p-$n-$b.txt FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout 90 $exe tune --preset $p --force \
      --json $R/tune-$p-$n-$b.json > $R/tune-$p-$n-$b.txt 2> $R/tune-$p-$n-$b.err
    rc=$?; e=$(date +%s.%N); echo "tune-$p-$n-$b rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-time.txt
    if [ $b = new ] && [ $p = kernelbench-31 ] && [ $n = 1 ]; then  # the stored answer, same database
      s=$(date +%s.%N); FUSETUNE_DB=$d/tuning.db $exe tune --preset $p > $R/stored-31.txt 2>&1
      rc=$?; e=$(date +%s.%N); echo "stored-31 rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-time.txt
    fi
  done
  k=$(( k + 1 ))
done
python3 - $R > $R/phases.txt <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + '/tune-*.json')):
    d = json.load(open(f)); w = d.get('winner') or {}
    ph = {k: round(v, 2) for k, v in (d.get('phases_s') or {}).items()}
    print(os.path.basename(f), w.get('name'), round((w.get('time_ms') or {}).get('median', 0), 4), ph)
    for n in d.get('notes', []):
        if 'confirmation round' in n or 'sustained timing' in n: print('  ', n)
PY
cat $R/phases.txt
for f in $R/trace-*.txt; do
  echo "$(basename $f): compile waits $(awk '/waiting for the compile/{t=$1} /compile in/{s+=$1-t} END{printf "%.2f", s}' $f) s, ends $(tail -1 $f | awk '{print $1}')"
done | tee $R/waits.txt
tar -C $OUT -czf $OUT/call85.tar.gz run
stamp gpu_tune_test
timeout $(( $(left) - 5 )) build/gpu_tune_test > $R/gpu_tune_test.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|tests? from .* ran" $R/gpu_tune_test.log | tail -4
cp $R/gpu_tune_test.log $OUT/
stamp done
