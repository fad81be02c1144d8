#!/usr/bin/env bash
# Run here before a device call: gathers the Release binaries scripts/gpu_check.sh needs into
# .gpu/ (build/ is too large to carry), with the libraries the GPU image may lack (libfmt.so.9
# was missing on the lent H200 image). Name .gpu in the call's `carry`.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .gpu && mkdir -p .gpu/lib
cp build/fusetune build/gpu_*_test build/op_throughput .gpu/
for lib in libfmt.so.9 libsqlite3.so.0; do
  cp -L "/usr/lib/x86_64-linux-gnu/$lib" .gpu/lib/
done
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
du -sh .gpu
