#!/usr/bin/env bash
# call 25: the bench of call 24's tunes (issue 8's and 13's acceptance): both presets in tf32 and
# fp32 against eager and torch.compile, the winner and the best other candidate replayed from
# PyTorch (bench/bench_presets.py --reuse of call 24's JSON, carried in .gpu/c24); the three
# 32 <= C <= 256 problems of bench/problems.txt tuned and benched the same way
# (bench/bench_problems.py); from-torch's torch tests with what is left.
cd "$(dirname "$0")/../../../.."  # (run from docs/runs/2026-12-02/, moved into this folder after the call)
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R/problems
mkdir -p /tmp/ftdb; export FUSETUNE_DB=/tmp/ftdb/tuning.db
t0=$(date +%s); left() { echo $(( ${LIMIT:-570} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvidia-smi.txt
stamp "bench presets tf32"
timeout $(left) python3 bench/bench_presets.py --fusetune build/fusetune --json-dir .gpu/c24 --reuse --math tf32 \
  > $R/bench-presets-tf32.md 2> $R/bench-presets-tf32.err; echo "rc=$?"; cat $R/bench-presets-tf32.md; tail -3 $R/bench-presets-tf32.err
pack
stamp "bench problems tf32"
mapfile -t specs < <(grep -A5 '^# 32 <= C' bench/problems.txt | grep '^conv2d')
timeout $(left) python3 bench/bench_problems.py --fusetune build/fusetune --json-dir $R/problems --math tf32 "${specs[@]}" \
  > $R/bench-problems-tf32.md 2> $R/bench-problems-tf32.err; echo "rc=$?"; cat $R/bench-problems-tf32.md; tail -4 $R/bench-problems-tf32.err
build/fusetune db dump -o $R/h200-problems.jsonl
pack
stamp "bench presets fp32"
timeout $(left) python3 bench/bench_presets.py --fusetune build/fusetune --json-dir .gpu/c24 --reuse --math fp32 \
  > $R/bench-presets-fp32.md 2> $R/bench-presets-fp32.err; echo "rc=$?"; cat $R/bench-presets-fp32.md; tail -3 $R/bench-presets-fp32.err
pack
if [ $(left) -gt 40 ]; then
  stamp "from-torch on real models"
  FUSETUNE=build/fusetune timeout $(left) python3 python/tests/test_from_torch.py > $R/from-torch-tests.log 2>&1; echo "rc=$?"
  tail -5 $R/from-torch-tests.log
fi
pack
stamp end
