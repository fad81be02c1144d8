#!/usr/bin/env bash
# call 54 (issue 11): the device description cache (a stored answer starts no worker), cuDNN's
# conv choice verified after timing (fastest first, until one passes) and, for the guided
# strategy, only the first 8 graph configurations in heuristics order built and timed; notes on
# where each sustained plan's time goes. Stored-answer probe, the tuning-time bench (model, no
# torch.compile: call 52 measured it), two more cold model tunes of kernelbench-32 (its winner
# varied in call 53), gpu_tune_test and gpu_cudnn_test.
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

stamp "seed tune (cold, model) and the stored answer"
db=/tmp/ftdb54; rm -rf $db; mkdir -p $db
/usr/bin/time -f "seed tune wall %e s" env CUDA_CACHE_PATH=$db/cuda build/fusetune tune --preset kernelbench-31 --db $db/tuning.db --json $R/seed.json -q > $R/seed.txt 2>&1; echo "seed tune rc=$?"
tail -2 $R/seed.txt; ls -la ~/.cache/fusetune/devices/ > $R/device-cache-ls.txt 2>&1
python3 $D/stored_probe.py build/fusetune $db/tuning.db --preset kernelbench-31 > $R/stored-probe.txt 2>&1
build/fusetune tune --preset kernelbench-31 --db $db/tuning.db --json $R/stored.json > $R/stored.txt 2>&1
grep -o '"device_cached":[a-z]*' $R/stored.json
cat $R/stored-probe.txt; pack

stamp "tuning-time bench (model)"
timeout $(( $(left) - 230 )) python3 bench/bench_tuning_time.py --fusetune build/fusetune --strategies model \
  --no-compile --json-dir $R/tt > $R/tunetime.txt 2>&1; echo "rc=$?"
cat $R/tunetime.txt; gzip -f $R/tt/*.json 2>/dev/null; pack

stamp "kernelbench-32 cold, model, twice more"
for i in 1 2; do
  [ $(left) -lt 200 ] && break
  d=/tmp/ftdb54-32-$i; rm -rf $d; mkdir -p $d
  /usr/bin/time -f "kb32 cold $i wall %e s" env CUDA_CACHE_PATH=$d/cuda build/fusetune tune --preset kernelbench-32 --db $d/tuning.db --json $R/kb32-cold-$i.json -q > $R/kb32-cold-$i.txt 2>&1
  tail -1 $R/kb32-cold-$i.txt; python3 -c "import json;d=json.load(open('$R/kb32-cold-$i.json'));print(d['winner']['name'],d['winner']['time_ms']['median'])"
done; gzip -f $R/kb32-cold-*.json; pack

stamp gpu_tune_test
timeout $(( $(left) - 45 )) build/gpu_tune_test > $R/gpu_tune_test.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/gpu_tune_test.log | tail -6
stamp gpu_cudnn_test
timeout $(( $(left) - 3 )) build/gpu_cudnn_test > $R/gpu_cudnn_test.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/gpu_cudnn_test.log | tail -6
stamp done; pack
