#!/usr/bin/env bash
# call 72 (issue 8): is the SS form (FT_A_SMEM) of call 71 held back by its halo warps' loads?
# Harness binaries built on the CPU machine from temporary copies of the template:
#   A: halo loop unrolled 6 (a chunk's items in flight at once), producers 128 registers, consumers 184
#   B: unrolled 4, producers 104, consumers 200
#   C: the RS form on the same 2 x 64 tiles (e0 s8, e1 s5): the tile shape's own cost
#   D: A without the global loads (zeros; the check fails): the bound if the loads were free
#   E: e1 s5, unrolled 4, producers 104, consumers 160, epilogue 88
cd "$(dirname "$0")/../../../.."
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s)
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
for d in A B C D E; do
  for b in $(ls .gpu/diag/$d/h* | grep -v cfg | sort -V); do
    echo "$d $(basename $b) ($(cat $b.cfg)): $(timeout 60 $b 2>&1 | tail -3 | tr '\n' ' ')"
  done
done | tee $R/harness.txt
if command -v ncu > /dev/null; then
  stamp "ncu A h1"
  timeout 120 ncu --launch-skip 3 --launch-count 1 --section SpeedOfLight --section WarpStateStats \
    --section SchedulerStats .gpu/diag/A/h1 > $R/ncu-A-h1.txt 2>&1
  grep -E "Duration|Throughput|Eligible Warps" $R/ncu-A-h1.txt | head -8
fi
stamp done
