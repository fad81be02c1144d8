#!/usr/bin/env bash
# call 43: issue 14's own model with this stop's binaries (epilogue loops, sustained confirmation):
# `scripts/gpu_check.sh patch` for python/examples/four_blocks.py at 64,32,128,128: from-torch,
# tune --spec-file (cold), export torch-patch, the patched model checked and timed against eager
# and torch.compile in one process.
cd "$(dirname "$0")/../../../.."  # run from the repository root
export OUT=${OUT:-/tmp/o}; export FUSETUNE_DB=/tmp/ftdb43/tuning.db PYTHONUNBUFFERED=1
PATCH_FILTER=four_blocks timeout 330 scripts/gpu_check.sh patch; echo "rc=$?"
tar czf $OUT/run.tgz -C $OUT run
