#!/usr/bin/env bash
# call 88: this stop's final binaries across problems, not the presets alone: `scripts/gpu_check.sh
# tune smoke` (both presets in tf32 and fp32, then the 9 problems of bench/problems.txt in tf32,
# each a cold guided `tune --force`; then `smoke --checks winners` and the planted stale winner
# that must fail). Outputs as gpu_check writes them, packed in $OUT/run.tgz.
cd "$(dirname "$0")/../../../.."  # run from the repository root
tar -C .gpu -xJf .gpu/bins.tar.xz  # gpu_check takes .gpu/fusetune, .gpu/*_test and .gpu/lib
OUT=${OUT:-/tmp/o} timeout 560 bash scripts/gpu_check.sh tune smoke
