#!/usr/bin/env bash
# call 33: the halo kernel's mainloop without a drain between chunks (three A buffers, FT_CROSS)
# and with the halo released as soon as its last tap is issued: every fused-conv variant of the
# awkward shapes verified, cold tf32 tunes of both presets, the presets' bench against eager and
# torch.compile in one run (issue 8's acceptance), then the fp32 tunes with what is left.
cd "$(dirname "$0")/../../../.."  # run from the repository root (this file moved here after the call)
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
mkdir -p /tmp/ftdb; export FUSETUNE_DB=/tmp/ftdb/tuning.db
t0=$(date +%s); left() { echo $(( ${LIMIT:-465} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_fused_conv_test build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
stamp "gpu_fused_conv_test"
timeout 150 build/gpu_fused_conv_test > $R/gpu-fused-conv.log 2>&1; trc=$?; echo "rc=$trc"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|OK \]|Failure" $R/gpu-fused-conv.log | head -20
pack
tune() {  # name spec math
  local s e rc; s=$(date +%s.%N)
  timeout $(left) build/fusetune tune "$2" --math $3 --force --all --json $R/tune-$1-$3.json \
    > $R/tune-$1-$3.txt 2>$R/tune-$1-$3.err; rc=$?; e=$(date +%s.%N)
  echo "tune $1 $3 --force (cold): rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-times.txt
  grep -E "^(winner|tie)" $R/tune-$1-$3.txt; grep -E "fused-conv" $R/tune-$1-$3.txt | head -4; tail -1 $R/tune-$1-$3.err
  pack
}
if [ $trc -eq 0 ]; then
  tune kernelbench-31 --preset=kernelbench-31 tf32
  tune kernelbench-32 --preset=kernelbench-32 tf32
  stamp "bench presets tf32"
  timeout $(left) python3 bench/bench_presets.py --fusetune build/fusetune --json-dir $R --reuse --math tf32 \
    > $R/bench-presets-tf32.md 2> $R/bench-presets-tf32.err; echo "rc=$?"; cat $R/bench-presets-tf32.md; tail -2 $R/bench-presets-tf32.err
  gzip -f $R/*.json; pack
  [ $(left) -gt 60 ] && tune kernelbench-31 --preset=kernelbench-31 fp32
  [ $(left) -gt 100 ] && tune kernelbench-32 --preset=kernelbench-32 fp32
  gzip -f $R/*.json
fi
build/fusetune db dump -o $R/h200-call33.jsonl; gzip -f $R/h200-call33.jsonl
pack
stamp end
