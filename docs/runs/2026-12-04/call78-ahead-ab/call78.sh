#!/usr/bin/env bash
# call 78 (issue 11): A/B of cold tunes in one sitting, since call 77's compile waits (3.9-6.0 s
# against call 76's 0.4-2.2) cannot be compared across machines: the binary of 8cdf73f (call 76's
# code, `.gpu/fusetune-8cdf73f`) and this change's (`.gpu/fusetune`: cuDNN plans built ahead,
# reference compiles before the context), alternating, kernelbench-31 three times each and
# kernelbench-32 twice each, fresh database, compile cache and CUDA cache per tune, each traced.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s)
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
nproc; uptime
for t in kernelbench-31:1 kernelbench-31:2 kernelbench-31:3 kernelbench-32:1 kernelbench-32:2; do
  p=${t%%:*}; n=${t##*:}
  for b in old new; do
    exe=.gpu/fusetune; [ $b = old ] && exe=.gpu/fusetune-8cdf73f
    d=$(mktemp -d); s=$(date +%s.%N)
    FUSETUNE_TRACE=$R/trace-$p-$n-$b.txt FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout 90 $exe tune --preset $p --force \
      --json $R/tune-$p-$n-$b.json > $R/tune-$p-$n-$b.txt 2> $R/tune-$p-$n-$b.err
    rc=$?; e=$(date +%s.%N); echo "tune-$p-$n-$b rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-time.txt
  done
done
python3 - $R > $R/phases.txt <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + '/tune-*.json')):
    d = json.load(open(f)); w = d.get('winner') or {}
    ph = {k: round(v, 2) for k, v in (d.get('phases_s') or {}).items()}
    print(os.path.basename(f), w.get('name'), round((w.get('time_ms') or {}).get('median', 0), 4), ph)
PY
cat $R/phases.txt
for f in $R/trace-*.txt; do
  echo "$(basename $f): compile waits $(awk '/waiting for the compile/{t=$1} /compile in/{s+=$1-t} END{printf "%.2f", s}' $f) s, ends $(tail -1 $f | awk '{print $1}')"
done
tar -C $OUT -czf $OUT/call78.tar.gz run
stamp done
