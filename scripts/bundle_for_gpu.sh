#!/usr/bin/env bash
# Run here before a device call: gathers the Release binaries scripts/gpu_check.sh needs into
# .gpu/ (build/ is too large to carry), with the libraries the GPU image may lack (libfmt.so.9
# was missing on the lent H200 image). Name .gpu in the call's `carry`.
# .gpu/source_dir records the source folder the binaries were built in: they find their test data
# and the worker through that path (FUSETUNE_SOURCE_DIR, baked in at build time), so the GPU side
# links it to its own checkout when it is absent there (scripts/lib/gpu_common.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .gpu && mkdir -p .gpu/lib
cp build/fusetune build/gpu_*_test build/op_throughput build/main_terms_rate .gpu/
# Symbols off: the carried tree must stay under 64 MiB with a KernelBench checkout and wheels beside it.
strip --strip-unneeded .gpu/fusetune .gpu/gpu_*_test .gpu/op_throughput .gpu/main_terms_rate
sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt > .gpu/source_dir
[ -s .gpu/source_dir ] || { echo "bundle_for_gpu: no CMAKE_HOME_DIRECTORY in build/CMakeCache.txt" >&2; exit 1; }
# The libraries as this machine's loader resolves them for the binary.
for lib in libfmt.so.9 libsqlite3.so.0; do
  path=$(ldd build/fusetune | awk -v l="$lib" '$1 == l { print $3 }')
  [ -n "$path" ] || { echo "bundle_for_gpu: build/fusetune does not load $lib" >&2; exit 1; }
  cp -L "$path" .gpu/lib/
done
# Packed: loose, the nine test binaries and fusetune pass 50 MiB; xz brings them to about 6 MiB
# (scripts/lib/gpu_common.sh unpacks .gpu/bins.tar.xz on the GPU side).
(cd .gpu && tar -cJf bins.tar.xz fusetune gpu_*_test op_throughput main_terms_rate && rm -f fusetune gpu_*_test op_throughput main_terms_rate)
du -sh .gpu
