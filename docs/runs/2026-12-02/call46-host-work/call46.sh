#!/usr/bin/env bash
# call 46: the patched model's host work cut (eager calls bypass the custom op's dispatch, one
# context push per op, a BatchNorm folded once per call). 1) bench/profile_patch.py: call 44's
# module (old runtime) and the same winners exported by this build, in one process with eager
# and torch.compile; 2) test_patch_module.py and the KernelBench exports' check (new runtime);
# 3) `scripts/gpu_check.sh patch` for the three models, on call 44's database (its winners reused).
cd "$(dirname "$0")/../../../.."  # run from the repository root
export OUT=${OUT:-/tmp/o}; export PYTHONUNBUFFERED=1 FUSETUNE_DB=/tmp/ftdb46/tuning.db
R=$OUT/run; mkdir -p $R
mkdir -p build && cp -f .gpu/fusetune build/
D=docs/runs/2026-12-02
zcat $D/call44-layout-chain/patch-four_blocks/patch.py.gz > /tmp/patch_call44.py
zcat $D/call46-host-work/patch-new.py.gz > /tmp/patch_new.py
timeout 200 python3 bench/profile_patch.py --patch /tmp/patch_call44.py --patch /tmp/patch_new.py --compile \
  --model python/examples/four_blocks.py:FourBlocks --input-shape 64,32,128,128 --trace $R/trace-new.json.gz \
  > $R/profile.txt 2>&1; echo "profile rc=$?"
grep -E "do_bench|fusetune_block" $R/profile.txt
timeout 90 python3 python/tests/test_patch_module.py > $R/patch-module-tests.log 2>&1; echo "test_patch_module rc=$?"
MATHS=tf32 KB_EVAL=0 timeout 100 scripts/gpu_check.sh export > $R/export-step.txt 2>&1; echo "export rc=$?"
tail -5 $R/export-check.log
timeout 330 scripts/gpu_check.sh patch; echo "patch rc=$?"
build/fusetune db dump 2>/dev/null | gzip > $R/h200.jsonl.gz
tar czf $OUT/run.tgz -C $OUT run
