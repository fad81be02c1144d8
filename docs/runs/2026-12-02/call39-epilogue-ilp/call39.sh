#!/usr/bin/env bash
# call 39: (1) the fused conv's epilogue loops with compile-time trip counts (chains of unrolled
# elements interleave): every fused-conv variant of the awkward shapes verified; the harness on
# #31's shape, x 2 against mish | mish; (2) the confirmation round timed sustained (each plan
# alone, back to back until settled): issue 10's whole pipelines, #31's conv with relu,
# mish | mish and gelu | softplus, cold tunes, beside nvidia-smi.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
mkdir -p /tmp/ftdb39; export FUSETUNE_DB=/tmp/ftdb39/tuning.db
t0=$(date +%s); left() { echo $(( ${LIMIT:-570} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_fused_conv_test build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 100 > $R/smi.csv 2>&1 &
smi=$!
stamp "gpu_fused_conv_test"
timeout 170 build/gpu_fused_conv_test > $R/gpu-fused-conv.log 2>&1; trc=$?; echo "rc=$trc"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|OK \]|Failure" $R/gpu-fused-conv.log | head -20
pack
stamp "harness (configs-ilp.txt)"
CONFIGS=bench/fused_conv/configs-ilp.txt OUTDIR=/tmp/fch timeout 120 bench/fused_conv/run_harness.sh > $R/harness.txt 2>&1
cat $R/harness.txt; pack
tune() {  # name spec math
  local s e rc; s=$(date +%s.%N)
  timeout $(left) build/fusetune tune "$2" --math $3 --force --all --json $R/tune-$1-$3.json \
    > $R/tune-$1-$3.txt 2>$R/tune-$1-$3.err; rc=$?; e=$(date +%s.%N)
  echo "tune $1 $3 --force (cold): rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-times.txt
  grep -E "^(winner|tie)" $R/tune-$1-$3.txt; grep -E "^[*~ ] " $R/tune-$1-$3.txt | head -6; tail -1 $R/tune-$1-$3.err
  gzip -f $R/tune-$1-$3.json; pack
}
CONV="conv2d(n=128,c=64,h=128,w=128,k=128,r=3)"
stamp "issue 10: whole pipelines"
[ $(left) -gt 80 ] && tune pipe-relu "$CONV | relu" tf32
[ $(left) -gt 80 ] && tune pipe-mish-mish "$CONV | mish | mish" tf32
[ $(left) -gt 80 ] && tune pipe-gelu-softplus "$CONV | gelu | softplus" tf32
build/fusetune db dump -o $R/h200.jsonl && gzip -f $R/h200.jsonl
kill $smi; gzip -f $R/smi.csv
stamp "done"; pack
