#!/usr/bin/env bash
# call 62 (issue 11): cold tunes with (1) the compile pool taking the head of the guided search's
# ranking first, (2) the baseline's and floor's sustained confirmation run while the search waits
# for a compile, (3) the finalist round heated 400 ms (was 1 s) and designs 25% behind sending one
# finalist, (4) plans after the first of a sustained round heated 100 ms (was 300), (5) the
# baselines' first pass capped at 40 samples / 0.25 s, (6) the worker's context and cuDNN handle
# made while the tuner compiles. The tuning-time bench (model, no torch.compile) and gpu_tune_test.
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
timeout $(( $(left) - 200 )) python3 bench/bench_tuning_time.py --fusetune build/fusetune --strategies model \
  --no-compile --json-dir $R/tt > $R/tunetime.txt 2>&1; echo "rc=$?"
cat $R/tunetime.txt; gzip -f $R/tt/*.json 2>/dev/null; pack
R=$R python3 - <<'PY' | tee $R/phases.txt
import glob, gzip, json, os
for f in sorted(glob.glob(os.environ.get("R", "/tmp/o/run") + "/tt/*.json.gz")):
    d = json.load(gzip.open(f))
    print(os.path.basename(f), {k: round(v, 2) for k, v in d["phases_s"].items()})
    for n in d["notes"]:
        if n.startswith(("worker setup", "confirmation round of", "sustained timing", "guided search")):
            print("   ", n)
PY
pack
stamp gpu_tune_test
timeout $(( $(left) - 5 )) build/gpu_tune_test > $R/gpu_tune_test.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/gpu_tune_test.log | tail -6
kill $smi; gzip -f $R/smi.csv
stamp done; pack
