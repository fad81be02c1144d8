#!/usr/bin/env bash
cd "$(dirname "$0")/../../../.."  # run from the repository root
export OUT=${OUT:-/tmp/o}; mkdir -p $OUT
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active --format=csv -lms 50 > $OUT/smi.csv 2>&1 &
smi=$!
python3 docs/runs/2026-12-02/call38-timing-regimes/call38.py 2>&1 | tee $OUT/call38.txt
kill $smi; gzip -f $OUT/smi.csv
