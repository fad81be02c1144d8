#!/usr/bin/env bash
# call 58 (issues 10 and 8): cheaper epilogue math and the bias indexed by k.
#   1. harness, #31's shape, the templates before (.gpu/harness-old) and after (.gpu/harness-new)
#      in one run: x 2, mish | mish, gelu | softplus with one and two epilogue warpgroups
#      (bench/fused_conv/configs-bias-index.txt, built on the dev machine);
#   2. gpu_op_math_test: every op's NVRTC-compiled rendering over the dense sweep, both modes;
#   3. whole pipelines on #31's conv, cold: relu, mish | mish, gelu | softplus, silu | gelu_tanh;
#   4. both presets re-tuned cold in tf32 and fp32 for the shipped records (the templates
#      changed), the database dumped; then bench_presets --reuse --export on those winners
#      (eager, torch.compile max-autotune and the exported module in one run);
#   5. gpu_reference_test and gpu_layer_test (the reference bound's new xrel term).
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
mkdir -p /tmp/ftdb58; export FUSETUNE_DB=/tmp/ftdb58/tuning.db
t0=$(date +%s); left() { echo $(( ${LIMIT:-585} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_*_test build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 100 > $R/smi.csv 2>&1 &
smi=$!

stamp "harness, templates before and after"
for side in old new; do
  echo "-- templates $side" >> $R/harness.txt
  OUTDIR=.gpu/harness-$side CONFIGS=bench/fused_conv/configs-bias-index.txt timeout 60 \
    bash bench/fused_conv/run_harness.sh run-only >> $R/harness.txt 2>&1
done
sed 's/ok: checked/\n   ok: checked/' $R/harness.txt | grep -E '^--|^config|wrong' | sed -E 's/\(HALO.*REDUCE=0 //' | cut -c1-160
pack

stamp gpu_op_math_test
timeout 60 build/gpu_op_math_test > $R/gpu-op-math.log 2>&1; echo "rc=$?"
grep -E "^\||PASSED|FAILED|Failure" $R/gpu-op-math.log | head -40; pack

tune() {  # name math args...
  local name=$1 math=$2 s e rc; shift 2; s=$(date +%s.%N)
  timeout $(( $(left) - 200 )) build/fusetune tune "$@" --math $math --force --json $R/tune-$name-$math.json \
    > $R/tune-$name-$math.txt 2>$R/tune-$name-$math.err; rc=$?; e=$(date +%s.%N)
  echo "tune $name $math --force (cold): rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-times.txt
  grep -E "^(winner|tie)" $R/tune-$name-$math.txt; tail -1 $R/tune-$name-$math.err
  pack
}
stamp "pipelines on #31's conv"
conv="conv2d(n=128,c=64,h=128,w=128,k=128,r=3)"
tune pipe-relu tf32 "$conv | relu"
tune pipe-mish-mish tf32 "$conv | mish | mish"
tune pipe-gelu-softplus tf32 "$conv | gelu | softplus"
tune pipe-silu-gelu_tanh tf32 "$conv | silu | gelu_tanh"
rm -f $FUSETUNE_DB

stamp "presets, cold, for the shipped records"
tune kernelbench-31 tf32 --preset kernelbench-31
tune kernelbench-32 tf32 --preset kernelbench-32
tune kernelbench-31 fp32 --preset kernelbench-31
tune kernelbench-32 fp32 --preset kernelbench-32
build/fusetune db dump -o $R/h200.jsonl
stamp "bench_presets --reuse --export"
timeout $(( $(left) - 70 )) python3 bench/bench_presets.py --fusetune build/fusetune --json-dir $R --reuse --export \
  > $R/bench-presets-tf32.md 2> $R/bench-presets-tf32.err; echo "bench rc=$?"
cat $R/bench-presets-tf32.md; tail -3 $R/bench-presets-tf32.err; pack

stamp "gpu_reference_test, gpu_layer_test"
for t in gpu_layer_test gpu_reference_test; do
  timeout $(( $(left) - 3 )) build/$t > $R/$t.log 2>&1; echo "$t rc=$?"
  grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/$t.log | tail -4
done
kill $smi; gzip -f $R/smi.csv $R/*.json 2>/dev/null
stamp done; pack
