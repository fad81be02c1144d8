#!/usr/bin/env bash
# Installs what fusetune builds with (Debian/Ubuntu packages; the CUDA toolkit with NVRTC and
# cuDNN must already be installed, as on every CUDA development machine) and builds it in
# Release under build/. Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ clang libclang-rt-14-dev libfmt-dev libcli11-dev libsqlite3-dev
          nlohmann-json3-dev libgtest-dev sqlite3 python3-jsonschema python3-pytest)
# For the report's screenshot test only (tests/report_screenshot.py skips without them): not
# every distribution packages Chromium as a plain package, so these may fail to install.
optional_packages=(chromium python3-pil)
# For the Slurm job-array test only (tests/slurm_array_test.sh, docs/cluster.md's scripts on a
# one-node Slurm; it skips without them).
optional_packages+=(slurm-wlm)
# The packages of a list that are not installed.
not_installed() {
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
mapfile -t missing < <(not_installed "${packages[@]}")
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
mapfile -t optional_missing < <(not_installed "${optional_packages[@]}")
if ((${#optional_missing[@]})); then
  echo "setup: installing ${optional_missing[*]} (for the report's screenshot and the Slurm tests)" >&2
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
      "${optional_missing[@]}" >/dev/null; } ||
    echo "setup: could not install ${optional_missing[*]}: the tests that need them will skip" >&2
fi

command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
command -v nvcc >/dev/null || { echo "setup: the CUDA toolkit (nvcc, NVRTC, cuDNN) is not installed" >&2; exit 1; }

# cuDNN's frontend (header-only C++ graph API), pinned: the headers of one wheel from PyPI,
# checked against its SHA-256 and unpacked under .deps/ (git-ignored; never committed).
frontend_version=1.32.0
frontend_wheel=nvidia_cudnn_frontend-${frontend_version}-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl
frontend_sha256=c6006556017a4d1c914c52a556c71b1267f2d6a0500f742e7b4edef539878df0
frontend_dir=.deps/cudnn-frontend-${frontend_version}
if [ ! -f "$frontend_dir/include/cudnn_frontend.h" ]; then
  echo "setup: fetching cudnn-frontend ${frontend_version} headers from PyPI" >&2
  command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1 || {
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-pip unzip >/dev/null; }
  rm -rf .deps/wheel && mkdir -p .deps/wheel
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 --implementation cp \
    --platform manylinux_2_28_x86_64 "nvidia-cudnn-frontend==${frontend_version}" -d .deps/wheel
  echo "${frontend_sha256}  .deps/wheel/${frontend_wheel}" | sha256sum -c --quiet - ||
    { echo "setup: ${frontend_wheel} does not match its pinned SHA-256" >&2; exit 1; }
  rm -rf "$frontend_dir" && mkdir -p "$frontend_dir"
  python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); [z.extract(n, sys.argv[2]) for n in z.namelist() if n.startswith("include/")]' \
    ".deps/wheel/${frontend_wheel}" "$frontend_dir"
  rm -rf .deps/wheel
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
