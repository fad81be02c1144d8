#!/usr/bin/env bash
# call 26: the presets' tf32 bench of call 24's tunes (issue 8's acceptance: fused-conv against
# eager and torch.compile in one run), then two more 32 <= C <= 256 problems tuned and benched
# without torch.compile (issue 8: fused-conv against the best other candidate of the same tune).
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
stamp "bench presets tf32"
timeout $(left) python3 bench/bench_presets.py --fusetune build/fusetune --json-dir .gpu/c24 --reuse --math tf32 \
  > $R/bench-presets-tf32.md 2> $R/bench-presets-tf32.err; echo "rc=$?"; cat $R/bench-presets-tf32.md; tail -3 $R/bench-presets-tf32.err
pack
stamp "bench problems tf32 (no torch.compile)"
timeout $(left) python3 bench/bench_problems.py --fusetune build/fusetune --json-dir $R/problems --math tf32 --no-compile \
  "conv2d(n=32,c=64,h=112,w=112,k=128,r=3,pad=1) | relu | reduce_mean(channel)" \
  "conv2d(n=16,c=96,h=96,w=96,k=192,r=3,pad=1) | hardswish | add(param[k])" \
  > $R/bench-problems-tf32-more.md 2> $R/bench-problems-tf32-more.err; echo "rc=$?"; cat $R/bench-problems-tf32-more.md
tail -4 $R/bench-problems-tf32-more.err
build/fusetune db dump -o $R/h200-problems.jsonl
pack
stamp end
