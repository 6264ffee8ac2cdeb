#!/usr/bin/env bash
# Gradient accumulation on the GPU (docs/Testing.md "On a GPU", docs/Training.md
# "Gradient accumulation"): the package's tiny step without dropout, 12
# steps of a batch of 4 in one batch and in 2 micro-batches of 2 (bundles
# accum-plain, accum-micro2), fp32 and bf16 on cuda, and the fp32
# micro-batches on the host too. In micro-batches the run is the one-batch
# run within 1e-5 (bf16: 1e-3), and the GPU's the host's within 1e-3. Exits
# 1 when a comparison fails. Run after run.sh, which makes the xr command:
# bash .gpu/accumulate.sh (XLNETC_RUN_DEVICE, default cuda, as run.sh: the
# emulated dry run sets emu).
set -u
dev=${XLNETC_RUN_DEVICE:-cuda}
export PATH=${GPU_WORK_DIR:-/tmp/xlnetc-gpu-work}/bin:$PATH
here=$(cd "$(dirname "$0")" && pwd)
w=${GPU_WORK_DIR:-/tmp/xlnetc-gpu-work}/accumulate && rm -rf $w && mkdir -p $w
xr train $here/bundles/accum-plain --data $here/demo.txt --out $w/tok --steps 1 --no-plot --device host > /dev/null || exit 1
tok=$w/tok/spiece.model
run() { # run NAME BUNDLE DEVICE ARGS...
  local name=$1 bundle=$2 d=$3
  shift 3
  xr train $here/bundles/$bundle --data $here/demo.txt --tokenizer $tok --out $w/$name --steps 12 \
    --no-plot --device $d "$@" | tail -1
}
run plain-$dev accum-plain $dev
run micro-$dev accum-micro2 $dev --micro-batch 2
run micro-host accum-micro2 host --micro-batch 2
run plain-bf16 accum-plain-bf16 $dev --precision bf16
run micro-bf16 accum-micro2-bf16 $dev --precision bf16 --micro-batch 2
bad=0
close() { # close A B RTOL: prints metrics.py's line, remembers a failure
  local line
  line=$(python3 $here/metrics.py close $w/$1/metrics.jsonl $w/$2/metrics.jsonl $3) || bad=1
  echo "$1 vs $2: $line"
}
close micro-$dev plain-$dev 1e-5
close micro-$dev micro-host 1e-3
close micro-bf16 plain-bf16 1e-3
line=$(xr compare $w/micro-$dev/checkpoint.safetensors $w/plain-$dev/checkpoint.safetensors --rtol 1e-5) || bad=1
echo "checkpoints: $(tail -1 <<< "$line")"
exit $bad
