#!/usr/bin/env bash
# The numerics under one choice of OpenBLAS kernels (OPENBLAS_CORETYPE=CORE):
# the golden cases forward (rtol 1e-5) and gradients (rtol 1e-4) on the host
# executor, the tiny golden step on the emulated device (whose GEMMs are
# OpenBLAS's too), the finite-difference gradient check, and the README's
# training run, whose loss must fall. Prints one line per check for
# FileCheck (test/Numerics/gemm-kernels.test); stops at the first failure.
#
# usage: under-gemm-kernels.sh XLNETC CORE GOLDEN_DIR MODELS_DIR WORK_DIR PYTHON METRICS_PY
set -euo pipefail
xlnetc=$1 core=$2 golden=$3 models=$4 work=$5 python=$6 metrics=$7
export OPENBLAS_CORETYPE=$core
rm -rf "$work" && mkdir -p "$work"

# The forced kernels are the ones in use, or the test tests nothing.
line=$("$xlnetc" devices | grep '^gemm ')
case "$line" in
  *", $core kernels"*) echo "kernels in use: $core" ;;
  *) echo "OPENBLAS_CORETYPE=$core did not take: $line" >&2; exit 1 ;;
esac

step() { # CASE DEVICE RTOL ONLY... [--grads]
  local case=$1 device=$2 rtol=$3 grads=$4; shift 4
  "$xlnetc" run-step "$golden/$case.config.json" --weights "$golden/$case.weights.safetensors" \
    --batch "$golden/$case.batch.safetensors" --device "$device" $grads \
    --out "$work/$case.$device$grads.safetensors" > /dev/null 2>&1
  echo "$case $device ${grads:---forward}: $("$xlnetc" compare "$work/$case.$device$grads.safetensors" \
    "$golden/$case.expected.safetensors" --rtol "$rtol" --only "$@" | tail -n 1)"
}
for case in tiny tiny-nomem small; do
  step "$case" host 1e-5 "" loss per_token_loss logits hidden 'new_mems.*'
  step "$case" host 1e-4 --grads 'grad.*'
done
step tiny emu 1e-4 --grads 'grad.*'

echo "$("$xlnetc" gradcheck "$models/xlnet-tiny.toml" | tail -n 1)"

"$xlnetc" make-corpus demo "$work/demo.txt" > /dev/null
"$xlnetc" train "$models/xlnet-tiny.toml" --data "$work/demo.txt" --out "$work/run" --no-plot \
  | grep '^done:' | sed 's/ in .*//'
"$python" "$metrics" falls "$work/run/metrics.jsonl" 0.85 && echo "train: the loss falls"
