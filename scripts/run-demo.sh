#!/usr/bin/env bash
# The main job on the tiny model: install, build, generate the demo corpus,
# and pretrain models/xlnet-tiny.toml on it on the CPU (a SentencePiece model
# is trained on the corpus first). Prints the progress and leaves the run in
# build/demo-run: checkpoint.safetensors, metrics.jsonl, loss.png, spiece.model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
rm -rf build/demo-run
echo "== xlnetc make-corpus demo build/demo-corpus.txt"
build/bin/xlnetc make-corpus demo build/demo-corpus.txt
echo "== xlnetc train models/xlnet-tiny.toml --data build/demo-corpus.txt --out build/demo-run"
build/bin/xlnetc train models/xlnet-tiny.toml --data build/demo-corpus.txt --out build/demo-run --log-every 20
