#!/usr/bin/env bash
# call 84 (issue 8): the halo kernel with two blocks per cluster sharing each filter stage
# (FT_CLUSTER 2: each block reads half of the stage from L2 and multicasts it to both), in the
# harness built on the dev machine (bench/fused_conv/configs-cluster.txt, binaries carried as
# .gpu/fcc.tar.xz): awkward shapes with CLUSTER=2 checked against the float64 CPU conv, then
# #31's and #32's shapes with clusters of 1 and 2 alternating, 200 launches each, with the SM
# clock and power sampled beside them.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R /tmp/fcc
tar -C /tmp/fcc -xJf .gpu/fcc.tar.xz
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $R/smi.csv 2>&1 &
smi=$!
OUTDIR=/tmp/fcc CONFIGS=bench/fused_conv/configs-cluster.txt bash bench/fused_conv/run_harness.sh run-only 2>&1 | tee $R/harness.txt
kill $smi
gzip $R/smi.csv
tar -C $OUT -czf $OUT/call84.tar.gz run
