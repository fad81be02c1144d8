#!/usr/bin/env bash
# call 56 (issue 11): after call 55, tune's --json document takes the driver's version from the
# device description (a stored answer with --json no longer initialises the driver). Stored
# probe with --json; the tuning-time bench again (model; call 55's files did not come back);
# exhaustive cold tunes of both presets in the same call, for the guided winner's 2% bar.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-585} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune build/
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
D=$(dirname "$0")
rm -rf ~/.cache/fusetune/devices

stamp "stored answer"
db=/tmp/ftdb56; rm -rf $db; mkdir -p $db
build/fusetune tune --preset kernelbench-31 --db $db/tuning.db -q > /dev/null 2>&1; echo "seed (shipped record) rc=$?"
python3 $D/stored_probe.py build/fusetune $db/tuning.db --preset kernelbench-31 > $R/stored-probe.txt 2>&1
cat $R/stored-probe.txt; pack

stamp "tuning-time bench (model)"
timeout $(( $(left) - 200 )) python3 bench/bench_tuning_time.py --fusetune build/fusetune --strategies model \
  --no-compile --json-dir $R/tt > $R/tunetime.txt 2>&1; echo "rc=$?"
cat $R/tunetime.txt; gzip -f $R/tt/*.json 2>/dev/null; pack

stamp "exhaustive cold tunes of the presets"
for p in kernelbench-31 kernelbench-32; do
  [ $(left) -lt 100 ] && break
  d=/tmp/ftdb56-$p; rm -rf $d; mkdir -p $d
  /usr/bin/time -f "$p exhaustive cold wall %e s" env CUDA_CACHE_PATH=$d/cuda build/fusetune tune --preset $p --force \
    --strategy exhaustive --db $d/tuning.db -q --json $R/$p-exhaustive-cold.json > $R/$p-exhaustive.txt 2>&1
  tail -1 $R/$p-exhaustive.txt
  python3 -c "import json;d=json.load(open('$R/$p-exhaustive-cold.json'));w=d['winner'];print(w['name'],w['time_ms']['median'],d['phases_s'])"
  gzip -f $R/$p-exhaustive-cold.json; pack
done
stamp done; pack
