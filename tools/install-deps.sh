#!/bin/bash
# Installs the Debian 12 packages mlcc needs to build and test, skipping
# those already installed. Idempotent; needs root (or sudo).
set -euo pipefail
packages=(
  cmake ninja-build ccache gcc g++ git
  llvm-19 llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  libxbyak-dev libcli11-dev catch2
  libonnx-dev libonnx-testdata protobuf-compiler libprotobuf-dev
  zlib1g-dev libzstd-dev
  python3-onnx python3-numpy python3-torch python3-torchvision python3-sklearn
  python3-matplotlib
  mesa-vulkan-drivers libvulkan-dev spirv-tools vulkan-validationlayers
  libspirv-cross-c-shared-dev clang-19 libclang-rt-19-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
