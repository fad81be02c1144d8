#!/usr/bin/env bash
# call 71 (issue 8): the halo design with A from shared memory (FT_A_SMEM, the SS form) against the
# RS form as it ships, harness binaries built on the CPU machine from
# docs/runs/2026-12-03/call71-a-smem/configs-a-smem.txt, moved there from bench/ once the experiment ended (.gpu/harness/h<i>, the config beside each as h<i>.cfg);
# .gpu/harness-swap/: configs 3 and 13 with the descriptor's two byte offsets swapped, in case
# the PTX manual's K-major no-swizzle layout was misread. Then Nsight Compute on one RS and one SS
# kernel of #31's shape.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s)
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv | tee $R/smi-before.txt
for dir in harness harness-swap; do
  stamp $dir
  for b in $(ls .gpu/$dir/h* | grep -v cfg | sort -V); do
    echo "$dir $(basename $b) ($(cat $b.cfg)): $(timeout 60 $b 2>&1 | tail -9 | tr '\n' ' ')"
  done | tee $R/$dir.txt
  pack
done
if command -v ncu > /dev/null; then
  for i in 2 4; do
    stamp "ncu h$i"
    timeout 120 ncu --launch-skip 3 --launch-count 1 --section SpeedOfLight --section WarpStateStats \
      --section SchedulerStats --section MemoryWorkloadAnalysis .gpu/harness/h$i > $R/ncu-h$i.txt 2>&1
    grep -E "Duration|Throughput|Issue Slots|Eligible Warps|No Eligible" $R/ncu-h$i.txt | head -12
  done
fi
stamp done; pack
