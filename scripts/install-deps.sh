#!/usr/bin/env bash
# Installs the Debian packages HloGym needs to build and test. Idempotent:
# packages already present are skipped, and apt-get is only called when
# something is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build g++ pkg-config
  libabsl-dev libxxhash-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libzip-dev
  python3 python3-numpy python3-dev pybind11-dev python3-pytest
  libgoogle-perftools-dev
)
# Only `make fuzz` needs clang's libFuzzer.
if [ "${1:-}" = "--fuzz" ]; then
  PACKAGES+=(clang libclang-rt-14-dev)
fi
OPTIONAL=(ccache clang-format)

missing=()
for p in "${PACKAGES[@]}" "${OPTIONAL[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
