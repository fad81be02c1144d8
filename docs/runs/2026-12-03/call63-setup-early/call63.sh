#!/usr/bin/env bash
# call 63 (issue 11): call 62's tuner plus the worker's session setup asked for as soon as the
# device is known, so it runs while the tuner generates and compiles (call 62's prewarm of the
# context and cuDNN handle is gone: the early setup covers it). The tuning-time bench (model, no
# torch.compile), then the tests that drive the worker: gpu_tune_test, gpu_cudnn_test,
# gpu_cudnn_fused_test, and `fusetune smoke --require-gpu`.
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
        if n.startswith(("worker setup", "confirmation round of", "guided search")):
            print("   ", n)
PY
pack
for t in gpu_tune_test gpu_cudnn_fused_test gpu_cudnn_test; do
  stamp $t
  timeout $(( $(left) - 60 )) build/$t > $R/$t.log 2>&1; echo "$t rc=$?"
  grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/$t.log | tail -4; pack
done
stamp "smoke --require-gpu"
mkdir -p /tmp/ftdb63; FUSETUNE_DB=/tmp/ftdb63/smoke.db timeout $(( $(left) - 5 )) build/fusetune smoke --require-gpu > $R/smoke.txt 2>&1
echo "smoke rc=$?"; tail -4 $R/smoke.txt
kill $smi; gzip -f $R/smi.csv
stamp done; pack
