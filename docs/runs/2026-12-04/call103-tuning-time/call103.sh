#!/usr/bin/env bash
# call 103 (issue 11): this stop's final binary (the winner and the runner-up taking turns in the
# confirmation round, src/tune/sustain_round.hpp): bench/bench_tuning_time.py --strategies model
# (cold, warm and stored tunes of both presets and of two problems of bench/problems.txt, beside
# torch.compile max-autotune's compile time, in one script).
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
tar -C .gpu -xJf .gpu/bins.tar.xz
mkdir -p build && cp -f .gpu/fusetune .gpu/*_test build/
venv_cudnn=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib
export LD_LIBRARY_PATH="$venv_cudnn:$(pwd)/.gpu/lib"
if [ "$(pwd)" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$(pwd)" /work/main; fi
PYTHONUNBUFFERED=1 timeout 540 python3 bench/bench_tuning_time.py --fusetune build/fusetune --strategies model \
  --json-dir $R/tuning-time > $R/tuning-time.md 2> $R/tuning-time.err
echo "rc=$?"; cat $R/tuning-time.md
python3 - $R/tuning-time > $R/phases.txt <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    j = json.load(open(f))
    print(os.path.basename(f), " ".join(f"{k}={v:.2f}" for k, v in j.get("phases_s", {}).items()))
    for n in j.get("notes", []):
        if "in turns" in n or "confirmation round" in n or "guided search" in n: print("   ", n)
PY
grep -A3 "cold" $R/phases.txt | head -30
tar -C $OUT -czf $OUT/call103.tar.gz run
