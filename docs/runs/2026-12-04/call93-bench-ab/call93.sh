#!/usr/bin/env bash
# call 93 (issues 8 and 11), this tree's binaries (.gpu/bins.tar.xz, as call 92) and 1711aca's
# fusetune (.gpu/old/fusetune, the stop before this one):
#  1. cold traced `tune --preset kernelbench-31 --force --json`, old and new alternating, three
#     each (fresh database, compile cache and CUDA cache each): the tuner's changes against the
#     host of the day (call 92's compile waits were 2.3-3.1 s, 0-1 s in call 90);
#  2. bench/bench_presets.py --export in tf32 on call 92's records (.gpu/h200-prev.jsonl): eager,
#     torch.compile max-autotune, the exported module and the replay, interleaved;
#  3. bench/bench_problems.py over bench/problems.txt's three large 32 <= C <= 256 problems and two
#     more (call 26's), each tuned cold here, beside eager and torch.compile.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
tar -C .gpu -xJf .gpu/bins.tar.xz
mkdir -p build && cp -f .gpu/fusetune .gpu/*_test build/
venv_cudnn=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib
export LD_LIBRARY_PATH="$venv_cudnn:$(pwd)/.gpu/lib"
if [ "$(pwd)" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$(pwd)" /work/main; fi
T=$R/cold; mkdir -p $T
i=0
for b in new old new old new old; do
  i=$((i + 1)); d=$(mktemp -d); s=$(date +%s.%N)
  exe=build/fusetune; [ $b = old ] && exe=.gpu/old/fusetune
  FUSETUNE_TRACE=$T/trace-$i.txt FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout 90 $exe tune --preset=kernelbench-31 --force \
    --json $T/tune-$i.json > $T/tune-$i.txt 2> $T/tune-$i.err
  rc=$?; e=$(date +%s.%N); echo "tune-$i ($b) rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $T/tune-time.txt
done
python3 - $T > $T/phases.txt <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + '/tune-*.json')):
    d = json.load(open(f)); w = d.get('winner') or {}
    ph = {k: round(v, 2) for k, v in (d.get('phases_s') or {}).items()}
    print(os.path.basename(f), w.get('name'), round((w.get('time_ms') or {}).get('median', 0), 4), ph)
PY
cat $T/phases.txt
export FUSETUNE_DB=/tmp/fusetune-db/tuning.db; mkdir -p /tmp/fusetune-db
build/fusetune db import .gpu/h200-prev.jsonl > $R/db-import.txt 2>&1
cp .gpu/tune-kernelbench-3*-tf32.json $R/ 2>/dev/null
echo "== bench presets $(date -u +%H:%M:%S)"
PYTHONUNBUFFERED=1 timeout 200 python3 bench/bench_presets.py --fusetune build/fusetune --json-dir $R --reuse --export \
  --math tf32 > $R/bench-presets-tf32.md 2> $R/bench-presets-tf32.err; echo "rc=$?"; cat $R/bench-presets-tf32.md | head -12
echo "== bench problems $(date -u +%H:%M:%S)"
mkdir -p $R/problems
PYTHONUNBUFFERED=1 timeout 300 python3 bench/bench_problems.py --fusetune build/fusetune --json-dir $R/problems \
  --spec-file <(grep -E '^conv2d\(n=(32|64|16),c=(128|32|256),h=(64|128|56)' bench/problems.txt) \
  "conv2d(n=32,c=64,h=112,w=112,k=128,r=3,pad=1) | relu | reduce_mean(channel)" \
  "conv2d(n=16,c=96,h=96,w=96,k=192,r=3,pad=1) | hardswish | add(param[k])" \
  > $R/bench-problems-tf32.md 2> $R/bench-problems-tf32.err; echo "rc=$?"; cat $R/bench-problems-tf32.md
echo "== end $(date -u +%H:%M:%S)"
tar -C $OUT -czf $OUT/call93.tar.gz run
