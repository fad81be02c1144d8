#!/usr/bin/env bash
# call 91 (issue 8): the halo kernel with its MMA rows paired down columns and half of each A
# fragment reused from the last tap (FT_PAIR / FT_AREUSE, taps in (s, r) order). The harness built
# on the dev machine (.gpu/fc.tar.xz): bench/fused_conv/configs-areuse.txt checked against the
# float64 CPU conv; then configs-areuse-speed.txt built from this tree (fcS) and from the templates
# before the change (fcO), alternating, twice, with the SM clock and power sampled beside them;
# then gpu_fused_conv_test (every variant of the tuner on its awkward shapes) and gpu_tune_test
# with this tree's binaries (.gpu/, scripts/bundle_for_gpu.sh).
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R /tmp/fc
tar -C /tmp/fc -xJf .gpu/fc.tar.xz
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $R/smi.csv 2>&1 &
smi=$!
OUTDIR=/tmp/fc/fcA CONFIGS=bench/fused_conv/configs-areuse.txt bash bench/fused_conv/run_harness.sh run-only 2>&1 | tee $R/harness-check.txt
for round in 1 2; do
  for i in 1 2 3 4 5 6; do
    for b in fcS fcO; do
      echo "round $round $b config $i: $(timeout 60 /tmp/fc/$b/h$i 2>&1 | tail -3 | tr '\n' ' ')" | tee -a $R/harness-speed.txt
    done
  done
  echo "round $round fcS config 7 (no reuse): $(timeout 60 /tmp/fc/fcS/h7 2>&1 | tail -3 | tr '\n' ' ')" | tee -a $R/harness-speed.txt
done
kill $smi
gzip $R/smi.csv
tar -C .gpu -xJf .gpu/bins.tar.xz
mkdir -p build && cp -f .gpu/fusetune .gpu/*_test build/
venv_cudnn=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib
export LD_LIBRARY_PATH="$venv_cudnn:$(pwd)/.gpu/lib"
if [ "$(pwd)" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$(pwd)" /work/main; fi
for t in gpu_fused_conv_test gpu_tune_test; do
  echo "== $t $(date -u +%H:%M:%S)" | tee -a $R/gpu-tests.log
  timeout 300 build/$t --gtest_brief=1 >> $R/gpu-tests.log 2>&1; echo "$t rc=$?" | tee -a $R/gpu-tests.log
done
tail -30 $R/gpu-tests.log
tar -C $OUT -czf $OUT/call91.tar.gz run
