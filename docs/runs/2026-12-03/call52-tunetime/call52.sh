#!/usr/bin/env bash
# call 52 (issue 11): the branch wip-issue11-tunetime on the H200 before it lands. Tuning time
# with the conv options screened, the input's channels-last copy made on the GPU, lazy cuDNN
# engine builds, the solutions compiled during the baselines, sustained timing counting busy
# GPU time (L2 scrubs included) and the worker released once it acknowledges quit: cold (fresh
# database, compile cache and CUDA_CACHE_PATH), warm and stored tunes of both presets and two
# problems, guided strategy, next to torch.compile max-autotune; what a stored answer's 0.18 s
# was spent on; then the GPU tests the changes touch.
cd "$(dirname "$0")/../../../.."  # run from the repository root
OUT=${OUT:-/tmp/o}; R=$OUT/run; mkdir -p $R
t0=$(date +%s); left() { echo $(( ${LIMIT:-580} - ($(date +%s) - t0) )); }
mkdir -p build && cp -f .gpu/fusetune .gpu/gpu_*_test build/
[ -e /work/main ] || { mkdir -p /work && ln -s "$(pwd)" /work/main; }
export LD_LIBRARY_PATH="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib:$(pwd)/.gpu/lib"
export PYTHONUNBUFFERED=1
pack() { tar czf $OUT/run.tgz -C $OUT run; }
stamp() { echo "== +$(( $(date +%s) - t0 )) s $*"; }
nproc > $R/nproc.txt
nvidia-smi -q 2>/dev/null | grep -iE "persistence|product name" | head -3 > $R/smi.txt

stamp "stored-answer probes"
{
  wall() { local s e; s=$(date +%s.%N); "$@" > /dev/null 2>&1; e=$(date +%s.%N); awk "BEGIN{printf \"%.3f s\", $e - $s}"; }
  for i in 1 2 3; do echo "fusetune --version: $(wall build/fusetune --version)"; done
  for i in 1 2 3; do echo "fusetune devices (in-process cuInit): $(wall build/fusetune devices)"; done
  for i in 1 2 3; do echo "python3 -c pass: $(wall python3 -c pass)"; done
  for i in 1 2 3; do echo "python3 cuInit: $(wall python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1").cuInit(0)')"; done
  command -v strace >/dev/null && echo "strace: present" || echo "strace: absent"
} > $R/stored-probes.txt 2>&1
cat $R/stored-probes.txt

stamp "tuning-time bench (model)"
timeout $(( $(left) - 200 )) python3 bench/bench_tuning_time.py --fusetune build/fusetune --strategies model \
  --json-dir $R/tt > $R/tunetime.txt 2>&1; echo "rc=$?"
cat $R/tunetime.txt
db=/tmp/ftdb52; rm -rf $db; mkdir -p $db
CUDA_CACHE_PATH=$db/cuda build/fusetune tune --preset kernelbench-31 --db $db/tuning.db -q > /dev/null 2>&1
for i in 1 2 3 4 5; do s=$(date +%s.%N); build/fusetune tune --preset kernelbench-31 --db $db/tuning.db -q > /dev/null 2>&1
  e=$(date +%s.%N); echo "stored answer kernelbench-31: $(awk "BEGIN{printf \"%.3f\", $e - $s}") s"; done | tee -a $R/stored-probes.txt
command -v strace >/dev/null && strace -f -tt -e trace=execve,exit_group,wait4,kill,openat -o $R/stored.strace \
  build/fusetune tune --preset kernelbench-31 --db $db/tuning.db -q > /dev/null 2>&1
gzip -f $R/tt/*.json 2>/dev/null; pack

for t in gpu_cudnn_fused_test gpu_tune_test; do
  stamp "$t"
  timeout $(( $(left) - 5 )) build/$t > $R/$t.log 2>&1; echo "rc=$?"
  grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|ms total\)$" $R/$t.log | tail -6
  pack
done
stamp done; pack
