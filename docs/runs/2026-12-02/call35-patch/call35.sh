#!/usr/bin/env bash
# call 35 (issue 14's acceptance): the two KernelBench models and python/examples/four_blocks.py
# through from-torch -> tune --spec-file -> export --format torch-patch -> patch(model), checked and
# timed against eager and torch.compile max-autotune in one process each (bench/patch_model.py).
# The database starts from call 34's dump (.gpu/h200-prev.jsonl) when the machine is fresh.
cd "$(dirname "$0")/../../../.."  # run from the repository root
export OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
export FUSETUNE_DB=/tmp/ftdb/tuning.db PYTHONUNBUFFERED=1
t0=$(date +%s); stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
PATCH_FILTER=level2 bash scripts/gpu_check.sh patch
stamp "four blocks"
PATCH_FILTER=four_blocks bash scripts/gpu_check.sh patch
build/fusetune db dump -o $R/h200.jsonl
stamp done
tar czf $OUT/run.tgz -C $OUT run
