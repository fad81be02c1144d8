#!/usr/bin/env bash
# call 60 (issues 8 and 10): every gpu_fused_conv_test (awkward shapes, every op, every reduction,
# NHWC in and out, 3xTF32, two epilogue warpgroups) on the templates of call 58 (the bias indexed
# by k, the new renderings); then op_throughput for the pairs of the costliest ops, which call
# 59's 150 s did not reach (bench/op_math/chains.txt from line 59 on).
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-585} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/gpu_fused_conv_test .gpu/op_throughput build/
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
stamp gpu_fused_conv_test
timeout 330 build/gpu_fused_conv_test > $R/gpu-fused-conv.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|OK \]|Failure" $R/gpu-fused-conv.log | head -20; pack
stamp "op_throughput, the pairs"
sed -n '59,$p' bench/op_math/chains.txt > $R/chains-pairs.txt
timeout $(( $(left) - 5 )) build/op_throughput --chains $R/chains-pairs.txt > $R/op-throughput-pairs.md 2> $R/op-throughput-pairs.err
echo "rc=$?"; cat $R/op-throughput-pairs.md; tail -2 $R/op-throughput-pairs.err
stamp done; pack
