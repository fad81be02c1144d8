#!/usr/bin/env bash
# call 41: call 40's binaries in fp32 (3xTF32): cold fp32 tunes of both presets (sustained
# confirmation) and their exported modules timed against fusetune's own figures (issue 14);
# gpu_fused_conv_test's 3xTF32 tests; #31's conv with mish | mish again (finalists within 10%).
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
mkdir -p /tmp/ftdb41; export FUSETUNE_DB=/tmp/ftdb41/tuning.db
t0=$(date +%s); left() { echo $(( ${LIMIT:-500} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_fused_conv_test build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 100 > $R/smi.csv 2>&1 &
smi=$!
tune() {  # name math args...
  local name=$1 math=$2 s e rc; shift 2; s=$(date +%s.%N)
  timeout $(left) build/fusetune tune "$@" --math $math --force --all --json $R/tune-$name-$math.json \
    > $R/tune-$name-$math.txt 2>$R/tune-$name-$math.err; rc=$?; e=$(date +%s.%N)
  echo "tune $name $math --force (cold): rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-times.txt
  grep -E "^(winner|tie)" $R/tune-$name-$math.txt; grep -E "^[*~ ] " $R/tune-$name-$math.txt | head -5; tail -1 $R/tune-$name-$math.err
  pack
}
tune kernelbench-31 fp32 --preset kernelbench-31
tune kernelbench-32 fp32 --preset kernelbench-32
stamp "exports, timed against tune's figures"
for p in kernelbench-31 kernelbench-32; do build/fusetune export --preset $p --math fp32 --format torch -o $R/$p-fp32.py; done
timeout $(left) python3 bench/check_torch_export.py --m31 $R/kernelbench-31-fp32.py --m32 $R/kernelbench-32-fp32.py \
  --math fp32 --tune-json-dir $R > $R/export-check.log 2>&1; echo "rc=$?"; grep -E "exported module|FAIL|passed" $R/export-check.log
build/fusetune db dump -o $R/h200.jsonl
gzip -f $R/*.json; pack
stamp "gpu_fused_conv_test 3xTF32"
timeout 150 build/gpu_fused_conv_test --gtest_filter='*ThreeTf32*:*WideRange*' > $R/gpu-fused-conv-3x.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|OK \]|Failure" $R/gpu-fused-conv-3x.log | head
pack
[ $(left) -gt 100 ] && tune pipe-mish-mish tf32 "conv2d(n=128,c=64,h=128,w=128,k=128,r=3) | mish | mish"
build/fusetune db dump -o $R/h200.jsonl
gzip -f $R/*.json
kill $smi; gzip -f $R/smi.csv
stamp done; pack
