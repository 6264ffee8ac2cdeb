#!/usr/bin/env bash
# Installs everything xlnetc needs to build and test on Debian 12 (bookworm).
# Idempotent: re-running it only checks that the packages are present.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build python3 pkg-config
  # the GPU package (scripts/pack-gpu-tests.sh) compresses its libraries
  xz-utils
  # MLIR / LLVM 19 (libzstd-dev and zlib1g-dev are needed by LLVMConfig.cmake)
  libmlir-19-dev mlir-19-tools llvm-19-dev llvm-19-tools libzstd-dev zlib1g-dev
  # libraries
  libfmt-dev libcli11-dev libtomlplusplus-dev nlohmann-json3-dev libgtest-dev libopenblas-dev
  libsentencepiece-dev sentencepiece libicu-dev
  # the loss plot of `xlnetc train`
  gnuplot-nox
  # data-parallel training under mpirun (libxlnetc-mpi.so, data-parallel.test)
  openmpi-bin libopenmpi-dev
  # train --tensorboard (libxlnetc-tensorboard.so: protobuf messages, ISA-L's CRC32C)
  libprotobuf-dev protobuf-compiler libisal-dev
  # pip download, for the SASS tools below
  python3-pip
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# cuobjdump and nvdisasm (the SASS of NVRTC's CUBINs: the tests check that
# the attention kernels run on tensor cores). The CUDA toolkit here lacks
# them; NVIDIA publishes them on PyPI as wheels holding the binaries.
bash "$(dirname "$0")/install-sass-tools.sh"
