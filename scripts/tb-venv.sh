#!/usr/bin/env bash
# Makes the virtualenv with the `tensorboard` package whose event reader
# test/Training/tensorboard.test reads xlnetc's event files back with, at
# ${XLNETC_TB_VENV:-~/.cache/xlnetc/tb-venv} (178 MB here). scripts/run-tests.sh
# runs it before the suite. Idempotent; as scripts/hf-venv.sh: where pip
# cannot install it, pip's message says why, the half-made venv is removed,
# the script exits 0 and the test stays unsupported; only a venv this script
# made is ever replaced.
set -euo pipefail
venv="${XLNETC_TB_VENV:-$HOME/.cache/xlnetc/tb-venv}"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import tensorboard" 2>/dev/null; then
  echo "tb-venv: $venv is ready (tensorboard $("$venv/bin/python" -c 'import tensorboard; print(tensorboard.__version__)'))"
  exit 0
fi
stamp="$venv/.xlnetc-tb-venv"
if [ -e "$venv" ] && [ ! -f "$stamp" ] && [ -n "$(ls -A "$venv" 2>/dev/null)" ]; then
  echo "tb-venv: $venv exists and was not made by this script (no $stamp); it is left as it" \
       "is: set XLNETC_TB_VENV to another directory" >&2
  exit 1
fi
trap 'status=$?; if [ $status -ne 0 ]; then rm -rf "$venv"; echo "tb-venv: failed (exit $status); removed $venv" >&2; fi' EXIT
rm -rf "$venv"
python3 -m venv "$venv"
touch "$stamp"
pip_flags=(-q --no-cache-dir --retries 1 --timeout 30)
if ! "$venv/bin/pip" install "${pip_flags[@]}" tensorboard; then
  rm -rf "$venv"
  trap - EXIT
  echo "tb-venv: pip could not install tensorboard (its message is above); removed $venv;" \
       "the TensorBoard test stays unsupported"
  exit 0
fi
"$venv/bin/python" -c 'import tensorboard; print("tb-venv: ready: tensorboard", tensorboard.__version__)'
