#!/usr/bin/env bash
# call 44: issue 14 with from-torch's layout chaining (values passed block to block stay NHWC):
# python/tests/test_from_torch.py with this machine's torch, then `scripts/gpu_check.sh patch` for
# the three models (four_blocks at 64,32,128,128 cold; the KernelBench models reuse the shipped
# winners): from-torch, tune --spec-file, export torch-patch, the patched model checked and timed
# against eager and torch.compile in one process per model.
cd "$(dirname "$0")/../../../.."  # run from the repository root
export OUT=${OUT:-/tmp/o}; export FUSETUNE_DB=/tmp/ftdb44/tuning.db PYTHONUNBUFFERED=1
mkdir -p $OUT/run
cp -f .gpu/fusetune .gpu/*_test build/ 2>/dev/null || { mkdir -p build && cp -f .gpu/fusetune build/; }
FUSETUNE=build/fusetune python3 python/tests/test_from_torch.py > $OUT/run/from-torch-tests.log 2>&1; echo "from-torch tests rc=$?"
timeout 540 scripts/gpu_check.sh patch; echo "rc=$?"
build/fusetune db dump 2>/dev/null | gzip > $OUT/run/h200.jsonl.gz
tar czf $OUT/run.tgz -C $OUT run
