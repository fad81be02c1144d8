#!/usr/bin/env bash
# call 105 (issue 11): the tidy of sustain_round.cpp after reading the change (no behaviour change:
# one helper slices a window, one the cap test; the turn length from the plan count it always was;
# each plan's settle test asked once a round): gpu_tune_test, with its full tune
# whose winner and runner-up must take turns, then two cold traced #31 tunes.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
tar -C .gpu -xJf .gpu/bins.tar.xz
mkdir -p build && cp -f .gpu/fusetune .gpu/*_test build/
venv_cudnn=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib
export LD_LIBRARY_PATH="$venv_cudnn:$(pwd)/.gpu/lib"
if [ "$(pwd)" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$(pwd)" /work/main; fi
timeout 300 build/gpu_tune_test --gtest_brief=1 > $R/gpu-tune-test.log 2>&1; echo "gpu_tune_test rc=$?"; tail -n 3 $R/gpu-tune-test.log
T=$R/cold; mkdir -p $T
for i in 1 2; do
  d=$(mktemp -d); s=$(date +%s.%N)
  FUSETUNE_TRACE=$T/trace-$i.txt FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout 60 build/fusetune tune \
    --preset kernelbench-31 --force --json $T/tune-$i.json > $T/tune-$i.txt 2> $T/tune-$i.err
  rc=$?; e=$(date +%s.%N); echo "tune-$i (kernelbench-31 cold) rc=$rc wall $(awk "BEGIN{printf \"%.2f\", $e - $s}") s $(grep -E '^(winner|tie)' $T/tune-$i.txt | head -1)" | tee -a $R/tune-time.txt
  rm -rf $d
done
python3 - "$T" > $R/phases.txt <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + "/tune-*.json")):
    j = json.load(open(f))
    print(os.path.basename(f), " ".join(f"{k}={v:.2f}" for k, v in j.get("phases_s", {}).items()))
    for n in j.get("notes", []):
        if "sustained" in n or "confirmation round" in n: print("   ", n)
PY
grep -v "^    sustained timing of [^ ]*:" $R/phases.txt
tar -C $OUT -czf $OUT/call105.tar.gz run
