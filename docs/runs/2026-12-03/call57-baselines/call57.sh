#!/usr/bin/env bash
# call 57 (issue 11): the baselines phase without its own interleaved round (the floors' and
# baselines' interleaved figures come from the finalist round; the conv-alone figure that stands
# in for every design's conv step while the solutions are compared is the floors' first pass).
# The tuning-time bench (model, no torch.compile) and gpu_tune_test.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-585} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_*_test build/
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }

stamp "tuning-time bench (model)"
timeout $(( $(left) - 150 )) python3 bench/bench_tuning_time.py --fusetune build/fusetune --strategies model \
  --no-compile --json-dir $R/tt > $R/tunetime.txt 2>&1; echo "rc=$?"
cat $R/tunetime.txt; gzip -f $R/tt/*.json 2>/dev/null; pack
R=$R python3 - <<'PY'
import glob, gzip, json, os
for f in sorted(glob.glob(os.environ.get("R", "/tmp/o/run") + "/tt/*-cold.json.gz")):
    d = json.load(gzip.open(f))
    print(os.path.basename(f), {k: round(v, 2) for k, v in d["phases_s"].items()})
PY
stamp gpu_tune_test
timeout $(( $(left) - 3 )) build/gpu_tune_test > $R/gpu_tune_test.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/gpu_tune_test.log | tail -6
stamp done; pack
