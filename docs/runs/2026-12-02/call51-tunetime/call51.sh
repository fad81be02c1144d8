#!/usr/bin/env bash
# call 51 (issue 11): where a cold tune's time goes, and the guided strategy against exhaustive on
# the H200. Binaries built here with the solutions' compile overlapped with the baselines phase
# and new notes (the worker's setup, each cuDNN conv choice's parts and every option's median in
# cuDNN's order, each cuDNN engine list's build time). Cold tunes (fresh database and compile
# cache each), tf32: both presets and the first two problems of bench/problems.txt, exhaustive
# then model; a stored answer; then gpu_tune_test (the tuner changed) in the time left.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-575} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_tune_test build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
nproc > $R/nproc.txt
tune() {  # name strategy args...
  local name=$1 strategy=$2 s e rc db; shift 2; db=/tmp/ftdb51-$name-$strategy; rm -rf $db; mkdir -p $db
  s=$(date +%s.%N)
  timeout $(left) build/fusetune tune "$@" --math tf32 --strategy $strategy --force --all --db $db/tuning.db \
    --json $R/tune-$name-$strategy.json > $R/tune-$name-$strategy.txt 2>$R/tune-$name-$strategy.err; rc=$?
  e=$(date +%s.%N)
  echo "tune $name tf32 --strategy $strategy --force (cold): rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-times.txt
  grep -E "^(winner|tie|device)" -A1 $R/tune-$name-$strategy.txt | head -4; tail -1 $R/tune-$name-$strategy.err
  pack
}
stored() {  # name args...: the stored answer from the exhaustive run's database
  local name=$1 s e; shift
  s=$(date +%s.%N); build/fusetune tune "$@" --math tf32 --db /tmp/ftdb51-$name-exhaustive/tuning.db -q > /dev/null 2>&1
  e=$(date +%s.%N); echo "tune $name tf32 (stored answer): wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-times.txt
}
p1='conv2d(n=8,c=16,h=64,w=64,k=32,r=3,pad=1) | gelu | mul(2)'
p2='conv2d(n=4,c=32,h=56,w=56,k=64,r=3,pad=1) | relu | reduce_max(channel)'
tune kernelbench-31 exhaustive --preset kernelbench-31
tune kernelbench-31 model --preset kernelbench-31
stored kernelbench-31 --preset kernelbench-31
tune kernelbench-32 exhaustive --preset kernelbench-32
tune kernelbench-32 model --preset kernelbench-32
tune p1 exhaustive "$p1"
tune p1 model "$p1"
tune p2 exhaustive "$p2"
tune p2 model "$p2"
gzip -f $R/*.json 2>/dev/null
stamp "gpu_tune_test"
timeout $(( $(left) - 5 )) build/gpu_tune_test > $R/gpu-tune.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|OK \]|Failure" $R/gpu-tune.log | head -20
stamp done; pack
