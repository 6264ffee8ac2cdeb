#!/usr/bin/env bash
# The main job on the tiny model: install, build, compile models/xlnet-tiny.toml
# to a plan and run one forward step (host executor, random init, synthetic
# batch), printing the loss.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
echo "== xlnetc compile models/xlnet-tiny.toml --emit=plan -o build/xlnet-tiny.plan.json"
build/bin/xlnetc compile models/xlnet-tiny.toml --emit=plan -o build/xlnet-tiny.plan.json
echo "== xlnetc run-step models/xlnet-tiny.toml --out build/xlnet-tiny.step.safetensors"
build/bin/xlnetc run-step models/xlnet-tiny.toml --out build/xlnet-tiny.step.safetensors
