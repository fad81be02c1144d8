#!/usr/bin/env bash
# call 45: where the patched four-block model's time goes (call 44: do_bench 1.66-1.83 ms eager
# against 1.137 from a CUDA graph). bench/profile_patch.py on call 44's module (runtime as it was)
# and on the same winners exported with the new runtime (one context push per op, no flag
# toggling), then python/tests/test_patch_module.py with the new runtime.
cd "$(dirname "$0")/../../../.."  # run from the repository root
export OUT=${OUT:-/tmp/o}; export PYTHONUNBUFFERED=1
R=$OUT/run; mkdir -p $R
mkdir -p build && cp -f .gpu/fusetune build/
D=docs/runs/2026-12-02
zcat $D/call44-layout-chain/patch-four_blocks/patch.py.gz > /tmp/patch_old.py
zcat $D/call45-profile/patch-new.py.gz > /tmp/patch_new.py
M="--model python/examples/four_blocks.py:FourBlocks --input-shape 64,32,128,128"
for v in old new; do
  echo "== $v runtime"
  timeout 150 python3 bench/profile_patch.py --patch /tmp/patch_$v.py $M --trace $R/trace-$v.json.gz > $R/profile-$v.txt 2>&1
  echo "rc=$?"; head -8 $R/profile-$v.txt
done
timeout 90 python3 python/tests/test_patch_module.py > $R/patch-module-tests.log 2>&1; echo "test_patch_module rc=$?"
tail -3 $R/patch-module-tests.log
tar czf $OUT/run.tgz -C $OUT run
