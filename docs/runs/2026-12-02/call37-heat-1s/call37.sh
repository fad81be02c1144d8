#!/usr/bin/env bash
# call 37: call 36 with 1 s of heat before the interleaved rounds instead of 300 ms: do the fp32
# (3xTF32) winners' figures now predict what their exported modules run at back to back?
cd "$(dirname "$0")/../../../.."  # run from the repository root
export OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
export FUSETUNE_DB=/tmp/ftdb37/tuning.db PYTHONUNBUFFERED=1
mkdir -p build && cp -f .gpu/fusetune build/
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
for math in fp32 tf32; do
  s=$(date +%s)
  build/fusetune tune --preset kernelbench-31 --math $math --force --json $R/tune-kernelbench-31-$math.json \
    > $R/tune-31-$math.txt 2>&1; echo "tune 31 $math rc=$? $(( $(date +%s) - s )) s"; grep "^winner" $R/tune-31-$math.txt
  build/fusetune export --preset kernelbench-31 --math $math --format torch -o $R/m31-$math.py 2>/dev/null
  python3 bench/check_torch_export.py --m31 $R/m31-$math.py --math $math --tune-json-dir $R 2>&1 | grep -E "exported module|passed|FAILED"
done
tar czf $OUT/run.tgz -C $OUT run
