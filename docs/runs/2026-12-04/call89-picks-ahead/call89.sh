#!/usr/bin/env bash
# call 89 (issue 11): cuDNN plans asked for ahead only for the guided search's predicted picks
# (GuidedSearch::picks), not its ranking's head: near the search's end the head holds configurations
# it never picks, and in calls 85-87 every cold kernelbench-32 tune asked for one 0.2-0.4 s before
# the search ended and its finalist round waited for the build (PlanPrebuilder::settle). Cold
# tunes of kernelbench-32 (twice), kernelbench-31 and bench/problems.txt's second problem, fresh
# database, compile cache and CUDA cache each, traced.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
N=$(mktemp -d) && tar -C $N -xJf .gpu/bins.tar.xz
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$N/lib"
i=0
for p in --preset=kernelbench-32 --preset=kernelbench-31 --preset=kernelbench-32 \
         "conv2d(n=4,c=32,h=56,w=56,k=64,r=3,pad=1) | relu | reduce_max(channel)"; do
  i=$((i + 1)); d=$(mktemp -d); s=$(date +%s.%N)
  FUSETUNE_TRACE=$R/trace-$i.txt FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout 90 $N/fusetune tune "$p" --force \
    --json $R/tune-$i.json > $R/tune-$i.txt 2> $R/tune-$i.err
  rc=$?; e=$(date +%s.%N); echo "tune-$i ($p) rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-time.txt
done
for f in $R/trace-*.txt; do
  awk -v f=$(basename $f) '/builds the cuDNN plan/{last=$1; n++} /waiting for the compile/{t=$1} /compile in/{w+=$1-t} /phase measure ends/{me=$1} /phase finalists begins/{fb=$1} /phase finalists ends/{fe=$1} END{printf "%s: %d plans asked ahead, the last at %.2f; measure ends %.2f; finalists %.2f s; compile waits %.2f s\n", f, n, last, me, fe-fb, w}' $f
done | tee $R/ahead.txt
python3 - $R > $R/phases.txt <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + '/tune-*.json')):
    d = json.load(open(f)); w = d.get('winner') or {}
    ph = {k: round(v, 2) for k, v in (d.get('phases_s') or {}).items()}
    print(os.path.basename(f), w.get('name'), round((w.get('time_ms') or {}).get('median', 0), 4), ph)
    for n in d.get('notes', []):
        if 'built ahead' in n or 'confirmation round' in n or 'sustained timing' in n: print('  ', n)
PY
cat $R/phases.txt
tar -C $OUT -czf $OUT/call89.tar.gz run
