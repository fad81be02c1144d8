# shellcheck shell=bash
# What every GPU-side script shares (scripts/gpu_check.sh and any one-off call script): source it
# from the repository root, then call gpu_setup once.
#   source scripts/lib/gpu_common.sh; gpu_setup "$@"
# Before, each call script copied these lines (158 copies in docs/runs/); a fix here reaches all.
#
# Environment (each has a default; none is a path of a particular machine):
#   OUT                        where results go: $OUT/run, packed into $OUT/run.tgz (default /tmp/fusetune-out)
#   FUSETUNE_DB                the tuning database (default /tmp/fusetune-db/tuning.db: it and the compile
#                              cache beside it, hundreds of files, stay out of $OUT)
#   FUSETUNE_CUDNN_LIB         the cuDNN library folder to prefer; default: the one PyTorch's wheel ships
#                              (9.19, what the targets were measured with), found from python3's
#                              nvidia.cudnn package; the system's cuDNN when there is none
#   FUSETUNE_BUILT_SOURCE_DIR  the source folder the carried binaries were built in (they find test data
#                              and the worker through it); default: .gpu/source_dir, written by
#                              scripts/bundle_for_gpu.sh from build/CMakeCache.txt, else the path a
#                              GPU test binary names its source file by

stamp() { echo "== $(date -u +%H:%M:%S) $*"; }

# kernelbench_file N: KernelBench/level2/N_*.py of the checkout $KERNELBENCH (default .kernelbench),
# as the bench scripts find it (bench/kernelbench_files.py); when absent, prints why and fails.
kernelbench_file() { python3 bench/kernelbench_files.py "$1" 2>&1; }

# pack: $OUT/run into $OUT/$PACK_NAME.tgz (default run.tgz), after each step so a cut call keeps
# what it had.
pack() { tar czf "$OUT/${PACK_NAME:-run}.tgz" -C "$OUT" run 2>/dev/null; }

# want STEP: whether STEP was asked for (or "all"); reads GPU_STEPS, set by gpu_setup from its arguments.
want() {
  local s
  for s in "${GPU_STEPS[@]}"; do [ "$s" = all ] || [ "$s" = "$1" ] && return 0; done
  return 1
}

# The carried binaries where a build would have put them (.gpu/ from scripts/bundle_for_gpu.sh,
# its binaries loose or packed in .gpu/bins.tar.xz).
_gpu_binaries() {
  [ -d .gpu ] || return 0
  [ -f .gpu/bins.tar.xz ] && tar -C .gpu -xJf .gpu/bins.tar.xz
  mkdir -p build && cp -f .gpu/fusetune .gpu/*_test build/ 2>/dev/null
  for b in op_throughput main_terms_rate; do [ -f ".gpu/$b" ] && cp -f ".gpu/$b" build/; done
  return 0
}

# Paths baked into the binaries (FUSETUNE_SOURCE_DIR: test data, the worker) name the checkout they
# were built in; where that path is absent on this machine, make it a link to this checkout.
_gpu_source_link() {
  local built="${FUSETUNE_BUILT_SOURCE_DIR:-}"
  [ -z "$built" ] && [ -f .gpu/source_dir ] && built=$(cat .gpu/source_dir)
  [ -z "$built" ] && [ -f build/CMakeCache.txt ] &&
    built=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt)
  # A bundle without source_dir: the path a GPU test binary names its own source file by.
  if [ -z "$built" ]; then
    local t f
    for t in build/gpu_*_test; do
      [ -f "$t" ] || continue
      f=$(grep -a -o -m1 -E '/[[:alnum:]_./+-]*/tests/gpu_[a-z0-9_]+_test\.cpp' "$t" | head -1)
      [ -n "$f" ] && { built=${f%/tests/*}; break; }
    done
  fi
  [ -n "$built" ] || return 0
  if [ "$built" != "$(pwd)" ] && [ ! -e "$built" ]; then
    mkdir -p "$(dirname "$built")" && ln -s "$(pwd)" "$built"
  fi
}

_gpu_libraries() {
  local cudnn="${FUSETUNE_CUDNN_LIB:-}"
  if [ -z "$cudnn" ]; then
    cudnn=$(python3 -c 'import os, nvidia.cudnn as c; print(os.path.join(list(c.__path__)[0], "lib"))' 2>/dev/null || true)
  fi
  [ -n "$cudnn" ] && [ -d "$cudnn" ] && export LD_LIBRARY_PATH="$cudnn${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # Libraries the image may lack; last, so the image's win.
  [ -d .gpu/lib ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/.gpu/lib"
  return 0
}

# A dump of an earlier call's database (.gpu/h200-prev.jsonl), imported into a fresh one: a second
# call on a new machine starts from the first one's winners.
_gpu_database() {
  mkdir -p "$(dirname "$FUSETUNE_DB")"
  if [ -f .gpu/h200-prev.jsonl ] && [ ! -f "$FUSETUNE_DB" ]; then
    build/fusetune db import .gpu/h200-prev.jsonl > "$R/db-import.txt" 2>&1 || cat "$R/db-import.txt"
  fi
}

# gpu_setup [STEP...]: everything above, in order; sets OUT, R (= $OUT/run), FUSETUNE_DB, GPU_STEPS.
gpu_setup() {
  OUT="${OUT:-/tmp/fusetune-out}"
  R="$OUT/run"
  mkdir -p "$R"
  export FUSETUNE_DB="${FUSETUNE_DB:-/tmp/fusetune-db/tuning.db}"
  GPU_STEPS=("$@"); [ ${#GPU_STEPS[@]} -eq 0 ] && GPU_STEPS=(all)
  _gpu_binaries
  _gpu_source_link
  _gpu_libraries
  _gpu_database
}

# cold_tune BINARY LABEL ARGS...: one traced `tune --force --json` on a fresh database, compile cache
# and CUDA_CACHE_PATH (what a first tune on a new machine pays), its files under $R/cold/LABEL.*;
# appends "LABEL rc wall winner" to $R/tune-time.txt.
cold_tune() {
  local bin=$1 label=$2; shift 2
  local T="$R/cold" d s e rc
  mkdir -p "$T"; d=$(mktemp -d); s=$(date +%s.%N)
  FUSETUNE_TRACE="$T/trace-$label.txt" FUSETUNE_DB="$d/tuning.db" CUDA_CACHE_PATH="$d/cuda-cache" \
    timeout "${COLD_TIMEOUT:-120}" "$bin" tune "$@" --force --json "$T/tune-$label.json" \
    > "$T/tune-$label.txt" 2> "$T/tune-$label.err"
  rc=$?; e=$(date +%s.%N); rm -rf "$d"
  echo "tune-$label rc=$rc wall $(awk "BEGIN{printf \"%.2f\", $e - $s}") s $(grep -E '^(winner|tie)' "$T/tune-$label.txt" | head -1)" |
    tee -a "$R/tune-time.txt"
  return $rc
}

# tune_phases DIR: each `tune --json` report's phase times and its notes on sustained rounds.
tune_phases() {
  python3 - "$1" <<'PY'
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "tune-*.json"))):
    j = json.load(open(f))
    print(os.path.basename(f), " ".join(f"{k}={v:.2f}" for k, v in j.get("phases_s", {}).items()))
    for n in j.get("notes", []):
        if "sustained" in n or "confirmation round" in n: print("   ", n)
PY
}
