#!/usr/bin/env bash
# call 55 (issues 11 and 8): the guided search measuring while the solutions compile (most
# promising first; the pool stops with the search), the stored answer without cuInit when the
# device description is cached. Stored-answer probe; the tuning-time bench (model, no
# torch.compile); fresh tunes of both presets and bench_presets.py --export (eager,
# torch.compile max-autotune, the exported module and the replay in one run); gpu_tune_test.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-585} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_*_test build/
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
D=$(dirname "$0")
rm -rf ~/.cache/fusetune/devices

stamp "stored answer"
db=/tmp/ftdb55; rm -rf $db; mkdir -p $db
build/fusetune tune --preset kernelbench-31 --db $db/tuning.db -q > /dev/null 2>&1; echo "seed (shipped record) rc=$?"
python3 $D/stored_probe.py build/fusetune $db/tuning.db --preset kernelbench-31 > $R/stored-probe.txt 2>&1
cat $R/stored-probe.txt; pack

stamp "tuning-time bench (model)"
timeout $(( $(left) - 330 )) python3 bench/bench_tuning_time.py --fusetune build/fusetune --strategies model \
  --no-compile --json-dir $R/tt > $R/tunetime.txt 2>&1; echo "rc=$?"
cat $R/tunetime.txt; gzip -f $R/tt/*.json 2>/dev/null; pack

stamp "fresh preset tunes, then bench_presets --export"
export FUSETUNE_DB=/tmp/ftdb55b/tuning.db; rm -rf /tmp/ftdb55b; mkdir -p /tmp/ftdb55b
for p in kernelbench-31 kernelbench-32; do
  build/fusetune tune --preset $p --math tf32 --force --json $R/tune-$p-tf32.json > $R/tune-$p-tf32.txt 2>&1; echo "$p rc=$?"
  grep -E "^winner|^ *fused|best" $R/tune-$p-tf32.txt | head -3
done
timeout $(( $(left) - 160 )) python3 bench/bench_presets.py --fusetune build/fusetune --json-dir $R --reuse --export \
  > $R/bench-presets-tf32.md 2> $R/bench-presets-tf32.err; echo "bench rc=$?"
cat $R/bench-presets-tf32.md; tail -5 $R/bench-presets-tf32.err; gzip -f $R/tune-*.json; pack

stamp gpu_tune_test
timeout $(( $(left) - 3 )) build/gpu_tune_test > $R/gpu_tune_test.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/gpu_tune_test.log | tail -6
stamp done; pack
