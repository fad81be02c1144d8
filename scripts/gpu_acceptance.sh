#!/usr/bin/env bash
# The GPU acceptance of issues 40 (the house), 41 (verdicts) and 42 (data safety) in one device
# call, most important first; each step packs its results as it ends, so a call cut short still
# returns what ran. Needs the carried .gpu/ bundle: this build's fusetune and GPU tests
# (scripts/bundle_for_gpu.sh), plus .gpu/base/fusetune, a Release build of commit 5423160 (the
# code before issue 40's move), for the before/after alternation.
#   OUT=... scripts/gpu_acceptance.sh
# Steps:
#   1. cold tunes of both presets, this build and the base taking turns, COLD_RUNS (3) times each:
#      winners, medians and wall times side by side ($OUT/run/ab-summary.md)           issue 40
#   2. every GPU test binary (the planted bugs inside the fused convs on four small shapes)  40, 41
#   3. scripts/gpu_planted.sh: every planted bug fails `tune`'s verification on both presets and
#      two awkward shapes; every correct variant passes, its L2 share listed ($OUT/planted)    41
#   4. a fresh tf32 tune of both presets, then `smoke --checks winners` SMOKE_RUNS (10) times and
#      the planted stale run, which must fail                                             40, 41
set -u
export OUT=${OUT:-/tmp/fusetune-out}
cd "$(dirname "$0")/.." || exit 1
date -u +"start %H:%M:%S"
COLD_BINS="build/fusetune .gpu/base/fusetune" COLD_RUNS=${COLD_RUNS:-3} scripts/gpu_check.sh cold
scripts/gpu_check.sh tests
scripts/gpu_check.sh planted
MATHS=tf32 EXTRA=0 SMOKE_RUNS=${SMOKE_RUNS:-10} scripts/gpu_check.sh tune smoke
date -u +"end %H:%M:%S"
