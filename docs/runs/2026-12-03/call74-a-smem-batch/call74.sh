#!/usr/bin/env bash
# call 74 (issue 8): the SS form's halo loads issued in batches before their stores (FT_A_BATCH;
# call 73: an asm store item by item kept one item's loads in flight). Harness binaries built on the
# CPU machine: I: the template of a-smem-plain.patch (FT_A_BATCH 3, producers 80 registers), every
# A_SMEM config of bench/fused_conv/configs-a-smem.txt that fits; J: FT_A_BATCH 6, producers 128,
# consumers 184, #31's and #32's shapes e0 s8.
cd "$(dirname "$0")/../../../.."
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
for d in I J; do
  for b in $(ls .gpu/diag/$d/h* | grep -v cfg | sort -V); do
    echo "$d $(basename $b) ($(cat $b.cfg)): $(timeout 60 $b 2>&1 | tail -3 | tr '\n' ' ')"
  done
done | tee $R/harness.txt
