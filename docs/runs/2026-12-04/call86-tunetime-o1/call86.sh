#!/usr/bin/env bash
# call 86 (issue 11): (1) does ptxas -O1, which halves the ptxas half of a fused-conv compile,
# cost kernel speed? The harness (bench/fused_conv/configs-ptxas-o1.txt, built on the dev machine,
# .gpu/fco.tar.xz) on #31's and #32's winners, -O3 and -O1 alternating. (2) The tuning-time bench
# (bench/bench_tuning_time.py, strategy model: the default) with the code of call 85 (the
# baselines' confirmation first): cold, warm and stored tunes of both presets and two problems
# next to torch.compile max-autotune's compile time, in one run.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R /tmp/fco
t0=$(date +%s)
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
N=$(mktemp -d) && tar -C $N -xJf .gpu/bins.tar.xz
mkdir -p build && cp -f $N/fusetune build/
tar -C /tmp/fco -xJf .gpu/fco.tar.xz
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$N/lib"
stamp harness
OUTDIR=/tmp/fco CONFIGS=bench/fused_conv/configs-ptxas-o1.txt bash bench/fused_conv/run_harness.sh run-only 2>&1 | tee $R/harness.txt
stamp tunetime
PYTHONUNBUFFERED=1 timeout 420 python3 bench/bench_tuning_time.py --fusetune build/fusetune --strategies model \
  --json-dir $R/tuning-time > $R/tuning-time.md 2> $R/tuning-time.err
echo "rc=$?"; tail -8 $R/tuning-time.md
tar -C $OUT -czf $OUT/call86.tar.gz run
stamp done
