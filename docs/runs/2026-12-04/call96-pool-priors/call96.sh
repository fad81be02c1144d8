#!/usr/bin/env bash
# call 96 (issue 11): the compile pool re-pointed at the guided search's lookahead as the worker's
# setup (the copy rate) and the baselines (the conv's time) come in, and a cuDNN conv step counted
# at its FLOP floor before the baselines (it counted 0: the pool's first order put the epilogue
# kernels and the fused conv's N = 64 tiles first, call 95's traces). Cold traced tunes (fresh
# database, compile cache and CUDA cache), this tree's binary (new) and call 95's (old, .gpu/old/:
# same templates, so the same compiles) alternating: #31 three times each, #32 twice each; then
# gpu_tune_test.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
tar -C .gpu -xJf .gpu/bins.tar.xz
mkdir -p build && cp -f .gpu/fusetune .gpu/*_test build/
venv_cudnn=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib
export LD_LIBRARY_PATH="$venv_cudnn:$(pwd)/.gpu/lib"
if [ "$(pwd)" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$(pwd)" /work/main; fi
T=$R/cold; mkdir -p $T
i=0
for p in kernelbench-31 kernelbench-31 kernelbench-32 kernelbench-31 kernelbench-32; do
  for b in new old; do
    i=$((i + 1)); d=$(mktemp -d); s=$(date +%s.%N)
    bin=build/fusetune; [ $b = old ] && bin=.gpu/old/fusetune
    FUSETUNE_TRACE=$T/trace-$i.txt FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout 40 $bin tune \
      --preset $p --force --json $T/tune-$i.json > $T/tune-$i.txt 2> $T/tune-$i.err
    rc=$?; e=$(date +%s.%N); echo "tune-$i ($b, $p cold) rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $T/tune-time.txt
    grep -E "^(winner|tie)" $T/tune-$i.txt
  done
done
python3 - $T > $T/phases.txt <<'PY'
import json, sys, glob, os, re
for f in sorted(glob.glob(sys.argv[1] + '/tune-*.json'), key=lambda s: int(re.findall(r'\d+', os.path.basename(s))[0])):
    d = json.load(open(f)); w = d.get('winner') or {}
    ph = {k: round(v, 2) for k, v in (d.get('phases_s') or {}).items()}
    print(os.path.basename(f), w.get('name'), round((w.get('time_ms') or {}).get('median', 0), 4), ph)
    for n in d.get('notes', []):
        if 'confirmation round' in n or 'sustained timing' in n or 'guided search' in n: print('  ', n)
PY
cat $T/phases.txt
for f in $T/trace-*.txt; do echo "$(basename $f): $(grep -c 'waiting for the compile' $f) compile waits; $(awk '/waiting for the compile/ {w=$1} /compile in/ {s+=$1-w} END {printf "%.2f s", s}' $f)"; done | tee $T/waits.txt
echo "== gpu_tune_test $(date -u +%H:%M:%S)"
timeout 200 build/gpu_tune_test --gtest_brief=1 > $R/gpu-tune-test.log 2>&1; echo "gpu_tune_test rc=$?"; tail -5 $R/gpu-tune-test.log
tar -C $OUT -czf $OUT/call96.tar.gz run
