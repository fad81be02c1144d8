#!/usr/bin/env bash
# call 22: issue 10 (op renderings: device errors, PyTorch's errors, pass throughput, pipelines)
# and the fused-conv halo v6 harness.
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
venv_cudnn=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib
export LD_LIBRARY_PATH="$venv_cudnn:$(pwd)/.gpu/lib"
mkdir -p build && cp -f .gpu/fusetune .gpu/*_test .gpu/op_throughput build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
export FUSETUNE_DB=$R/tuning.db
echo "== $(date -u +%T) gpu_op_math_test"
build/gpu_op_math_test > $R/gpu-op-math.log 2>&1; echo "rc $?"; grep -E "PASSED|FAILED|Failure" $R/gpu-op-math.log | head
echo "== $(date -u +%T) torch accuracy"
python3 bench/op_math/op_accuracy_torch.py > $R/torch-op-accuracy.md 2>&1; echo "rc $?"; tail -3 $R/torch-op-accuracy.md
tar czf $OUT/run.tgz -C $OUT run
echo "== $(date -u +%T) op throughput"
timeout 240 build/op_throughput --chains bench/op_math/chains.txt > $R/op-throughput.md 2> $R/op-throughput.err; echo "rc $?"
tail -4 $R/op-throughput.md; tail -3 $R/op-throughput.err
tar czf $OUT/run.tgz -C $OUT run
echo "== $(date -u +%T) fused-conv v5 vs v6 harness"
CONFIGS=bench/fused_conv/configs-halo-v6.txt OUTDIR=$(pwd)/.fcbin timeout 150 bench/fused_conv/run_harness.sh run-only > $R/harness-halo-v6.txt 2>&1
cut -c1-400 $R/harness-halo-v6.txt | tail -30
tar czf $OUT/run.tgz -C $OUT run
for c in "relu" "mish | mish" "gelu | softplus"; do
  n=$(echo "$c" | tr -d ' |' ); echo "== $(date -u +%T) tune k31 conv | $c"
  timeout 100 build/fusetune tune "conv2d(n=128,c=64,h=128,w=128,k=128,r=3) | $c" --force --json $R/pipe-$n.json > $R/pipe-$n.txt 2>&1
  grep -E "^winner" $R/pipe-$n.txt
done
tar czf $OUT/run.tgz -C $OUT run
