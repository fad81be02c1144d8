#!/usr/bin/env bash
# call 64 (issue 11): main's final binaries (2e3d0ad): the tuning-time bench once more (model, no
# torch.compile: a second sample of the cold times), exhaustive cold tunes of the bench's two other
# problems (is the guided winner within 2% of exhaustive's there too?), gpu_tune_test.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-585} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_*_test build/
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 100 > $R/smi.csv 2>&1 &
smi=$!

stamp "tuning-time bench (model)"
timeout $(( $(left) - 330 )) python3 bench/bench_tuning_time.py --fusetune build/fusetune --strategies model \
  --no-compile --json-dir $R/tt > $R/tunetime.txt 2>&1; echo "rc=$?"
cat $R/tunetime.txt; gzip -f $R/tt/*.json 2>/dev/null; pack
R=$R python3 - <<'PY' | tee $R/phases.txt
import glob, gzip, json, os
for f in sorted(glob.glob(os.environ.get("R", "/tmp/o/run") + "/tt/*-cold.json.gz")):
    d = json.load(gzip.open(f))
    print(os.path.basename(f), {k: round(v, 2) for k, v in d.get("phases_s", {}).items()})
    for n in d.get("notes", []):
        if n.startswith(("worker setup", "confirmation round of", "guided search", "sustained timing")):
            print("   ", n)
PY
pack
stamp "exhaustive cold tunes of p2 and p3"
i=2
for spec in "conv2d(n=8,c=16,h=64,w=64,k=32,r=3,pad=1) | gelu | mul(2)" \
            "conv2d(n=4,c=32,h=56,w=56,k=64,r=3,pad=1) | relu | reduce_max(channel)"; do
  d=$(mktemp -d); s=$(date +%s.%N)
  FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout $(( $(left) - 130 )) build/fusetune tune "$spec" \
    --strategy exhaustive --force --json $R/tune-p$i-exhaustive.json > $R/tune-p$i-exhaustive.txt 2>&1
  rc=$?; e=$(date +%s.%N)
  echo "p$i exhaustive cold: rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/exhaustive-times.txt
  grep -E "^(winner|tie)" $R/tune-p$i-exhaustive.txt; gzip -f $R/tune-p$i-exhaustive.json; pack
  i=$((i + 1))
done
stamp gpu_tune_test
timeout $(( $(left) - 5 )) build/gpu_tune_test > $R/gpu_tune_test.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/gpu_tune_test.log | tail -4
kill $smi; gzip -f $R/smi.csv
stamp done; pack
