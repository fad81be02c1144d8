#!/usr/bin/env bash
# Builds and runs bench/fused_conv/harness.cu for a list of configurations (one per line of
# KEY=VALUE words: bench/fused_conv/configs-*.txt); prints one line per configuration.
#   [CONFIGS=file] [OUTDIR=dir] [TEMPLATES=dir] bench/fused_conv/run_harness.sh [all|build-only|run-only]
# TEMPLATES: where the kernel templates are read from (default kernel_templates/): an edited copy
# can be timed against the templates as they are, in one call. A config's NVCC=... word (commas
# for spaces) adds nvcc options, e.g. NVCC=-Xptxas,-O1.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUTDIR="${OUTDIR:-/tmp/fc-harness}"
mkdir -p "$OUTDIR"
list="${CONFIGS:-bench/fused_conv/configs-check.txt}"
templates="${TEMPLATES:-kernel_templates}"
mode="${1:-all}"  # all | build-only | run-only
i=0
while IFS= read -r cfg; do
  case "$cfg" in ''|'#'*) continue ;; esac
  i=$((i + 1))
  if [ "$mode" != run-only ]; then
    declare -A d=([STRIDE_H]=1 [STRIDE_W]=1 [PAD_H]=0 [PAD_W]=0 [DIL_H]=1 [DIL_W]=1 [IN_NHWC]=0 [OUT_NHWC]=0 [BK]=32)
    extra=()
    for kv in $cfg; do
      case "$kv" in NVCC=*) IFS=, read -r -a extra <<< "${kv#NVCC=}" ;; *) d[${kv%%=*}]=${kv#*=} ;; esac
    done
    flags=("${extra[@]}")
    for k in "${!d[@]}"; do flags+=("-DFT_$k=${d[$k]}"); done
    unset d
    if ! nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -I "$templates" -I bench/fused_conv "${flags[@]}" \
        -o "$OUTDIR/h$i" bench/fused_conv/harness.cu > "$OUTDIR/h$i.build.log" 2>&1; then
      echo "config $i: BUILD FAILED ($cfg)"; tail -3 "$OUTDIR/h$i.build.log"; continue
    fi
  fi
  [ "$mode" = build-only ] && continue
  echo "config $i ($cfg): $(timeout 60 "$OUTDIR/h$i" 2>&1 | tail -9 | tr '\n' ' ')"
done < "$list"
