#!/usr/bin/env bash
# call 59 (issues 8 and 10): the bench with interleaved rounds (bench_timing.bench_interleaved:
# eager, torch.compile, the exported module, the replay and fusetune's unfused pipeline in turn,
# 7 rounds) on call 58's preset winners (now the shipped records: `export` on a fresh database
# writes them); op_throughput with the new renderings (every op once and twice, the pairs of the
# costliest, NCHW and NHWC, beside a device copy); gpu_tune_test and gpu_cudnn_fused_test.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
mkdir -p /tmp/ftdb59; export FUSETUNE_DB=/tmp/ftdb59/tuning.db
t0=$(date +%s); left() { echo $(( ${LIMIT:-585} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_*_test .gpu/op_throughput build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 100 > $R/smi.csv 2>&1 &
smi=$!

stamp "bench_presets --reuse --export, interleaved"
for p in kernelbench-31 kernelbench-32; do
  zcat docs/runs/2026-12-03/call58-op-math/tune-$p-tf32.json.gz > $R/tune-$p-tf32.json
done
timeout 240 python3 bench/bench_presets.py --fusetune build/fusetune --json-dir $R --reuse --export \
  > $R/bench-presets-tf32.md 2> $R/bench-presets-tf32.err; echo "bench rc=$?"
cat $R/bench-presets-tf32.md; grep -E "medians of|took|Error|error" $R/bench-presets-tf32.err | head; rm -f $R/tune-*.json; pack

stamp op_throughput
timeout 150 build/op_throughput --chains bench/op_math/chains.txt > $R/op-throughput.md 2> $R/op-throughput.err
echo "rc=$?"; grep -E "copy|^\| (mish|gelu|softplus|log|gelu_tanh|tanh|sigmoid|silu)" $R/op-throughput.md | head -40; tail -2 $R/op-throughput.err; pack

stamp "gpu_cudnn_fused_test, gpu_tune_test"
for t in gpu_cudnn_fused_test gpu_tune_test; do
  timeout $(( $(left) - 3 )) build/$t > $R/$t.log 2>&1; echo "$t rc=$?"
  grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/$t.log | tail -4
done
kill $smi; gzip -f $R/smi.csv 2>/dev/null
stamp done; pack
