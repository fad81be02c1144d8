#!/usr/bin/env bash
# call 34 (issue 14): the PyTorch exports as custom ops running the stored CUBIN through
# cuda-python. Python tests with the machine's torch (from-torch; patch() graph surgery), cold tf32
# tunes of both presets, their `torch` and `kernelbench` exports checked (no compiler, torch.compile,
# CUDA graph, timed against tune's own figure), KernelBench's correctness procedure with TF32 at
# PyTorch's default and off, then the two KernelBench models through from-torch -> tune -> patch.
cd "$(dirname "$0")/../../../.."  # run from the repository root
export OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
export FUSETUNE_DB=/tmp/ftdb/tuning.db PYTHONUNBUFFERED=1
mkdir -p build && cp -f .gpu/fusetune build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
t0=$(date +%s); stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
python3 -c "import cuda.bindings, torch; print('cuda-bindings', cuda.bindings.__version__, 'torch', torch.__version__)"
stamp "python tests"
FUSETUNE=build/fusetune python3 python/tests/test_from_torch.py > $R/py-from-torch.log 2>&1; echo "from-torch tests rc=$?"
python3 python/tests/test_patch_module.py > $R/py-patch-module.log 2>&1; echo "patch module tests rc=$?"
tail -5 $R/py-patch-module.log
stamp "tune + export (tf32)"
MATHS=tf32 EXTRA=0 bash scripts/gpu_check.sh tune export
stamp "patch the KernelBench models"
PATCH_FILTER=level2 bash scripts/gpu_check.sh patch
stamp done
tar czf $OUT/run.tgz -C $OUT run
