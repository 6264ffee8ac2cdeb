#!/usr/bin/env bash
# Makes the virtualenv the HuggingFace round-trip test uses
# (test/Training/hf-roundtrip.test): torch, transformers, sentencepiece,
# protobuf, safetensors and numpy from PyPI, at
# ${XLNETC_HF_VENV:-~/.cache/xlnetc/hf-venv}. About 5.6 GB and 80 s here
# (PyPI's torch for Linux bundles CUDA). scripts/run-tests.sh runs it before
# the suite. Idempotent. Where pip cannot install them (no package index
# reachable, a proxy, a full disk) pip's own message says why, the half-made
# venv is removed and the script exits 0, so the test stays unsupported
# rather than failing. The index is pip's to find (pip.conf, PIP_INDEX_URL):
# this script names none.
set -euo pipefail
venv="${XLNETC_HF_VENV:-$HOME/.cache/xlnetc/hf-venv}"
transformers="${XLNETC_HF_TRANSFORMERS:-transformers}"
if [ -x "$venv/bin/python" ] &&
   "$venv/bin/python" -c "import torch, transformers, sentencepiece, safetensors" 2>/dev/null; then
  echo "hf-venv: $venv is ready ($("$venv/bin/python" -c 'import transformers; print("transformers", transformers.__version__)'))"
  exit 0
fi
if ! python3 -m venv --help >/dev/null 2>&1; then
  apt-get install -y -q --no-install-recommends python3-venv
fi
# Only a virtualenv this script made (its stamp file) or an empty directory
# is replaced: never a directory, or a virtualenv, of the user's own.
stamp="$venv/.xlnetc-hf-venv"
if [ -e "$venv" ] && [ ! -f "$stamp" ] && [ -n "$(ls -A "$venv" 2>/dev/null)" ]; then
  echo "hf-venv: $venv exists and was not made by this script (no $stamp); it is left" \
       "as it is: set XLNETC_HF_VENV to another directory, or XLNETC_HF_PYTHON to a Python" \
       "with torch, transformers, sentencepiece and safetensors" >&2
  exit 1
fi
# A failed install (a full disk, a dropped connection) leaves no half-made
# venv behind to take the space.
trap 'status=$?; if [ $status -ne 0 ]; then rm -rf "$venv"; echo "hf-venv: failed (exit $status); removed $venv" >&2; fi' EXIT
rm -rf "$venv"
python3 -m venv "$venv"
touch "$stamp"
# Two tries with a 30 s timeout each: an offline machine learns it in about
# a minute rather than after pip's default five retries.
pip_flags=(-q --no-cache-dir --retries 1 --timeout 30)
if ! "$venv/bin/pip" install "${pip_flags[@]}" --upgrade pip ||
   ! "$venv/bin/pip" install "${pip_flags[@]}" torch "$transformers" sentencepiece protobuf \
       safetensors numpy; then
  rm -rf "$venv"
  trap - EXIT
  echo "hf-venv: pip could not install the packages (its message is above); removed $venv;" \
       "the HuggingFace round-trip test stays unsupported"
  exit 0
fi
"$venv/bin/python" -c 'import torch, transformers; print("hf-venv: ready: torch", torch.__version__, "transformers", transformers.__version__)'
