#!/usr/bin/env bash
# The whole test suite: install, build, then every unit and lit test through
# ctest. GPU tests are labelled "gpu" and skipped where no GPU exists.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
