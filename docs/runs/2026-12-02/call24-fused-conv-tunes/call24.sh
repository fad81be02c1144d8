#!/usr/bin/env bash
# call 24: the first GPU run of the halo fused-conv design in the tuner (issue 8) and of its
# 3xTF32 mode (issue 13): cold tunes of both presets in tf32, every fused-conv variant of the
# awkward shapes (tests/gpu_fused_conv_test.cpp), then the fp32 tunes with what is left.
cd "$(dirname "$0")/../../../.."  # (run from docs/runs/2026-12-02/, moved into this folder after the call)
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
# The database (and the compile cache beside it, hundreds of files) stays out of $OUT.
mkdir -p /tmp/ftdb; export FUSETUNE_DB=/tmp/ftdb/tuning.db
t0=$(date +%s); left() { echo $(( ${LIMIT:-570} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/*_test build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
pack() { tar czf $OUT/run.tgz -C $OUT run; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.txt
tune() {  # preset math
  local s e rc; s=$(date +%s.%N)
  timeout $(left) build/fusetune tune --preset $1 --math $2 --force --all --json $R/tune-$1-$2.json \
    > $R/tune-$1-$2.txt 2>$R/tune-$1-$2.err; rc=$?; e=$(date +%s.%N)
  echo "tune $1 $2 --force (cold): rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-times.txt
  grep -E "^(winner|tie)" $R/tune-$1-$2.txt; grep -E "fused-conv" $R/tune-$1-$2.txt | head -4; tail -2 $R/tune-$1-$2.err
  pack
}
tune kernelbench-31 tf32
tune kernelbench-32 tf32
echo "== gpu_fused_conv_test (limit $(( $(left) - 150 )) s)" | tee -a $R/gpu-tests.log
timeout $(( $(left) - 150 )) build/gpu_fused_conv_test --gtest_brief=0 >> $R/gpu-tests.log 2>&1
echo "gpu_fused_conv_test rc=$?" | tee -a $R/gpu-tests.log
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|wrong|fault" $R/gpu-tests.log | head -30
pack
[ $(left) -gt 60 ] && tune kernelbench-31 fp32
[ $(left) -gt 60 ] && tune kernelbench-32 fp32
build/fusetune query --all > $R/query.txt 2>&1
pack
echo "end at +$(( $(date +%s) - t0 )) s"
