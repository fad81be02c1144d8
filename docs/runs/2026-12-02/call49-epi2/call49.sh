#!/usr/bin/env bash
# call 49: two epilogue warpgroups (FT_EPI_WG 2, issue 10). The harness, built here from this
# commit's template (.gpu/harness/h1..h13, bench/fused_conv/configs-epi2.txt), 200 timed
# launches each beside nvidia-smi; gpu_fused_conv_test's new TwoEpilogueWarpgroups test (every
# fused-conv variant of four shapes verified in the worker); then cold tunes of kernelbench-31's
# conv followed by relu, mish | mish and gelu | softplus (issue 10's pipeline figure).
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
mkdir -p /tmp/ftdb49; export FUSETUNE_DB=/tmp/ftdb49/tuning.db
t0=$(date +%s); left() { echo $(( ${LIMIT:-570} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_fused_conv_test build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 100 > $R/smi.csv 2>&1 &
smi=$!
stamp "harness (configs-epi2)"
OUTDIR=.gpu/harness CONFIGS=bench/fused_conv/configs-epi2.txt timeout 150 bash bench/fused_conv/run_harness.sh run-only \
  > $R/harness.txt 2>&1
cat $R/harness.txt | sed 's/ok: checked/\n   ok: checked/' | grep -E '^config|wrong' | cut -c1-220
pack
stamp "gpu_fused_conv_test TwoEpilogueWarpgroups"
timeout 200 build/gpu_fused_conv_test --gtest_filter='*TwoEpilogue*' > $R/gpu-fused-conv-e2.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|OK \]|Failure" $R/gpu-fused-conv-e2.log | head
pack
tune() {  # name math args...
  local name=$1 math=$2 s e rc; shift 2; s=$(date +%s.%N)
  timeout $(left) build/fusetune tune "$@" --math $math --force --all --json $R/tune-$name-$math.json \
    > $R/tune-$name-$math.txt 2>$R/tune-$name-$math.err; rc=$?; e=$(date +%s.%N)
  echo "tune $name $math --force (cold): rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-times.txt
  grep -E "^(winner|tie)" $R/tune-$name-$math.txt; grep -E '^[*~] ' $R/tune-$name-$math.txt | head -4; tail -1 $R/tune-$name-$math.err
  pack
}
conv="conv2d(n=128,c=64,h=128,w=128,k=128,r=3)"
tune pipe-mish-mish tf32 "$conv | mish | mish"
tune pipe-relu tf32 "$conv | relu"
tune pipe-gelu-softplus tf32 "$conv | gelu | softplus"
build/fusetune db dump -o $R/h200.jsonl; gzip -f $R/h200.jsonl
kill $smi; gzip -f $R/smi.csv $R/*.json 2>/dev/null
stamp done; pack
