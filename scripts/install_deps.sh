#!/usr/bin/env bash
# Installs what lobench needs and a fresh Debian 12 machine lacks (root or sudo).
#
#   scripts/install_deps.sh              everything: the build, the tests, the peers (what CI installs)
#   scripts/install_deps.sh --main-job   only what the quick start's main job needs: the compiler and
#                                        C++ libraries of `lobench`, and the Python packages of its figure
#
# Debian packages: Eigen, HDF5, fmt, CLI11, GoogleTest, Google Benchmark, CMake, OpenBLAS; for the tests
# also HDF5's tools, Open MPI (the sharded step), Slurm and munge (the docs' cluster scripts) and Debian's
# PyTorch. Python packages: exactly the versions of requirements.lock (scripts/check_env.py says what
# differs). Idempotent: only what is missing is installed, so a second run takes a second.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=all
case "${1:-}" in
  "") ;;
  --main-job) mode=main ;;
  -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "install_deps: unknown option '$1' (use --main-job or nothing; --help)" >&2; exit 2 ;;
esac

sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
apt_updated=0
# Installs the Debian packages of "$@" that are missing; extra apt-get flags come first, ending with --.
apt_install() {
  local flags=()
  while [ "$1" != "--" ]; do flags+=("$1"); shift; done
  shift
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -gt 0 ] || return 0
  echo "install_deps: apt-get install ${missing[*]}"
  if [ $apt_updated -eq 0 ]; then $sudo_cmd apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${flags[@]}" "${missing[@]}" >/dev/null
}

# The build. GoogleTest and Google Benchmark are here too: the quick start configures the same build
# tree as the tests (so that the test command recompiles nothing), and that configure looks for them.
# libopenblas0-pthread: the CPU variants' products and the SGEMM yardstick (loaded at run time,
# variants/cpu/openblas.hpp; without it lobench runs on Eigen's products, 1.3-1.7x slower).
# libdnnl-dev: oneDNN, one more product in the yardsticks (fp32 and bf16; AMX where the CPU has it), a path
# of the products choice and LOBENCH_GEMM=onednn (variants/cpu/onednn.hpp; without it the yardsticks say it
# was left out); ocl-icd-opencl-dev, which Debian's oneDNN package config requires (only recommended).
apt_install -- cmake g++ libeigen3-dev libhdf5-dev libfmt-dev libcli11-dev libgtest-dev libbenchmark-dev \
               libopenblas0-pthread libdnnl-dev ocl-icd-opencl-dev python3-venv

if [ "$mode" = all ]; then
  # h5dump for the command-line tests; Open MPI for the sharded step (harness/shard, built when found).
  apt_install -- hdf5-tools libopenmpi-dev openmpi-bin
  # A one-node Slurm for the test of the docs' cluster scripts (ctest slurm_docs starts its own munged,
  # slurmctld and slurmd with a temporary configuration; the system services are not used). Six packages,
  # 8 s to install.
  apt_install --no-install-recommends -- slurmctld slurmd slurm-client munge
  # A real headless browser for the benchmark dashboard's test (plots/tests: the site renders its charts
  # and regression markers with a console free of errors).
  apt_install --no-install-recommends -- chromium
  # PyTorch for the lobench.torch tests and the torch peer: Debian's python3-torch, for Debian's
  # /usr/bin/python3 (PyPI's torch wheels pull in gigabytes of CUDA libraries). Debian's torch calls
  # libblas.so.3, the unoptimised reference BLAS unless OpenBLAS (installed above) provides it (its
  # dense matmuls were 6x slower that way: an unfair peer). h5py and pandas let the torch peer write
  # its rows into a run file.
  apt_install --no-install-recommends -- python3-torch python3-numpy python3-pytest python3-h5py python3-pandas
fi

# python3's packages, at exactly the versions of requirements.lock (the environment the tests pass with
# and every peer row is measured in). nanobind and scikit-build-core build the Python package
# (harness/python); pytest, jax and ml_dtypes run its tests and the format oracle; keras (3, on the JAX
# backend) is the Cut BCE paper's baseline peer; h5py, pandas and matplotlib read run files and draw the
# figures (all the main job needs); plotly's plotly.min.js is vendored into the benchmark dashboard.
# pip is called only when something differs.
pip_install() {
  # A Debian-managed interpreter refuses plain pip installs (PEP 668); fall back to the flag for it.
  python3 -m pip install -q "$@" 2>/dev/null || python3 -m pip install -q --break-system-packages "$@"
}
if [ "$mode" = main ]; then
  if ! python3 -c "import numpy, h5py, pandas, matplotlib" >/dev/null 2>&1; then
    echo "install_deps: pip install numpy h5py pandas matplotlib (pinned by requirements.lock)"
    pip_install -c requirements.lock numpy h5py pandas matplotlib
  fi
  echo "install_deps: the main job's dependencies are present (scripts/install_deps.sh without options adds the tests')"
  exit 0
fi
if ! python3 scripts/check_env.py >/dev/null 2>&1; then
  echo "install_deps: pip install -r requirements.lock"
  pip_install -r requirements.lock
fi
python3 scripts/check_env.py
echo "install_deps: all dependencies present"
