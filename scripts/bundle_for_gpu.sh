#!/usr/bin/env bash
# Run here before carrying build/ to a GPU machine whose image lacks a library we link
# (libfmt.so.9 was missing on the lent H200 image): copies them into build/carrylib, which
# scripts/gpu_check.sh puts on LD_LIBRARY_PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/carrylib
for lib in libfmt.so.9 libsqlite3.so.0; do
  cp -L "/usr/lib/x86_64-linux-gnu/$lib" build/carrylib/
done
du -sh build
