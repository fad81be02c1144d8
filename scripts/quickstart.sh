#!/usr/bin/env bash
# The main job on the embedded default problem (kernelbench-31): set up, build, then tune on
# the GPU. Without a GPU it does the GPU-free part -- generate and compile every variant with
# NVRTC -- and says why it stops there.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
preset="${1:-kernelbench-31}"
if build/fusetune devices >/dev/null 2>/tmp/fusetune-devices.err; then
  exec build/fusetune tune --preset "$preset"
fi
echo "quickstart: $(sed 's/^fusetune: //' /tmp/fusetune-devices.err)" >&2
echo "quickstart: without a GPU, compiling every variant of $preset for sm_90 (tuning needs a GPU)" >&2
build/fusetune compile --preset "$preset" --arch sm_90
