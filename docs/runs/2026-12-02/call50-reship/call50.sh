#!/usr/bin/env bash
# call 50: the harness question of configs-epi-count.txt (does `mish | mish` cost what its
# instructions cost inside the fused conv?), built here (.gpu/harness); cold tunes of both presets,
# tf32 and fp32, for the shipped records (FT_EPI_WG 2 changed the template); db dump; then
# gpu_fused_conv_test's other tests (call 49 ran the new one) in the time left.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
mkdir -p /tmp/ftdb50; export FUSETUNE_DB=/tmp/ftdb50/tuning.db
t0=$(date +%s); left() { echo $(( ${LIMIT:-575} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_fused_conv_test build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 100 > $R/smi.csv 2>&1 &
smi=$!
stamp "harness (configs-epi-count)"
OUTDIR=.gpu/harness CONFIGS=bench/fused_conv/configs-epi-count.txt timeout 90 bash bench/fused_conv/run_harness.sh run-only \
  > $R/harness.txt 2>&1
sed 's/ok: checked/\n   ok: checked/' $R/harness.txt | grep -E '^config|wrong' | cut -c1-200
pack
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
kill $smi; gzip -f $R/smi.csv $R/*.json 2>/dev/null
stamp "gpu_fused_conv_test, the other tests"
timeout $(( $(left) - 5 )) build/gpu_fused_conv_test --gtest_filter='-*TwoEpilogue*' > $R/gpu-fused-conv.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|OK \]|Failure" $R/gpu-fused-conv.log | head -20
stamp done; pack
