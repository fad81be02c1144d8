#!/usr/bin/env bash
# call 42: the torch-patch path with this stop's runtime and timer: python/tests/test_patch_module.py,
# then `scripts/gpu_check.sh patch` for KernelBench #31's model (from-torch, tune --spec-file on
# call 40's records, export torch-patch, patched model checked and timed against eager and
# torch.compile in one process).
cd "$(dirname "$0")/../../../.."  # run from the repository root
export OUT=${OUT:-/tmp/o}; export FUSETUNE_DB=/tmp/ftdb42/tuning.db PYTHONUNBUFFERED=1
mkdir -p $OUT/run
timeout 60 python3 python/tests/test_patch_module.py > $OUT/run/patch-module-tests.log 2>&1; echo "test_patch_module rc=$?"
tail -3 $OUT/run/patch-module-tests.log
PATCH_FILTER=level2_31 timeout 400 scripts/gpu_check.sh patch; echo "rc=$?"
tar czf $OUT/run.tgz -C $OUT run
