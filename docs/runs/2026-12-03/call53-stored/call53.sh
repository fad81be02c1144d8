#!/usr/bin/env bash
# call 53 (issue 11): binaries of call 52 plus the noise-aware settle rule of the sustained
# timing (a window median's standard error) and a confirmation round with one floor (the
# fastest). Where a stored answer's time goes (stored_probe.py,
# LD_DEBUG=statistics); the tuning-time bench again, guided strategy, without torch.compile
# (call 52 measured it); gpu_tune_test.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-580} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_*_test build/
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
D=$(dirname "$0")

stamp "stored answer"
db=/tmp/ftdb53; rm -rf $db; mkdir -p $db
CUDA_CACHE_PATH=$db/cuda build/fusetune tune --preset kernelbench-31 --db $db/tuning.db -q > /dev/null 2>&1; echo "seed tune rc=$?"
{ LD_DEBUG=statistics build/fusetune --help 2>&1 >/dev/null | grep -E "total startup|relocation|load" | head -8
  python3 $D/stored_probe.py build/fusetune $db/tuning.db --preset kernelbench-31; } > $R/stored-probe.txt 2>&1
cat $R/stored-probe.txt; pack

stamp "tuning-time bench (model)"
timeout $(( $(left) - 160 )) python3 bench/bench_tuning_time.py --fusetune build/fusetune --strategies model \
  --no-compile --json-dir $R/tt > $R/tunetime.txt 2>&1; echo "rc=$?"
cat $R/tunetime.txt; gzip -f $R/tt/*.json 2>/dev/null; pack

stamp gpu_tune_test
timeout $(( $(left) - 5 )) build/gpu_tune_test > $R/gpu_tune_test.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/gpu_tune_test.log | tail -6
stamp done; pack
