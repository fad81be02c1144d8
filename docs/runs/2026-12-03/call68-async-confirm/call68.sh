#!/usr/bin/env bash
# call 68 (issue 11, --devices after the review): the early confirmation runs on the first GPU
# while the search takes its compile (and the other GPUs measure) instead of before it; a
# restarted worker is asked for its setup at once; the conv choices merged across GPUs; the
# guided search's believer for picks still out. Cold tunes of both presets, twice each, with
# --json (phases and notes), then gpu_tune_test (the two-worker test first), gpu_cudnn_fused_test,
# gpu_fused_conv_test.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-300} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_*_test build/
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
cold() {  # name, then fusetune's arguments: a tune with a fresh database and compile cache
  local name=$1; shift
  local d; d=$(mktemp -d); local s; s=$(date +%s.%N)
  FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout 90 build/fusetune tune "$@" --json $R/$name.json \
    > $R/$name.txt 2> $R/$name.err; local rc=$?; local e; e=$(date +%s.%N)
  echo "$name rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-time.txt
  python3 - $R/$name.json <<'PY' | tee -a $R/phases.txt
import json, sys
d = json.load(open(sys.argv[1]))
print(sys.argv[1].split("/")[-1], "winner", d["winner"]["name"], round(d["winner"]["time_ms"]["median"], 4),
      "phases", {k: round(v, 2) for k, v in d["phases_s"].items()})
for n in d["notes"]:
    if n.startswith(("confirmation round", "guided search", "worker setup", "sustained timing")): print("  ", n)
PY
}
for k in 1 2; do
  stamp "cold tunes, round $k"
  cold tune-kernelbench-31-$k --preset kernelbench-31 --force; pack
  cold tune-kernelbench-32-$k --preset kernelbench-32 --force; pack
done
stamp "gpu_tune_test: two workers"
timeout $(( $(left) - 5 )) build/gpu_tune_test --gtest_filter='*TwoWorkers*' > $R/gpu_tune_two_workers.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/gpu_tune_two_workers.log | tail -4; pack
for t in gpu_tune_test gpu_cudnn_fused_test gpu_fused_conv_test; do
  stamp $t
  timeout $(( $(left) - 5 )) build/$t --gtest_filter='-*TwoWorkers*' > $R/$t.log 2>&1; echo "$t rc=$?"
  grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/$t.log | tail -4; pack
done
stamp done; pack
