#!/usr/bin/env bash
# call 79 (issue 11): cold tunes of three binaries in one sitting, alternating, so that the
# host's compile speed (which moved call 77's compile waits) is the same for all three:
#   old    .gpu/fusetune-8cdf73f  call 76's code
#   ahead  .gpu/fusetune-ahead    + cuDNN plans built ahead on a second worker thread, the
#                                 reference's NVRTC compiles started before the context (call 77)
#   look   .gpu/fusetune          + the compile pool takes the guided search's lookahead first
# kernelbench-31 three times each and kernelbench-32 twice each, fresh database, compile cache and
# CUDA cache per tune, each traced. One tar of everything (the device tool returns 8 files).
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s)
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
nproc; uptime
order=(old ahead look)
k=0
for t in kernelbench-31:1 kernelbench-31:2 kernelbench-31:3 kernelbench-32:1 kernelbench-32:2; do
  p=${t%%:*}; n=${t##*:}
  for j in 0 1 2; do
    b=${order[$(( (j + k) % 3 ))]}
    case $b in old) exe=.gpu/fusetune-8cdf73f;; ahead) exe=.gpu/fusetune-ahead;; look) exe=.gpu/fusetune;; esac
    d=$(mktemp -d); s=$(date +%s.%N)
    FUSETUNE_TRACE=$R/trace-$p-$n-$b.txt FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout 90 $exe tune --preset $p --force \
      --json $R/tune-$p-$n-$b.json > $R/tune-$p-$n-$b.txt 2> $R/tune-$p-$n-$b.err
    rc=$?; e=$(date +%s.%N); echo "tune-$p-$n-$b rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-time.txt
  done
  k=$(( k + 1 ))
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
tar -C $OUT -czf $OUT/call79.tar.gz run
stamp done
