#!/usr/bin/env bash
# call 30: issue 13's wide-range GPU test; why the fused conv runs 5-10% slower in tune and the
# bench than in the harness (clocks under 200 back-to-back launches beside nvidia-smi, Nsight
# Compute on #31's and #32's winning configurations, the cost of the output stores); what two
# transcendental ops cost inside the fused conv (issue 10); from-torch's torch test (issue 14).
cd "$(dirname "$0")/../../../.."  # run from the repository root (this file moved here after the call)
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-560} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_fused_conv_test build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1 FUSETUNE_DB=/tmp/ftdb/tuning.db; mkdir -p /tmp/ftdb
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv > $R/gpu.csv

stamp "harness builds (background)"
HB=/tmp/hb; mkdir -p $HB
cat > $R/configs.txt <<'CFG'
HALO=6 TP=4 TQ=32 BN=128 STAGES=8 REDUCE=0 N=128 C=64 H=128 W=128 K=128 R=3 S=3 HARNESS_ITERS=200
HALO=6 TP=4 TQ=32 BN=128 STAGES=8 REDUCE=0 N=128 C=64 H=128 W=128 K=128 R=3 S=3 HARNESS_ITERS=200 HARNESS_CHAIN=1
HALO=6 TP=4 TQ=32 BN=128 STAGES=8 REDUCE=0 N=128 C=64 H=128 W=128 K=128 R=3 S=3 HARNESS_ITERS=200 HARNESS_NOSTORE=1
HALO=6 TP=8 TQ=16 BN=128 STAGES=8 REDUCE=1 N=64 C=64 H=256 W=256 K=128 R=3 S=3 HARNESS_ITERS=200
HALO=6 TP=8 TQ=16 BN=128 STAGES=8 REDUCE=1 N=64 C=64 H=256 W=256 K=128 R=3 S=3 HARNESS_ITERS=200 HARNESS_CHAIN=1
CFG
(OUTDIR=$HB CONFIGS=$R/configs.txt bash bench/fused_conv/run_harness.sh build-only > $R/harness-build.log 2>&1) &
hbuild=$!

stamp "issue 13: wide-range inputs"
timeout 240 build/gpu_fused_conv_test --gtest_filter='*WideRange*' > $R/gpu-wide-range.log 2>&1; echo "rc=$?"
tail -25 $R/gpu-wide-range.log; pack

wait $hbuild; cat $R/harness-build.log
stamp "harness runs beside nvidia-smi"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 50 > $R/smi-harness.csv 2>&1 &
smi=$!
OUTDIR=$HB CONFIGS=$R/configs.txt timeout $(left) bash bench/fused_conv/run_harness.sh run-only > $R/harness-runs.txt 2>&1
kill $smi; cat $R/harness-runs.txt; pack

stamp "ncu #31 and #32 (x2 epilogue)"
for i in 1 4; do
  timeout 120 ncu --clock-control none -k ft_fused_conv --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis --section Occupancy $HB/h$i > $R/ncu-h$i.txt 2>&1
  grep -E "Duration|SM Frequency|Throughput|Issue Slots|Eligible|No Eligible|Stall|Pipe|Active Warps" $R/ncu-h$i.txt | head -30
done
pack

stamp "issue 14: from-torch on real models"
FUSETUNE=build/fusetune timeout $(left) python3 python/tests/test_from_torch.py > $R/test-from-torch.log 2>&1; echo "rc=$?"
tail -15 $R/test-from-torch.log
pack
stamp end
