#!/usr/bin/env bash
# Every test: build, all ctest tests (GPU tests skip with a reason on machines without a GPU),
# the fuzzers (spec parser; db import + export) for FUZZ_SECONDS (60) each, then `fusetune smoke`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
# Every run record a figure or comment cites exists (docs/runs/README.md).
scripts/check_run_citations.sh

cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ -DFUSETUNE_FUZZ=ON >/dev/null
cmake --build build-fuzz --target fuzz_spec fuzz_dump
mkdir -p build-fuzz/corpus build-fuzz/dump_corpus
build-fuzz/fuzz_spec -max_total_time="${FUZZ_SECONDS:-60}" -max_len=256 -dict=fuzz/spec.dict \
  build-fuzz/corpus fuzz/corpus 2>build-fuzz/fuzz.log || { tail -50 build-fuzz/fuzz.log; exit 1; }
tail -3 build-fuzz/fuzz.log
echo "fuzz: spec parser ran ${FUZZ_SECONDS:-60} s without a finding"
# `db import` + every export of fuzzed dumps (fuzz/fuzz_dump.cpp states the invariant). The seed
# winners are ~15 KB: inputs may grow to 64 KB. -rss_limit_mb: ASan's shadow plus SQLite's pages.
build-fuzz/fuzz_dump -max_total_time="${FUZZ_SECONDS:-60}" -max_len=65536 -rss_limit_mb=4096 -dict=fuzz/dump.dict \
  -artifact_prefix=build-fuzz/ build-fuzz/dump_corpus fuzz/dump_corpus 2>build-fuzz/fuzz_dump.log ||
  { tail -50 build-fuzz/fuzz_dump.log; exit 1; }
tail -3 build-fuzz/fuzz_dump.log
echo "fuzz: db import + export ran ${FUZZ_SECONDS:-60} s without a finding"

# The CI smoke test users put in their pipelines, on a fresh database (it loads the shipped records).
smoke_dir=$(mktemp -d)
trap 'rm -rf "$smoke_dir"' EXIT
build/fusetune smoke --db "$smoke_dir/tuning.db" --junit "$smoke_dir/smoke.xml"

# The installed tool stands alone: templates and shipped records are inside the binary.
cmake --install build --prefix "$smoke_dir/prefix" >/dev/null
"$smoke_dir/prefix/bin/fusetune" --version
bash -n "$smoke_dir/prefix/share/bash-completion/completions/fusetune"
echo "install: bash completion at share/bash-completion/completions/fusetune"
# Every page the README links is installed beside it.
for page in $(grep -o '](docs/[a-z-]*\.md)' README.md | sed 's/](docs\/\(.*\))/\1/' | sort -u); do
  [ -f "$smoke_dir/prefix/share/doc/fusetune/$page" ] || { echo "install: docs/$page, linked from the README, is not installed"; exit 1; }
done
echo "install: every page the README links is under share/doc/fusetune"
