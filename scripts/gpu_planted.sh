#!/usr/bin/env bash
# Issue 41 on the GPU: every planted bug (FUSETUNE_TEST_PLANT, codegen/planted.hpp: the deep plants
# inside the fused convs and the reductions, the subtle ones, the off-by-one channel) must fail
# `tune`'s verification, on both presets and on two awkward shapes (K = 72, no multiple of a column
# tile; padding 1 + stride 2), and every correct variant must pass. One tune per problem (the
# guided search: a planted design whose variants all fail verification stays unmodelled, so every
# planted variant is run; one that passed would show as such in the table), plus one --math fp32
# tune for the 3xTF32 design's plants. Then scripts/planted_summary.py writes the table.
#   scripts/gpu_planted.sh            (from the repository root, built binaries in build/)
# Environment: OUT (default /tmp/fusetune-out): results in $OUT/planted/ (tune JSON, logs,
# summary.md), packed into $OUT/planted.tgz; FUSETUNE_DB (default: a fresh database under $OUT/planted-db, left out of $OUT's
# results); PLANT (default deep,subtle,wrong); PROBLEMS=quick runs only the two presets, PROBLEMS="kb32 pad1"
# only the tunes named (kb31 kb32 k72 pad1s2 pad1);
# STRATEGY=exhaustive runs every variant (slower) where the guided search (the default) would not.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/fusetune-out}
D="$OUT/planted"
mkdir -p "$D"
export FUSETUNE_DB=${FUSETUNE_DB:-/tmp/fusetune-planted-db/tuning.db}
mkdir -p "$(dirname "$FUSETUNE_DB")"
PLANT=${PLANT:-deep,subtle,wrong}
rc=0

run() {  # name, math, problem args...
  local name=$1 math=$2; shift 2
  # PROBLEMS: all (default), quick (the presets), or the names to run ("kb32 pad1")
  case " ${PROBLEMS:-all} " in
    " all ") ;;
    " quick ") [[ $name == kb3[12] ]] || return 0 ;;
    *" $name "*) ;;
    *) return 0 ;;
  esac
  echo "== $(date -u +%H:%M:%S) tune $name ($math) with FUSETUNE_TEST_PLANT=$PLANT"
  local t0=$SECONDS
  FUSETUNE_TEST_PLANT="$PLANT" build/fusetune tune "$@" --math "$math" --force --all ${STRATEGY:+--strategy "$STRATEGY"} \
    --json "$D/$name-$math.json" \
    >"$D/$name-$math.txt" 2>"$D/$name-$math.err" || { rc=1; echo "tune $name failed: $(tail -2 "$D/$name-$math.err")"; }
  echo "   $((SECONDS - t0)) s; $(grep -c 'planted-' "$D/$name-$math.txt") planted rows"
}

run kb31 tf32 --preset kernelbench-31
run kb32 tf32 --preset kernelbench-32
# K = 72: the last column tile is partial for every bn (32, 64, 128); a min reduction for init/lasttile
run k72 tf32 "conv2d(n=32,c=64,h=64,w=64,k=72,r=3) | mul(2.0) | reduce_min(channel)"
# padding + stride 2: the halo's edge rows and the strided taps; KernelBench-31's chain
run pad1s2 tf32 "conv2d(n=32,c=64,h=128,w=128,k=128,r=3,pad=1,stride=2) | min(0.5) | add(param[k]) | mul(2.0)"
# 3xTF32 (fused-conv.halo3x) under the fp32 rule, padding 1: halo3x has no stride-2 variant
# (its smem), so the stride-2 shape above ran no fused conv under fp32 (call 115)
run pad1 fp32 "conv2d(n=32,c=64,h=128,w=128,k=128,r=3,pad=1) | min(0.5) | add(param[k]) | mul(2.0)"
python3 scripts/planted_summary.py "$D"/*.json >"$D/summary.md" || rc=1
cat "$D/summary.md"
# One archive beside the loose files: a device call returns only a few files from $OUT.
tar czf "$OUT/planted.tgz" -C "$OUT" planted 2>/dev/null
exit $rc
