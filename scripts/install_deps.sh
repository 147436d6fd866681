#!/usr/bin/env bash
# Installs what lobench needs and a fresh machine lacks: Debian packages (Eigen, HDF5, fmt, CLI11,
# GoogleTest, Google Benchmark, CMake, Debian's PyTorch, Open MPI for the sharded step) and Python packages
# (requirements.lock: numpy, h5py, matplotlib, ml_dtypes, nanobind, scikit-build-core, pytest, jax, keras,
# pandas and what they pull in, each at its pinned version).
# Idempotent: only what is missing is installed.
set -euo pipefail

# libopenblas0-pthread: the CPU variants' products and the SGEMM yardstick (loaded at run time,
# variants/cpu/openblas.hpp; without it lobench runs on Eigen's products, 1.3-1.7x slower).
apt_packages=(cmake g++ libeigen3-dev libhdf5-dev hdf5-tools libfmt-dev libcli11-dev libgtest-dev libbenchmark-dev
              libopenmpi-dev openmpi-bin libopenblas0-pthread)
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

# PyTorch for the lobench.torch tests and examples: Debian's python3-torch, for Debian's /usr/bin/python3
# (PyPI's torch wheels pull in gigabytes of CUDA libraries). The package serves both interpreters.
# Debian's torch calls libblas.so.3, the unoptimised reference BLAS unless OpenBLAS (installed above)
# provides it (its dense matmuls were 6x slower that way: an unfair peer). h5py and pandas let the torch peer
# (harness/peers/torch_dense_bce.py, run by /usr/bin/python3) write its rows into a run file.
torch_packages=(python3-torch python3-numpy python3-pytest python3-h5py python3-pandas)
torch_missing=()
for p in "${torch_packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || torch_missing+=("$p")
done
if [ ${#torch_missing[@]} -gt 0 ]; then
  echo "install_deps: apt-get install --no-install-recommends ${torch_missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  [ ${#missing[@]} -gt 0 ] || $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${torch_missing[@]}" >/dev/null
fi

# python3's packages: exactly the versions of requirements.lock (the environment the tests pass with and
# every peer row is measured in; scripts/check_env.py says what differs). nanobind and scikit-build-core
# build the Python package (harness/python); pytest, jax and ml_dtypes run its tests and the format oracle;
# keras (3, on the JAX backend) is the Cut BCE paper's baseline peer; h5py, pandas and matplotlib read run
# files and draw the figures. Only when something differs is pip called, so a second run is quick.
if ! python3 scripts/check_env.py >/dev/null 2>&1; then
  echo "install_deps: pip install -r requirements.lock"
  # A Debian-managed interpreter refuses plain pip installs (PEP 668); fall back to the flag for it.
  python3 -m pip install -q -r requirements.lock 2>/dev/null ||
    python3 -m pip install -q --break-system-packages -r requirements.lock
fi
python3 scripts/check_env.py
echo "install_deps: all dependencies present"
