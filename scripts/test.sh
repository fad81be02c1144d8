#!/usr/bin/env bash
# Every test: build, all ctest tests (GPU tests skip with a reason on machines without a GPU),
# the spec parser's fuzzer for 60 s, then `fusetune smoke`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"

cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ -DFUSETUNE_FUZZ=ON >/dev/null
cmake --build build-fuzz --target fuzz_spec
mkdir -p build-fuzz/corpus
build-fuzz/fuzz_spec -max_total_time="${FUZZ_SECONDS:-60}" -max_len=256 -dict=fuzz/spec.dict \
  build-fuzz/corpus fuzz/corpus 2>build-fuzz/fuzz.log || { tail -50 build-fuzz/fuzz.log; exit 1; }
tail -3 build-fuzz/fuzz.log
echo "fuzz: spec parser ran ${FUZZ_SECONDS:-60} s without a finding"

# The CI smoke test users put in their pipelines, on a fresh database (it loads the shipped records).
smoke_dir=$(mktemp -d)
trap 'rm -rf "$smoke_dir"' EXIT
build/fusetune smoke --db "$smoke_dir/tuning.db"
