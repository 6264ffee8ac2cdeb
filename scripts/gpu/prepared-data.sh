#!/usr/bin/env bash
# Prepared data on the GPU (docs/Testing.md "On a GPU"): the package's tiny
# training step, 20 steps, on cuda from a prepared directory (xlnetc-run
# prepare-data of the package's demo corpus) and from the text itself,
# compared bit for bit, and against the host. Run after run.sh, which makes
# the xr command: bash .gpu/prepared-data.sh (XLNETC_RUN_DEVICE, default
# cuda, as run.sh: the emulated dry run sets emu).
set -u
dev=${XLNETC_RUN_DEVICE:-cuda}
export PATH=${GPU_WORK_DIR:-/tmp/xlnetc-gpu-work}/bin:$PATH
here=$(cd "$(dirname "$0")" && pwd)
w=${GPU_WORK_DIR:-/tmp/xlnetc-gpu-work}/prepared && rm -rf $w && mkdir -p $w
xr train $here/bundles/tiny-train --data $here/demo.txt --out $w/tok --steps 1 --no-plot --device host > /dev/null || exit 1
xr prepare-data $here/demo.txt -o $w/prep --tokenizer $w/tok/spiece.model --threads 8 --unit-mib 0.1 2>/dev/null || exit 1
for src in "text:$here/demo.txt" "prep:$w/prep"; do
  name=${src%%:*} data=${src#*:}
  for d in host $dev; do
    xr train $here/bundles/tiny-train --data $data --tokenizer $w/tok/spiece.model --out $w/$name-$d --steps 20 --no-plot --device $d | tail -1
  done
done
for pair in "prep-$dev text-$dev" "prep-host text-host"; do
  set -- $pair
  echo "$1 vs $2: $(xr compare $w/$1/checkpoint.safetensors $w/$2/checkpoint.safetensors --rtol 0 | tail -1)"
done
echo "$dev vs host (prepared): $(python3 $here/metrics.py close $w/prep-$dev/metrics.jsonl $w/prep-host/metrics.jsonl 1e-3)"
