#!/usr/bin/env bash
# Everything that needs the GPU, in one call (device time is scarce). Expects the binaries of a
# Release build (scripts/bundle_for_gpu.sh gathers them into .gpu/, which the device call
# carries; build/ itself is too large to carry).
#   scripts/gpu_check.sh [tests|tune|export|patch|smoke|bench|problems|layers|pipelines|harness|tunetime|profile|cold|planted|kernelbench|refrate|all]...
# Results and logs go under $OUT/run and are packed into $OUT/run.tgz after each step; the
# tuning database is $FUSETUNE_DB (default /tmp/fusetune-db/tuning.db: it and the compile cache
# beside it, hundreds of files, stay out of $OUT) and its dump $OUT/run/h200.jsonl.
#   GPU_TESTS    test binaries to run (default: every build/gpu_*_test); GTEST_FILTER applies;
#                GPU_TEST_TIMEOUT seconds per binary (default 300); PY_TESTS=0 skips the python tests on real models
#   MATHS        math modes to tune the presets in (default: tf32 fp32); EXTRA=0 skips bench/problems.txt,
#                EXTRA_LINES=N tunes only its first N problems
#   KB_EVAL=0    step export skips KernelBench's correctness procedure (bench/kernelbench_eval.py)
#   KERNELBENCH  a KernelBench checkout (default .kernelbench, git-ignored; docs/gpu-runs.md says how to carry it):
#                its level-2 problems 31 and 32 are the reference models of steps export and patch
#   SMOKE_RUNS   consecutive `smoke --checks winners` runs (default 1), then one planted stale run
#   BENCH_ARGS   for bench/bench_presets.py (step bench, once per MATHS) and bench/bench_problems.py
#                (step problems: bench/problems.txt's problems with C >= 32, tf32); TT_ARGS for
#                bench/bench_tuning_time.py (step tunetime)
#   FOUR_BLOCKS_SHAPE, PATCH_MATH, PATCH_TUNE_ARGS, PATCH_FILTER (a part of the model file's name)  for step patch (bench/patch_model.py: the
#                example model and the two KernelBench models, patched and timed)
#   HARNESS_CONFIGS  configurations for bench/fused_conv/run_harness.sh (step harness; default
#                bench/fused_conv/configs-diag.txt), run beside nvidia-smi
#   COLD_PRESETS, COLD_RUNS, COLD_BINS  step cold (not in all): traced cold tunes (fresh database, compile
#                cache and CUDA_CACHE_PATH) of each preset (default kernelbench-31 kernelbench-32), COLD_RUNS
#                times (default 2), each binary of COLD_BINS in turn (default build/fusetune; name an older
#                build's fusetune too for an A/B in one call); wall times in tune-time.txt, phases.txt
#   LAYERS_MATCH  step layers (not in all): bench/real_layers.txt's lines containing it (default "n=32,"),
#                benched NCHW and channels-last (bench/bench_problems.py --channels-last)
#   REFRATE_ARGS  step refrate: bench/reference/main_terms_rate's arguments (default: its six problems)
#   KB_PROBLEMS, KB_ARGS  step kernelbench (not in all): `fusetune kernelbench` over KB_PROBLEMS (default
#                1-100) of the checkout, with KB_ARGS (default --time-budget 60 --rounds 3); KernelBench's
#                eval needs pydantic, requests and tqdm, installed from the wheels carried in .gpu-wheels (docs/gpu-runs.md);
#                KB_TIMEOUT seconds for the step (records so far are packed, in $OUT/kernelbench.tgz);
#                KB_DB the step's database (default /tmp/fusetune-kb-db/tuning.db, outside $OUT);
#                KB_RECORDS a carried folder of a GPU-less `fusetune kernelbench --out` run whose records seed this one
# Where the environment differs from the defaults (cuDNN, the built source folder, $OUT, the database),
# see scripts/lib/gpu_common.sh.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# The set-up every GPU-side script shares: $OUT and $R, the carried binaries, the link to the source
# folder they were built in, cuDNN's and the carried libraries' LD_LIBRARY_PATH, the database; and
# stamp/pack/want/cold_tune/tune_phases (scripts/lib/gpu_common.sh lists its variables).
source scripts/lib/gpu_common.sh
gpu_setup "$@"
rc=0

if want tests; then
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$R/nvidia-smi.txt"
  build/fusetune devices | tee "$R/devices.txt"
  for t in ${GPU_TESTS:-build/gpu_*_test}; do
    stamp "$t"
    # one test binary may not eat the call (GPU_TEST_TIMEOUT seconds each, default 300)
    timeout "${GPU_TEST_TIMEOUT:-300}" "$t" --gtest_brief=1 ${GTEST_FILTER:+--gtest_filter=$GTEST_FILTER} \
      >>"$R/gpu-tests.log" 2>&1 || {
      s=$?; rc=1  # the test's status (124: cut by the timeout), not the assignment's
      if [ "$s" = 124 ]; then echo "FAILED (cut at ${GPU_TEST_TIMEOUT:-300} s): $t"; else echo "FAILED (exit $s): $t"; fi
    }
    grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]" "$R/gpu-tests.log" | tail -4
  done
  if [ "${PY_TESTS:-1}" = 1 ]; then
  stamp "from-torch on real models (python/tests with this machine's torch)"
  FUSETUNE=build/fusetune PYTHONUNBUFFERED=1 python3 python/tests/test_from_torch.py >"$R/from-torch-tests.log" 2>&1 ||
    { rc=1; echo "FAILED: python/tests/test_from_torch.py"; }
  tail -4 "$R/from-torch-tests.log"
  stamp "torch-patch's patch() on real models (python/tests/test_patch_module.py)"
  PYTHONUNBUFFERED=1 python3 python/tests/test_patch_module.py >"$R/patch-module-tests.log" 2>&1 ||
    { rc=1; echo "FAILED: python/tests/test_patch_module.py"; }
  tail -4 "$R/patch-module-tests.log"
  fi
  pack
fi

tune_one() {  # name, math, spec-or-preset args...
  local name=$1 math=$2; shift 2
  stamp "tune $name $math"
  build/fusetune tune "$@" --math "$math" --force --json "$R/tune-$name-$math.json" >"$R/tune-$name-$math.txt" \
    2>"$R/tune-$name-$math.err" || rc=1
  grep -E "^(winner|note|phases)|variants:" "$R/tune-$name-$math.txt"; tail -2 "$R/tune-$name-$math.err"
}

if want tune; then
  for math in ${MATHS:-tf32 fp32}; do
    for p in kernelbench-31 kernelbench-32; do tune_one "$p" "$math" --preset "$p"; done
  done
  if [ "${EXTRA:-1}" = 1 ]; then
    i=0
    while IFS= read -r spec; do
      i=$((i + 1)); tune_one "extra$i" tf32 "$spec"
    done < <(grep -vE '^\s*(#|$)' bench/problems.txt | head -n "${EXTRA_LINES:-1000}")
  fi
  build/fusetune db dump -o "$R/h200.jsonl" && build/fusetune db verify
  # Issue 41 item 4: every correct variant that passed at more than 50% of a limit in these tunes.
  python3 scripts/planted_summary.py "$R"/tune-*.json > "$R/near-limit.md" || rc=1
  sed -n '/more than 50%/,$p' "$R/near-limit.md" | head -40
  build/fusetune query > "$R/query.txt"; cat "$R/query.txt"
  pack
fi

if want export; then
  for math in ${MATHS:-tf32 fp32}; do
    for p in kernelbench-31 kernelbench-32; do
      build/fusetune export --preset "$p" --math "$math" --format torch -o "$R/$p-$math.py" || rc=1
      build/fusetune export --preset "$p" --math "$math" --format kernelbench -o "$R/$p-$math-kb.py" || rc=1
    done
    stamp "torch export check $math (timed against tune's reports in $R when they are there)"
    PYTHONUNBUFFERED=1 python3 bench/check_torch_export.py --m31 "$R/kernelbench-31-$math.py" \
      --m32 "$R/kernelbench-32-$math.py" --math "$math" \
      $( [ -f "$R/tune-kernelbench-31-$math.json" ] && echo --tune-json-dir "$R" ) 2>&1 |
      tee -a "$R/export-check.log" | tail -14
    [ "${PIPESTATUS[0]}" = 0 ] || rc=1
    # KernelBench's own correctness procedure (bench/kernelbench_eval.py), with PyTorch's default
    # TF32 setting and with TF32 off, the four runs side by side (correctness only: no timing).
    if [ "${KB_EVAL:-1}" = 1 ]; then
      stamp "KernelBench eval $math"
      pids=()
      for p in 31 32; do
        ref=$(kernelbench_file "$p") || { echo "KernelBench eval skipped: $ref"; continue; }
        for tf32 in default off; do
          python3 bench/kernelbench_eval.py --ref "$ref" --new "$R/kernelbench-$p-$math-kb.py" --tf32 "$tf32" \
            --json "$R/kernelbench-eval-$p-$math-tf32$tf32.json" > "$R/kernelbench-eval-$p-$math-tf32$tf32.log" 2>&1 &
          pids+=($!)
        done
      done
      for pid in "${pids[@]}"; do wait "$pid"; done
      grep -h "kernelbench-eval:" "$R"/kernelbench-eval-*-"$math"-*.log
    fi
  done
  pack
fi

if want patch; then
  # issue 14's acceptance: from-torch -> tune --spec-file -> export torch-patch -> patched model,
  # checked and timed against eager and torch.compile in one process per model.
  for m in "python/examples/four_blocks.py:FourBlocks ${FOUR_BLOCKS_SHAPE:-64,32,128,128}" \
           "kb:31:Model 128,64,128,128" "kb:32:Model 64,64,256,256"; do
    set -- $m
    if [[ "$1" == kb:* ]]; then  # a problem of the KernelBench checkout, not of this repository
      f=$(kernelbench_file "$(cut -d: -f2 <<<"$1")") || { echo "patch skipped: $f"; continue; }
      set -- "$f:${1##*:}" "$2"
    fi
    name=$(basename "${1%%:*}" .py)
    [[ "$name" == *${PATCH_FILTER:-}* ]] || continue
    stamp "patch $name"
    PYTHONUNBUFFERED=1 python3 bench/patch_model.py --fusetune build/fusetune --model "$1" --input-shape "$2" \
      --math "${PATCH_MATH:-tf32}" --workdir "$R/patch-$name" --json "$R/patch-$name.json" \
      --tune-args "${PATCH_TUNE_ARGS:-}" > "$R/patch-$name.log" 2>&1 || rc=1
    tail -12 "$R/patch-$name.log"
    pack
  done
fi

if want smoke; then
  for i in $(seq 1 "${SMOKE_RUNS:-1}"); do
    stamp "smoke run $i"
    build/fusetune smoke --checks winners > "$R/smoke-$i.log" 2>&1; echo "exit $?" >> "$R/smoke-$i.log"
    grep -E "^(FAIL|smoke:)|^exit" "$R/smoke-$i.log"
    pack
  done
  stamp "smoke with a planted stale winner (must FAIL)"
  FUSETUNE_TEST_STALE=1 build/fusetune smoke --checks winners > "$R/smoke-stale.log" 2>&1
  [ $? -eq 1 ] && echo "stale smoke failed as it must" || { rc=1; echo "STALE SMOKE DID NOT FAIL"; }
  grep -E "^(ok|FAIL|smoke:)" "$R/smoke-stale.log" | cut -c1-160
  pack
fi

if want bench; then
  for math in ${MATHS:-tf32 fp32}; do
    stamp "bench $math"
    PYTHONUNBUFFERED=1 python3 bench/bench_presets.py --fusetune build/fusetune --json-dir "$R" --reuse \
      --math "$math" ${BENCH_ARGS:-} 2>&1 | tee "$R/bench-$math.md" | tail -14 || rc=1
    pack
  done
fi

if want problems; then
  stamp "bench problems (C >= 32) tf32"
  mkdir -p "$R/problems"
  PYTHONUNBUFFERED=1 python3 bench/bench_problems.py --fusetune build/fusetune --json-dir "$R/problems" \
    --spec-file bench/problems.txt --min-channels 32 ${BENCH_ARGS:-} 2>&1 | tee "$R/bench-problems.md" | tail -10 || rc=1
  pack
fi

if [[ " ${GPU_STEPS[*]} " == *" layers "* ]]; then  # not part of all: tens of minutes
  # issue 44 item 4 / issue 50: the real layers of bench/real_layers.txt (LAYERS_MATCH selects lines,
  # default the batch-32 ones), NCHW and channels-last, each beside eager and torch.compile
  for layout in nchw nhwc; do
    stamp "bench real layers ($layout) tf32"
    mkdir -p "$R/layers-$layout"
    cl=""; [ "$layout" = nhwc ] && cl="--channels-last"
    PYTHONUNBUFFERED=1 python3 bench/bench_problems.py --fusetune build/fusetune --json-dir "$R/layers-$layout" \
      --spec-file bench/real_layers.txt --match "${LAYERS_MATCH:-n=32,}" $cl ${BENCH_ARGS:-} 2>&1 |
      tee "$R/bench-layers-$layout.md" | tail -12 || rc=1
    pack
  done
fi

if want pipelines; then
  # issue 10: kernelbench-31's conv followed by relu and by two transcendental ops, whole pipelines
  conv="conv2d(n=128,c=64,h=128,w=128,k=128,r=3)"
  for chain in "relu" "mish | mish" "gelu | softplus"; do
    tune_one "pipe-$(echo "$chain" | tr -d ' ' | tr '|' '-')" tf32 "$conv | $chain"
  done
  pack
fi

if want harness; then
  stamp "fused-conv harness beside nvidia-smi"
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
    --format=csv -lms 50 > "$R/smi-harness.csv" 2>&1 &
  smi=$!
  OUTDIR=/tmp/fc-harness CONFIGS="${HARNESS_CONFIGS:-bench/fused_conv/configs-diag.txt}" \
    bash bench/fused_conv/run_harness.sh > "$R/harness.txt" 2>&1 || rc=1
  kill $smi; gzip -f "$R/smi-harness.csv"; cat "$R/harness.txt"
  pack
fi

if want refrate; then
  # the float64 reference's main-operator terms and the fallback conv, multiply-adds per second
  # (bench/reference/main_terms_rate.cpp: what worker/model_inputs.hpp's 1e13 limit rests on)
  stamp "reference terms rate"
  build/main_terms_rate ${REFRATE_ARGS:-} 2>&1 | tee "$R/main-terms-rate.md" || rc=1
  pack
fi

if want tunetime; then
  stamp "tuning time: cold, warm and stored tunes per strategy, torch.compile's compile time"
  PYTHONUNBUFFERED=1 python3 bench/bench_tuning_time.py --fusetune build/fusetune --json-dir "$R/tuning-time" \
    ${TT_ARGS:-} 2>&1 | tee "$R/tuning-time.md" | tail -14 || rc=1
  pack
fi

if want profile; then
  stamp "eager profile"
  PYTHONUNBUFFERED=1 python3 bench/eager_profile.py --benchmark 1 > "$R/eager-profile.md" 2>&1
  pack
fi
# Not part of all: issue 41's planted bugs (scripts/gpu_planted.sh), on a database of their own so
# that planted variants never reach the dump that is shipped.
if [[ " ${GPU_STEPS[*]} " == *" planted "* ]]; then
  stamp "planted bugs must fail verification"
  FUSETUNE_DB=/tmp/fusetune-planted-db/tuning.db scripts/gpu_planted.sh || rc=1
  pack
fi
# Not part of all: the cold-tune timing most calls since call 76 ran by hand.
if [[ " ${GPU_STEPS[*]} " == *" cold "* ]]; then
  for i in $(seq 1 "${COLD_RUNS:-2}"); do
    for p in ${COLD_PRESETS:-kernelbench-31 kernelbench-32}; do
      b=0
      for bin in ${COLD_BINS:-build/fusetune}; do
        b=$((b + 1)); stamp "cold tune $p, run $i, binary $b ($bin)"
        cold_tune "$bin" "$p-b$b-$i" --preset "$p" || rc=1
      done
    done
  done
  tune_phases "$R/cold" > "$R/phases.txt"
  # Two builds taking turns (COLD_BINS="A B"): each one's winners and times side by side.
  if [ "$(wc -w <<< "${COLD_BINS:-build/fusetune}")" -ge 2 ]; then
    python3 scripts/ab_summary.py "$R/cold" | tee "$R/ab-summary.md"
  fi
  pack
fi
# Not part of all: the KernelBench client (issue 50) over the checkout's level-2 problems, judged and
# timed by KernelBench's own code; records in $R/kernelbench (a cut call resumes there when carried back).
if [[ " ${GPU_STEPS[*]} " == *" kernelbench "* ]]; then
  stamp "fusetune kernelbench ${KB_PROBLEMS:-1-100}"
  deps=/tmp/fusetune-kb-deps
  if [ -d .gpu-wheels ]; then
    python3 -m pip install -q --no-index --find-links .gpu-wheels --target "$deps" pydantic requests tqdm \
      > "$R/kernelbench-pip.log" 2>&1 || echo "pip install of the carried wheels failed: $R/kernelbench-pip.log"
  fi
  # Records of a GPU-less run (KB_RECORDS, carried: mapped here, the refusals and "not tunable yet"
  # verdicts kept by this run) spare the device the mapping of problems that never reach tune.
  if [ -n "${KB_RECORDS:-}" ] && [ -d "$KB_RECORDS/level2" ]; then
    mkdir -p "$R/kernelbench/level2" && cp -n "$KB_RECORDS"/level2/*.json "$R/kernelbench/level2/"
  fi
  # KB_TIMEOUT seconds (default none): the step stops there and still packs the records it has
  PYTHONPATH="$deps${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 timeout "${KB_TIMEOUT:-0}" build/fusetune kernelbench \
    --kernelbench "${KERNELBENCH:-.kernelbench}" --problems "${KB_PROBLEMS:-1-100}" --out "$R/kernelbench" \
    --db "${KB_DB:-/tmp/fusetune-kb-db/tuning.db}" \
    --json "$R/kernelbench.json" ${KB_ARGS:---time-budget 60 --rounds 3} > "$R/kernelbench.md" \
    2> "$R/kernelbench.log" || rc=1
  # A run cut by KB_TIMEOUT wrote no table: make it from the records it has
  if [ ! -s "$R/kernelbench.md" ]; then
    build/fusetune kernelbench --kernelbench "${KERNELBENCH:-.kernelbench}" --problems "${KB_PROBLEMS:-1-100}" \
      --out "$R/kernelbench" --table-only --json "$R/kernelbench.json" > "$R/kernelbench.md" 2>> "$R/kernelbench.log"
  fi
  tail -12 "$R/kernelbench.md"
  # The records alone, in one small archive: a device call returns no folder that deep and no
  # archive past its size limit (call 119 lost its records to both; the database and the compile
  # cache stay outside $OUT through --db).
  tar czf "$OUT/kernelbench.tgz" -C "$R" kernelbench kernelbench.md kernelbench.log $( [ -f "$R/kernelbench.json" ] && echo kernelbench.json )
  pack
fi
exit $rc
