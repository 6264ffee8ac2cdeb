#!/usr/bin/env bash
# gpu-dry-run.sh PACK OUT [STAGE...]: the GPU package's run.sh on the
# emulated device, with the stand-ins of gpu-standins/ for nvidia-smi and
# compute-sanitizer first on PATH; results in OUT, scratch in OUT.work.
# Other GPU_* variables pass through (scripts/gpu/run.sh).
here=$(cd "$(dirname "$0")" && pwd)
pack=$1 out=$2
shift 2
PATH="$here/gpu-standins:$PATH" XLNETC_RUN_DEVICE=${XLNETC_RUN_DEVICE:-emu} OUT="$out" \
  GPU_WORK_DIR="$out.work" exec bash "$pack/run.sh" "$@"
