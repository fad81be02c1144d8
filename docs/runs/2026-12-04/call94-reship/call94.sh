#!/usr/bin/env bash
# call 94 (issue 8): the template change of call 91 changes the templates hash, so the shipped
# records (tuning_db/shipped/) no longer match what this fusetune generates: both presets re-tuned
# cold on a fresh database (tf32 --strategy exhaustive, the whole landscape as call 61 shipped;
# fp32 guided) and dumped (h200.jsonl, the new tuning_db/shipped/h200.jsonl); then
# bench/bench_presets.py --reuse --export in tf32 on these tunes (eager, torch.compile max-autotune,
# the exported module, the replay, interleaved); then bench/bench_problems.py --reuse --no-compile
# on call 93's cold tunes of three 32 <= C <= 256 problems (.gpu/problems/), beside eager.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-380} - ($(date +%s) - t0) )); }
tar -C .gpu -xJf .gpu/bins.tar.xz
mkdir -p build && cp -f .gpu/fusetune .gpu/*_test build/
venv_cudnn=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib
export LD_LIBRARY_PATH="$venv_cudnn:$(pwd)/.gpu/lib"
if [ "$(pwd)" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$(pwd)" /work/main; fi
mkdir -p /tmp/ftdb94; export FUSETUNE_DB=/tmp/ftdb94/tuning.db
pack() { tar czf $OUT/call94.tar.gz -C $OUT run; }
tune() {  # name math strategy args...
  local name=$1 math=$2 strategy=$3 s e rc; shift 3; s=$(date +%s.%N)
  timeout $(( $(left) - 150 )) build/fusetune tune "$@" --math $math --force --strategy $strategy \
    --json $R/tune-$name-$math.json > $R/tune-$name-$math.txt 2>$R/tune-$name-$math.err; rc=$?; e=$(date +%s.%N)
  echo "tune $name $math --force --strategy $strategy (cold): rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-times.txt
  grep -E "^(winner|tie)" $R/tune-$name-$math.txt; tail -1 $R/tune-$name-$math.err
}
tune kernelbench-31 tf32 exhaustive --preset kernelbench-31
tune kernelbench-32 tf32 exhaustive --preset kernelbench-32
tune kernelbench-31 fp32 model --preset kernelbench-31
tune kernelbench-32 fp32 model --preset kernelbench-32
build/fusetune db dump -o $R/h200.jsonl; build/fusetune query > $R/query.txt; cat $R/query.txt; pack
echo "== bench presets +$(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout $(( $(left) - 40 )) python3 bench/bench_presets.py --fusetune build/fusetune --json-dir $R --reuse \
  --export --math tf32 > $R/bench-presets-tf32.md 2> $R/bench-presets-tf32.err; echo "rc=$?"; head -12 $R/bench-presets-tf32.md; pack
echo "== bench problems +$(( $(date +%s) - t0 )) s"
mkdir -p $R/problems && cp .gpu/problems/*.json $R/problems/
PYTHONUNBUFFERED=1 timeout $(( $(left) - 3 )) python3 bench/bench_problems.py --fusetune build/fusetune --json-dir $R/problems \
  --reuse --no-compile "conv2d(n=32,c=64,h=112,w=112,k=128,r=3,pad=1) | relu | reduce_mean(channel)" \
  "conv2d(n=16,c=96,h=96,w=96,k=192,r=3,pad=1) | hardswish | add(param[k])" \
  "conv2d(n=32,c=128,h=64,w=64,k=256,r=3,pad=1) | add(param[k]) | relu" \
  > $R/bench-problems-tf32.md 2> $R/bench-problems-tf32.err; echo "rc=$?"; cat $R/bench-problems-tf32.md
echo "== end +$(( $(date +%s) - t0 )) s"; pack
