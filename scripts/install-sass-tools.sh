#!/usr/bin/env bash
# Installs cuobjdump and nvdisasm into /usr/local/lib/xlnetc-tools/bin (or
# $XLNETC_TOOLS_DIR/bin) from NVIDIA's PyPI wheels, unless the CUDA toolkit
# already has them. The wheels are downloaded (not installed into any Python)
# and unpacked. Idempotent. A failure is reported and leaves the tests that
# read SASS skipping themselves, saying why; it does not stop the build.
set -uo pipefail

dir="${XLNETC_TOOLS_DIR:-/usr/local/lib/xlnetc-tools}/bin"
version=13.5.37

if [ -x /usr/local/cuda/bin/cuobjdump ] && [ -x /usr/local/cuda/bin/nvdisasm ]; then
  echo "install-sass-tools: the CUDA toolkit has cuobjdump and nvdisasm"
  exit 0
fi
if [ -x "$dir/cuobjdump" ] && [ -x "$dir/nvdisasm" ]; then
  echo "install-sass-tools: cuobjdump and nvdisasm already in $dir"
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for tool in cuobjdump nvdisasm; do
  if ! python3 -m pip download --quiet --no-deps -d "$tmp" \
      "nvidia-cuda-$tool==$version" >"$tmp/pip.log" 2>&1; then
    echo "install-sass-tools: WARNING: could not download nvidia-cuda-$tool==$version" \
         "from PyPI; the SASS checks will be skipped:" >&2
    cat "$tmp/pip.log" >&2
    exit 0
  fi
done
mkdir -p "$dir"
for whl in "$tmp"/*.whl; do
  python3 - "$whl" "$dir" <<'PY'
import os, sys, zipfile
whl, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z:
    for name in z.namelist():
        if name.startswith("nvidia/") and "/bin/" in name and not name.endswith("/"):
            target = os.path.join(out, os.path.basename(name))
            with z.open(name) as src, open(target + ".tmp", "wb") as dst:
                dst.write(src.read())
            os.chmod(target + ".tmp", 0o755)
            os.replace(target + ".tmp", target)
PY
done
echo "install-sass-tools: installed cuobjdump and nvdisasm $version into $dir"
