#!/usr/bin/env bash
# Installs the Debian packages taskhop needs to build, test and benchmark.
# Idempotent: when every package is present it only runs dpkg-query and returns.
set -euo pipefail

PKGS=(
  build-essential clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev
  libcmocka-dev systemtap-sdt-dev libhwloc-dev pkg-config libjson-c-dev
  openmpi-bin libopenmpi-dev gnuplot-nox
  golang-go libboost-fiber-dev libboost-context-dev
  linux-libc-dev util-linux python3
  libclang-rt-dev  # clang's libFuzzer runtime, for make fuzz
)
# With arguments, those packages instead (the extras of make container-test and test-arm64).
[ $# -gt 0 ] && PKGS=("$@")

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "make deps: missing packages: ${missing[*]}; run 'sudo make deps' or install them with apt-get" >&2
  exit 1
fi
echo "make deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# apt-get update only when the package lists are absent or the install fails on them.
if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
