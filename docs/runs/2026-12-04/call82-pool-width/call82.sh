#!/usr/bin/env bash
# call 82 (issue 11): does the compile pool's width set the search's compile waits? The host's CPU
# (lscpu: cores against hardware threads), then cold kernelbench-31 tunes of this stop's binary
# with `-j 16` (the default: every hardware thread), `-j 12` and `-j 8`, alternating, two each;
# fresh database, compile cache and CUDA cache per tune, each traced.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s)
B=$(mktemp -d) && tar -C $B -xJf .gpu/bins.tar.xz
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$B/lib"
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
lscpu > $R/lscpu.txt; grep -E "^(Model name|CPU\(s\)|Thread|Core|Socket|CPU max MHz)" $R/lscpu.txt
for n in 1 2; do
  for j in 16 12 8; do
    d=$(mktemp -d); s=$(date +%s.%N)
    FUSETUNE_TRACE=$R/trace-31-j$j-$n.txt FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout 90 $B/fusetune tune \
      --preset kernelbench-31 --force -j $j --json $R/tune-31-j$j-$n.json > $R/tune-31-j$j-$n.txt 2> $R/tune-31-j$j-$n.err
    rc=$?; e=$(date +%s.%N); echo "tune-31-j$j-$n rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-time.txt
  done
done
for f in $R/trace-*.txt; do
  echo "$(basename $f): compile waits $(awk '/waiting for the compile/{t=$1} /compile in/{s+=$1-t} END{printf "%.2f", s}' $f) s, ends $(tail -1 $f | awk '{print $1}')"
done | tee $R/waits.txt
tar -C $OUT -czf $OUT/call82.tar.gz run
stamp done
