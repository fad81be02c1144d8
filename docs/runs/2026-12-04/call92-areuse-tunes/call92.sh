#!/usr/bin/env bash
# call 92 (issues 8 and 11): this tree's binaries (.gpu/bins.tar.xz: the A-fragment reuse of call
# 91 in the template; the tuner's first-pass cut for solutions out of reach and the finalist round
# without the references it cannot decide). Cold traced `tune --force --json` of kernelbench-31
# three times and kernelbench-32 once (fresh database, compile cache and CUDA cache each); then
# `scripts/gpu_check.sh tune bench` in tf32 (both presets tuned cold into one database, then
# bench/bench_presets.py: eager, torch.compile max-autotune, the exported module and the replay,
# interleaved); then gpu_tune_test.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
tar -C .gpu -xJf .gpu/bins.tar.xz
mkdir -p build && cp -f .gpu/fusetune .gpu/*_test build/
venv_cudnn=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib
export LD_LIBRARY_PATH="$venv_cudnn:$(pwd)/.gpu/lib"
if [ "$(pwd)" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$(pwd)" /work/main; fi
T=$R/cold; mkdir -p $T
i=0
for p in --preset=kernelbench-31 --preset=kernelbench-32 --preset=kernelbench-31 --preset=kernelbench-31; do
  i=$((i + 1)); d=$(mktemp -d); s=$(date +%s.%N)
  FUSETUNE_TRACE=$T/trace-$i.txt FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout 90 build/fusetune tune "$p" --force \
    --json $T/tune-$i.json > $T/tune-$i.txt 2> $T/tune-$i.err
  rc=$?; e=$(date +%s.%N); echo "tune-$i ($p) rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $T/tune-time.txt
done
python3 - $T > $T/phases.txt <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + '/tune-*.json')):
    d = json.load(open(f)); w = d.get('winner') or {}
    ph = {k: round(v, 2) for k, v in (d.get('phases_s') or {}).items()}
    print(os.path.basename(f), w.get('name'), round((w.get('time_ms') or {}).get('median', 0), 4), ph)
    for n in d.get('notes', []):
        if 'built ahead' in n or 'confirmation round' in n or 'sustained timing' in n or 'guided search' in n: print('  ', n)
    for r in d['results']:
        t = r.get('time_ms') or {}
        print('    %-45s %-12s %3s %.4f' % (r['name'], t.get('round'), t.get('count'), t.get('median') or 0))
PY
cat $T/tune-time.txt; head -30 $T/phases.txt
MATHS=tf32 EXTRA=0 OUT=$OUT timeout 330 bash scripts/gpu_check.sh tune bench 2>&1 | tail -40
echo "== gpu_tune_test $(date -u +%H:%M:%S)"
timeout 150 build/gpu_tune_test --gtest_brief=1 > $R/gpu-tune-test.log 2>&1; echo "gpu_tune_test rc=$?"; tail -5 $R/gpu-tune-test.log
tar -C $OUT -czf $OUT/call92.tar.gz run
