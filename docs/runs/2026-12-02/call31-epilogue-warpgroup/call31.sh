#!/usr/bin/env bash
# call 31: the epilogue warpgroup (fused_conv_halo.cu FT_EPI_WG, variants *.e1): the harness
# beside the e0 kernel (x2, mish|mish, #31 and #32 shapes, 200 launches), every fused-conv
# variant of the awkward shapes verified, then cold tf32 tunes of both presets.
cd "$(dirname "$0")/../../../.."  # run from the repository root (this file moved here after the call)
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
mkdir -p /tmp/ftdb; export FUSETUNE_DB=/tmp/ftdb/tuning.db
t0=$(date +%s); left() { echo $(( ${LIMIT:-575} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/*_test build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
HB=/tmp/hb; mkdir -p $HB
A="N=128 C=64 H=128 W=128 K=128 R=3 S=3 REDUCE=0 HARNESS_ITERS=200"
B="N=64 C=64 H=256 W=256 K=128 R=3 S=3 REDUCE=1 HARNESS_ITERS=200"
cat > $R/configs.txt <<CFG
HALO=6 TP=4 TQ=32 BN=128 STAGES=8 EPI_WG=0 $A
HALO=6 TP=4 TQ=32 BN=128 STAGES=5 EPI_WG=1 $A
HALO=6 TP=4 TQ=32 BN=128 STAGES=4 EPI_WG=1 $A
HALO=6 TP=4 TQ=32 BN=128 STAGES=8 EPI_WG=0 $A HARNESS_CHAIN=1
HALO=6 TP=4 TQ=32 BN=128 STAGES=5 EPI_WG=1 $A HARNESS_CHAIN=1
HALO=6 TP=8 TQ=16 BN=128 STAGES=8 EPI_WG=0 $B
HALO=6 TP=8 TQ=16 BN=128 STAGES=5 EPI_WG=1 $B
HALO=6 TP=8 TQ=16 BN=128 STAGES=8 EPI_WG=0 $B HARNESS_CHAIN=1
HALO=6 TP=8 TQ=16 BN=128 STAGES=5 EPI_WG=1 $B HARNESS_CHAIN=1
HALO=6 TP=4 TQ=32 BN=128 STAGES=4 EPI_WG=1 REDUCE=0 N=2 C=5 H=17 W=19 K=76 R=3 S=2 STRIDE_H=2 PAD_H=1 PAD_W=1 DIL_W=2
HALO=6 TP=4 TQ=32 BN=64 STAGES=4 EPI_WG=1 REDUCE=1 N=2 C=40 H=30 W=30 K=200 R=3 S=3 PAD_H=1 PAD_W=1
CFG
stamp "harness: build and run"
OUTDIR=$HB CONFIGS=$R/configs.txt timeout 200 bash bench/fused_conv/run_harness.sh > $R/harness.txt 2>&1
cat $R/harness.txt; pack

stamp "gpu_fused_conv_test"
timeout 270 build/gpu_fused_conv_test > $R/gpu-fused-conv.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|OK \]|Failure|wrong|fault|timeout" $R/gpu-fused-conv.log | head -30
pack
tune() {  # preset math
  local s e rc; s=$(date +%s.%N)
  timeout $(left) build/fusetune tune --preset $1 --math $2 --force --all --json $R/tune-$1-$2.json \
    > $R/tune-$1-$2.txt 2>$R/tune-$1-$2.err; rc=$?; e=$(date +%s.%N)
  echo "tune $1 $2 --force (cold): rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-times.txt
  grep -E "^(winner|tie)" $R/tune-$1-$2.txt; grep -E "fused-conv" $R/tune-$1-$2.txt | head -6; tail -2 $R/tune-$1-$2.err
  gzip -f $R/tune-$1-$2.json; pack
}
[ $(left) -gt 100 ] && tune kernelbench-31 tf32
[ $(left) -gt 100 ] && tune kernelbench-32 tf32
build/fusetune db dump -o $R/h200-call31.jsonl; gzip -f $R/h200-call31.jsonl
pack
stamp end
