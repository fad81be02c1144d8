#!/usr/bin/env bash
# call 75 (issue 8): the SS form with the halo in the 128-byte swizzle (FT_A_SW, the B tiles'
# layout: 128 bytes per pixel) instead of the no-swizzle core matrices of calls 71-74, a tap's view
# starting 128 bytes on; A_BASEOFF 0/1 with the descriptor's matrix base offset left 0 or set to the
# start's phase in the pattern (which one the hardware wants: the awkward shapes tell). K: those,
# L: the RS form as it ships (#31 p4 e1 s4, #32 p8 e0 s8) in the same call.
cd "$(dirname "$0")/../../../.."
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
for d in K L; do
  for b in $(ls .gpu/diag/$d/h* | grep -v cfg | sort -V); do
    echo "$d $(basename $b) ($(cat $b.cfg)): $(timeout 60 $b 2>&1 | tail -3 | tr '\n' ' ')"
  done
done | tee $R/harness.txt
