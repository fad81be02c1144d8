#!/usr/bin/env bash
# call 40: call 39's binaries plus finalists within 10% of their design's best: cold tf32 tunes
# of both presets (sustained confirmation), their exported modules timed against fusetune's own
# figures (issue 14), the presets' bench against eager and torch.compile in one run (issue 8),
# then gpu_fused_conv_test's EveryOp with what is left; nvidia-smi beside it all.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
mkdir -p /tmp/ftdb40; export FUSETUNE_DB=/tmp/ftdb40/tuning.db
t0=$(date +%s); left() { echo $(( ${LIMIT:-560} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_fused_conv_test build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 100 > $R/smi.csv 2>&1 &
smi=$!
tune() {  # name math args...
  local name=$1 math=$2 s e rc; shift 2; s=$(date +%s.%N)
  timeout $(left) build/fusetune tune "$@" --math $math --force --all --json $R/tune-$name-$math.json \
    > $R/tune-$name-$math.txt 2>$R/tune-$name-$math.err; rc=$?; e=$(date +%s.%N)
  echo "tune $name $math --force (cold): rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-times.txt
  grep -E "^(winner|tie)" $R/tune-$name-$math.txt; grep -E "^[*~ ] " $R/tune-$name-$math.txt | head -5; tail -1 $R/tune-$name-$math.err
  pack
}
tune kernelbench-31 tf32 --preset kernelbench-31
tune kernelbench-32 tf32 --preset kernelbench-32
stamp "exports, timed against tune's figures"
for p in kernelbench-31 kernelbench-32; do build/fusetune export --preset $p --math tf32 --format torch -o $R/$p-tf32.py; done
timeout $(left) python3 bench/check_torch_export.py --m31 $R/kernelbench-31-tf32.py --m32 $R/kernelbench-32-tf32.py \
  --math tf32 --tune-json-dir $R > $R/export-check.log 2>&1; echo "rc=$?"; tail -8 $R/export-check.log
pack
stamp "bench presets tf32"
timeout $(left) python3 bench/bench_presets.py --fusetune build/fusetune --json-dir $R --reuse --math tf32 \
  > $R/bench-presets-tf32.md 2> $R/bench-presets-tf32.err; echo "rc=$?"; cat $R/bench-presets-tf32.md; tail -2 $R/bench-presets-tf32.err
build/fusetune db dump -o $R/h200.jsonl
gzip -f $R/*.json; pack
if [ $(left) -gt 40 ]; then
  stamp "gpu_fused_conv_test EveryOp"
  timeout $(( $(left) - 10 )) build/gpu_fused_conv_test --gtest_filter='*EveryOp' > $R/gpu-fused-conv-everyop.log 2>&1; echo "rc=$?"
  grep -E "^\[  (PASSED|FAILED)|FAILED  \]|OK \]|Failure" $R/gpu-fused-conv-everyop.log | head
fi
kill $smi; gzip -f $R/smi.csv
stamp done; pack
