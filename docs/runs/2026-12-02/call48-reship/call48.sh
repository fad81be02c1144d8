#!/usr/bin/env bash
# call 48: call 47's template with the test's third shape mended (a stride-2 3x3 conv has no halo
# variant): gpu_fused_conv_test's NhwcOutputEveryTileAndOddK, then, if it passes, cold tunes of both
# presets, tf32 and fp32, for the shipped records (the template change retires the old ones); db
# dump; then `scripts/gpu_check.sh patch` for python/examples/four_blocks.py (its blocks tuned cold).
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
mkdir -p /tmp/ftdb48; export FUSETUNE_DB=/tmp/ftdb48/tuning.db
t0=$(date +%s); left() { echo $(( ${LIMIT:-570} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_fused_conv_test build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
stamp "gpu_fused_conv_test NhwcOutputEveryTileAndOddK"
timeout 150 build/gpu_fused_conv_test --gtest_filter='*NhwcOutput*' > $R/gpu-fused-conv-nhwc.log 2>&1; trc=$?
echo "rc=$trc"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]|OK \]|Failure" $R/gpu-fused-conv-nhwc.log | head
if [ "$trc" != 0 ]; then stamp "stop: NHWC output not verified"; pack; exit 0; fi
pack
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 100 > $R/smi.csv 2>&1 &
smi=$!
tune() {  # name math args...
  local name=$1 math=$2 s e rc; shift 2; s=$(date +%s.%N)
  timeout $(left) build/fusetune tune "$@" --math $math --force --all --json $R/tune-$name-$math.json \
    > $R/tune-$name-$math.txt 2>$R/tune-$name-$math.err; rc=$?; e=$(date +%s.%N)
  echo "tune $name $math --force (cold): rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-times.txt
  grep -E "^(winner|tie)" $R/tune-$name-$math.txt; tail -1 $R/tune-$name-$math.err
  pack
}
tune kernelbench-31 tf32 --preset kernelbench-31
tune kernelbench-32 tf32 --preset kernelbench-32
tune kernelbench-31 fp32 --preset kernelbench-31
tune kernelbench-32 fp32 --preset kernelbench-32
build/fusetune db dump -o $R/h200.jsonl
kill $smi; gzip -f $R/smi.csv $R/*.json $R/*.py 2>/dev/null
stamp "patch four_blocks"
PATCH_FILTER=four_blocks timeout $(( $(left) - 5 )) scripts/gpu_check.sh patch; echo "patch rc=$?"
build/fusetune db dump -o $R/h200-after-patch.jsonl; gzip -f $R/h200-after-patch.jsonl
stamp done; pack
