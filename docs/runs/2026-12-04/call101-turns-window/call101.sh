#!/usr/bin/env bash
# call 101 (issue 11): the second try of turns (call 100 capped every round): turns of window_ms / the plans taking turns, so a round of turns spans one window; the verdicts share one cap
# (src/tune/sustain_round.hpp), against the build before (one after the other, each alone):
# cold traced #31 tunes alternating new / old three times each, #32 twice each; the notes' window
# medians of every sustained round; then gpu_tune_test.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
tar -C .gpu -xJf .gpu/bins.tar.xz
mkdir -p build && cp -f .gpu/fusetune .gpu/*_test build/
venv_cudnn=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib
export LD_LIBRARY_PATH="$venv_cudnn:$(pwd)/.gpu/lib"
if [ "$(pwd)" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$(pwd)" /work/main; fi
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > $R/nvidia-smi.txt
T=$R/cold; mkdir -p $T
tune() {  # label binary preset i
  local d s e rc; d=$(mktemp -d); s=$(date +%s.%N)
  FUSETUNE_TRACE=$T/trace-$3-$1-$4.txt FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout 60 $2 tune \
    --preset $3 --force --json $T/tune-$3-$1-$4.json > $T/tune-$3-$1-$4.txt 2> $T/tune-$3-$1-$4.err
  rc=$?; e=$(date +%s.%N)
  echo "$3 $1 $4 rc=$rc wall $(awk "BEGIN{printf \"%.2f\", $e - $s}") s $(grep -E '^(winner|tie)' $T/tune-$3-$1-$4.txt | head -1)" | tee -a $R/tune-time.txt
  rm -rf $d
}
for i in 1 2 3; do tune new build/fusetune kernelbench-31 $i; tune old .gpu/fusetune-old kernelbench-31 $i; done
for i in 1 2; do tune new build/fusetune kernelbench-32 $i; tune old .gpu/fusetune-old kernelbench-32 $i; done
python3 - "$T" > $R/phases.txt <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + "/tune-*.json")):
    j = json.load(open(f))
    ph = j.get("phases_s", {})
    print(os.path.basename(f), " ".join(f"{k}={v:.2f}" for k, v in ph.items()))
    for n in j.get("notes", []):
        if "sustained" in n or "confirmation round" in n: print("   ", n)
PY
cat $R/phases.txt | grep -v "^    sustained timing" | head -40
for t in gpu_tune_test; do
  timeout 250 build/$t --gtest_brief=1 > $R/$t.log 2>&1; echo "$t rc=$?: $(tail -n 1 $R/$t.log)"
done
tar -C $OUT -czf $OUT/call101.tar.gz run
