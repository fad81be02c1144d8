#!/usr/bin/env bash
# call 95 (issues 8 and 11): the halo template with the review's fix (call91-areuse/keep-copies.patch
# applied: the last tap's lower A half copied into registers of its own before the fence, instead
# of reading wgmma A registers still in flight). In order of what matters:
#  1. the shipped records re-tuned for the new templates hash, as call 94 did (fresh database; tf32
#     --strategy exhaustive, fp32 guided) and dumped (h200.jsonl);
#  2. bench/bench_presets.py --reuse --export --math tf32 on these tunes: eager, torch.compile
#     max-autotune, the exported module, the replay and cuBLAS's 8192^3 TF32 matmul, interleaved;
#  3. the harness, #31's and #32's winners built from this template (fcS) and the one before (fcO),
#     alternating;
#  4. gpu_fused_conv_test (every variant of the tuner on its awkward shapes);
#  5. NVRTC alone and under 14-way load (/tmp/dump/nv on #31's winner's source, .gpu/nvprobe/);
#  6. cold traced #31 tunes (the trace now names each background compile with its duration).
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-585} - ($(date +%s) - t0) )); }
pack() { tar czf $OUT/call95.tar.gz -C $OUT run; }
tar -C .gpu -xJf .gpu/bins.tar.xz
mkdir -p build && cp -f .gpu/fusetune .gpu/*_test build/
venv_cudnn=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib
export LD_LIBRARY_PATH="$venv_cudnn:$(pwd)/.gpu/lib"
if [ "$(pwd)" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$(pwd)" /work/main; fi
mkdir -p /tmp/ftdb95; export FUSETUNE_DB=/tmp/ftdb95/tuning.db
tune() {  # name math strategy args...
  local name=$1 math=$2 strategy=$3 s e rc; shift 3; s=$(date +%s.%N)
  timeout 100 build/fusetune tune "$@" --math $math --force --strategy $strategy \
    --json $R/tune-$name-$math.json > $R/tune-$name-$math.txt 2>$R/tune-$name-$math.err; rc=$?; e=$(date +%s.%N)
  echo "tune $name $math --force --strategy $strategy (cold): rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $R/tune-times.txt
  grep -E "^(winner|tie)" $R/tune-$name-$math.txt; tail -1 $R/tune-$name-$math.err
}
tune kernelbench-31 tf32 exhaustive --preset kernelbench-31
tune kernelbench-32 tf32 exhaustive --preset kernelbench-32
tune kernelbench-31 fp32 model --preset kernelbench-31
tune kernelbench-32 fp32 model --preset kernelbench-32
build/fusetune db dump -o $R/h200.jsonl; build/fusetune query > $R/query.txt; cat $R/query.txt; pack
echo "== bench presets +$(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 150 python3 bench/bench_presets.py --fusetune build/fusetune --json-dir $R --reuse \
  --export --math tf32 > $R/bench-presets-tf32.md 2> $R/bench-presets-tf32.err; echo "rc=$?"; cat $R/bench-presets-tf32.md; pack
echo "== harness +$(( $(date +%s) - t0 )) s"
mkdir -p /tmp/fc && tar -C /tmp/fc -xJf .gpu/fc.tar.xz
for i in 1 2 1 2; do for b in fcS fcO; do
  echo "$b config $i: $(timeout 40 /tmp/fc/$b/h$i 2>&1 | tail -3 | tr '\n' ' ')" | tee -a $R/harness-speed.txt
done; done; pack
echo "== gpu_fused_conv_test +$(( $(date +%s) - t0 )) s"
timeout $(( $(left) - 60 )) build/gpu_fused_conv_test --gtest_brief=1 > $R/gpu-fused-conv-test.log 2>&1
echo "gpu_fused_conv_test rc=$?"; tail -4 $R/gpu-fused-conv-test.log; pack
echo "== nvrtc probe +$(( $(date +%s) - t0 )) s"
P=.gpu/nvprobe; for k in 1 2; do echo "alone: $($P/nv $P/v.cu | tail -1)"; done > $R/nvrtc-probe.txt
for k in $(seq 14); do ( echo "14-way $k: $($P/nv $P/v.cu | tail -1)" >> $R/nvrtc-probe.txt ) & done; wait; cat $R/nvrtc-probe.txt; pack
T=$R/cold; mkdir -p $T; i=0
while [ "$(left)" -gt 25 ]; do
  i=$((i + 1)); d=$(mktemp -d); s=$(date +%s.%N)
  FUSETUNE_TRACE=$T/trace-$i.txt FUSETUNE_DB=$d/tuning.db CUDA_CACHE_PATH=$d/cuda-cache timeout 20 build/fusetune tune \
    --preset kernelbench-31 --force --json $T/tune-$i.json > $T/tune-$i.txt 2> $T/tune-$i.err
  rc=$?; e=$(date +%s.%N); echo "tune-$i (#31 cold) rc=$rc wall $(awk "BEGIN{print $e - $s}") s" | tee -a $T/tune-time.txt
  [ $i -ge 3 ] && break
done
echo "== end +$(( $(date +%s) - t0 )) s"; pack
