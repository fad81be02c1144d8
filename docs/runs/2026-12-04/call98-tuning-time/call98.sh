#!/usr/bin/env bash
# call 98 (issue 11): this stop's final binary (call 96's tuner: the compile pool re-pointed at the
# search's lookahead as the setup and the baselines come in, a cuDNN conv step at its FLOP floor
# before the baselines; the probes-first experiment of call 97 reverted). bench/bench_tuning_time.py
# --strategies model (cold, warm and stored tunes of both presets and of two problems of
# bench/problems.txt, beside torch.compile max-autotune's compile time, in one script); then two
# more cold traced #31 tunes.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
tar -C .gpu -xJf .gpu/bins.tar.xz
mkdir -p build && cp -f .gpu/fusetune .gpu/*_test build/
venv_cudnn=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib
export LD_LIBRARY_PATH="$venv_cudnn:$(pwd)/.gpu/lib"
if [ "$(pwd)" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$(pwd)" /work/main; fi
PYTHONUNBUFFERED=1 timeout 420 python3 bench/bench_tuning_time.py --fusetune build/fusetune --strategies model \
  --json-dir $R/tuning-time > $R/tuning-time.md 2> $R/tuning-time.err
echo "rc=$?"; cat $R/tuning-time.md
T=$R/cold; mkdir -p $T
for i in 1 2; do
  d=$(mktemp -d); s=$(date +%s.%N)
  FUSETUNE_TRACE=$T/trace-$i.txt FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout 40 build/fusetune tune \
    --preset kernelbench-31 --force --json $T/tune-$i.json > $T/tune-$i.txt 2> $T/tune-$i.err
  rc=$?; e=$(date +%s.%N); echo "tune-$i (kernelbench-31 cold) rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $T/tune-time.txt
  grep -E "^(winner|tie)" $T/tune-$i.txt
done
for f in $T/trace-*.txt; do echo "$(basename $f): $(grep -c 'waiting for the compile' $f) compile waits; $(awk '/waiting for the compile/ {w=$1} /compile in/ {s+=$1-w} END {printf "%.2f s", s}' $f)"; done | tee $T/waits.txt
tar -C $OUT -czf $OUT/call98.tar.gz run
