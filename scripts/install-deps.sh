#!/usr/bin/env bash
# Installs everything xlnetc needs to build and test on Debian 12 (bookworm).
# Idempotent: re-running it only checks that the packages are present.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build python3 pkg-config
  # MLIR / LLVM 19 (libzstd-dev and zlib1g-dev are needed by LLVMConfig.cmake)
  libmlir-19-dev mlir-19-tools llvm-19-dev llvm-19-tools libzstd-dev zlib1g-dev
  # libraries
  libfmt-dev libcli11-dev libtomlplusplus-dev nlohmann-json3-dev libgtest-dev libopenblas-dev
  libsentencepiece-dev sentencepiece
  # the loss plot of `xlnetc train`
  gnuplot-nox
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
