#!/usr/bin/env bash
# call 32: the presets' tf32 bench of call 31's tunes (the epilogue-warpgroup winner of #31)
# against eager and torch.compile in one run, nvidia-smi beside it; issue 10's whole pipeline:
# #31's conv followed by relu and by mish | mish, cold tunes; then the fp32 tunes of both presets.
cd "$(dirname "$0")/../../../.."  # run from the repository root (this file moved here after the call)
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
mkdir -p /tmp/ftdb; export FUSETUNE_DB=/tmp/ftdb/tuning.db
t0=$(date +%s); left() { echo $(( ${LIMIT:-575} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 100 > $R/smi.csv 2>&1 &
smi=$!
stamp "bench presets tf32 (call 31's tunes)"
timeout 240 python3 bench/bench_presets.py --fusetune build/fusetune --json-dir .gpu/c31 --reuse --math tf32 \
  > $R/bench-presets-tf32.md 2> $R/bench-presets-tf32.err; echo "rc=$?"; cat $R/bench-presets-tf32.md; tail -3 $R/bench-presets-tf32.err
pack
tune() {  # name spec math
  local s e rc; s=$(date +%s.%N)
  timeout $(left) build/fusetune tune "$2" --math $3 --force --all --json $R/tune-$1-$3.json \
    > $R/tune-$1-$3.txt 2>$R/tune-$1-$3.err; rc=$?; e=$(date +%s.%N)
  echo "tune $1 $3 --force (cold): rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-times.txt
  grep -E "^(winner|tie)" $R/tune-$1-$3.txt; head -12 $R/tune-$1-$3.txt | grep -E "^[*~ ] " | head -4; tail -1 $R/tune-$1-$3.err
  gzip -f $R/tune-$1-$3.json; pack
}
CONV="conv2d(n=128,c=64,h=128,w=128,k=128,r=3)"
stamp "issue 10: whole pipelines"
[ $(left) -gt 90 ] && tune pipe-relu "$CONV | relu" tf32
[ $(left) -gt 90 ] && tune pipe-mish-mish "$CONV | mish | mish" tf32
[ $(left) -gt 90 ] && tune pipe-gelu-softplus "$CONV | gelu | softplus" tf32
stamp "fp32 presets"
[ $(left) -gt 100 ] && tune kernelbench-31 "--preset=kernelbench-31" fp32
[ $(left) -gt 100 ] && tune kernelbench-32 "--preset=kernelbench-32" fp32
kill $smi
build/fusetune db dump -o $R/h200-call32.jsonl; gzip -f $R/h200-call32.jsonl
pack
stamp end
