#!/usr/bin/env bash
# call 73 (issue 8): call 72 showed the SS form's halo loads cost 40% (0.98 ms without them,
# 1.34-1.37 with any unroll). Is it their path through L1? Harness binaries from temporary
# template copies, the float4 loads written as:
#   F: ld.global.nc.L1::no_allocate.v4.f32 (unroll 2)   G: ld.global.cg.v4.f32 (L2 only, unroll 2)
#   H: as F, unrolled 4, producers 104 registers, consumers 200
cd "$(dirname "$0")/../../../.."
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
for d in F G H; do
  for b in $(ls .gpu/diag/$d/h* | grep -v cfg | sort -V); do
    echo "$d $(basename $b) ($(cat $b.cfg)): $(timeout 60 $b 2>&1 | tail -3 | tr '\n' ' ')"
  done
done | tee $R/harness.txt
