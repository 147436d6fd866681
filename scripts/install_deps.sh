#!/usr/bin/env bash
# Installs what lobench needs and a fresh machine lacks: Debian packages (Eigen, HDF5, fmt, CLI11,
# GoogleTest, Google Benchmark, CMake, Open MPI for the sharded step) and Python packages (numpy, h5py,
# matplotlib, ml_dtypes).
# Idempotent: only what is missing is installed.
set -euo pipefail

apt_packages=(cmake g++ libeigen3-dev libhdf5-dev hdf5-tools libfmt-dev libcli11-dev libgtest-dev libbenchmark-dev
              libopenmpi-dev openmpi-bin)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install_deps: apt-get install ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

py_modules=(numpy h5py matplotlib ml_dtypes)
py_missing=()
for m in "${py_modules[@]}"; do
  python3 -c "import $m" >/dev/null 2>&1 || py_missing+=("$m")
done
if [ ${#py_missing[@]} -gt 0 ]; then
  echo "install_deps: pip install ${py_missing[*]}"
  # A Debian-managed interpreter refuses plain pip installs (PEP 668); fall back to the flag for it.
  python3 -m pip install -q "${py_missing[@]}" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "${py_missing[@]}"
fi
echo "install_deps: all dependencies present"
