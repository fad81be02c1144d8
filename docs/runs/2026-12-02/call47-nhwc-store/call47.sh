#!/usr/bin/env bash
# call 47: the halo kernel's NHWC stores through a pixel-major staging tile (e0). 1) the harness on
# four_blocks' conv1 with the template before (fused_conv_halo.before.cu.gz) and after, in one
# call; 2) gpu_fused_conv_test's NhwcOutputEveryTileAndOddK; 3) only if both say so (NHWC out
# verified and >= 10% faster): cold tunes of both presets, tf32 and fp32, for the shipped records
# (the template change retires the old ones), the tf32 exports timed against them; db dump.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
mkdir -p /tmp/ftdb47; export FUSETUNE_DB=/tmp/ftdb47/tuning.db
t0=$(date +%s); left() { echo $(( ${LIMIT:-540} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_fused_conv_test build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
D=docs/runs/2026-12-02/call47-nhwc-store
mkdir -p /tmp/kt-before && cp kernel_templates/* /tmp/kt-before/ && zcat $D/fused_conv_halo.before.cu.gz > /tmp/kt-before/fused_conv_halo.cu
stamp "harness builds (before, after)"
CONFIGS=bench/fused_conv/configs-nhwc-store.txt OUTDIR=/tmp/h-before TEMPLATES=/tmp/kt-before bash bench/fused_conv/run_harness.sh build-only &
CONFIGS=bench/fused_conv/configs-nhwc-store.txt OUTDIR=/tmp/h-after bash bench/fused_conv/run_harness.sh build-only
wait
for v in before after; do
  CONFIGS=bench/fused_conv/configs-nhwc-store.txt OUTDIR=/tmp/h-$v bash bench/fused_conv/run_harness.sh run-only > $R/harness-$v.txt 2>&1
  echo "-- $v"; cat $R/harness-$v.txt | cut -c1-400
done
pack
stamp "gpu_fused_conv_test NhwcOutputEveryTileAndOddK"
timeout 150 build/gpu_fused_conv_test --gtest_filter='*NhwcOutput*' > $R/gpu-fused-conv-nhwc.log 2>&1; trc=$?
echo "rc=$trc"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]|OK \]|Failure" $R/gpu-fused-conv-nhwc.log | head
med() { grep "^config $1 " $R/harness-$2.txt | grep -o "median [0-9.]*" | head -1 | awk '{print $2}'; }
b=$(med 2 before); a=$(med 2 after); echo "NHWC out e0: before $b ms, after $a ms"
go=$(awk -v a="$a" -v b="$b" 'BEGIN{print (a != "" && b != "" && a < 0.9 * b) ? 1 : 0}')
if [ "$trc" != 0 ] || [ "$go" != 1 ]; then stamp "stop: not landing this (tests rc=$trc, gain gate $go)"; pack; exit 0; fi
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
if [ $(left) -gt 40 ]; then
  stamp "tf32 exports, timed against tune's figures"
  for p in kernelbench-31 kernelbench-32; do build/fusetune export --preset $p --math tf32 --format torch -o $R/$p-tf32.py; done
  timeout $(( $(left) - 5 )) python3 bench/check_torch_export.py --m31 $R/kernelbench-31-tf32.py --m32 $R/kernelbench-32-tf32.py \
    --math tf32 --tune-json-dir $R > $R/export-check.log 2>&1; echo "rc=$?"; tail -8 $R/export-check.log
fi
kill $smi; gzip -f $R/smi.csv $R/*.json $R/*.py 2>/dev/null
stamp done; pack
