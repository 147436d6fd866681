#!/usr/bin/env bash
# Downloads (never installs) the Debian 12 packages lobench needs to build into .gpu_deps/ at the
# repository root, so that harness/gpu/check.sh can build on a GPU machine that has no network and no
# C++ development packages: it unpacks them there with `dpkg -x` into a private prefix.
#
#   bash harness/gpu/fetch_deps.sh        # on a Debian 12 machine with apt (this project's machines)
#
# .gpu_deps/ is ignored by git, so it travels to the GPU machine only when the run names it in carry:
#   run(command="bash harness/gpu/check.sh $OUT", carry=[".gpu_deps"], timeout_s=540)
#
# .gpu_deps/      Eigen, HDF5 (C and HL, serial) with its runtime libraries, fmt, CLI11, GoogleTest and
#                 GoogleMock, Google Benchmark: what CMakeLists.txt finds.
# .gpu_deps/fallback/
#                 the run-time libraries Debian's libhdf5 links besides libc and zlib (libcurl, OpenSSL
#                 and theirs), unpacked by check.sh only when the machine lacks one of them.
# The packages are Debian 12's (glibc ≥ 2.34 and GCC 12's libstdc++ at most: Ubuntu 22.04 or newer).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dest="$root/.gpu_deps"
budget_mib=40

main_pkgs=(
  libeigen3-dev
  libhdf5-dev libhdf5-103-1 libhdf5-hl-100 libsz2 libaec0
  libfmt-dev libfmt9
  libcli11-dev
  libgtest-dev libgmock-dev
  libbenchmark-dev libbenchmark1debian
)
# What libhdf5 and libcurl need, less what every glibc system has.
fallback_roots=(libcurl4 libssl3)
base_pkgs=" libc6 libgcc-s1 gcc-12-base libstdc++6 zlib1g "

if ! command -v apt-get > /dev/null; then
  echo "fetch_deps.sh: needs apt-get (a Debian 12 machine)" >&2
  exit 2
fi
if [[ -r /etc/os-release ]] && ! grep -q 'VERSION_CODENAME=bookworm' /etc/os-release; then
  echo "fetch_deps.sh: warning: not Debian 12 (bookworm); the packages will be this release's" >&2
fi

apt-get update -qq

fallback_pkgs=()
while read -r p; do
  [[ -z "$p" || "$base_pkgs" == *" $p "* ]] && continue
  fallback_pkgs+=("$p")
done < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
           --no-enhances "${fallback_roots[@]}" | grep -v '^[ <]' | sort -u)

rm -rf "$dest"
mkdir -p "$dest/fallback"
(cd "$dest" && apt-get download -q "${main_pkgs[@]}")
(cd "$dest/fallback" && apt-get download -q "${fallback_pkgs[@]}")

{
  echo "# Debian packages for harness/gpu/check.sh, fetched $(date -u +%Y-%m-%dT%H:%M:%SZ) by harness/gpu/fetch_deps.sh"
  (cd "$dest" && ls -1 ./*.deb fallback/*.deb)
} > "$dest/MANIFEST"

size_kib=$(du -sk "$dest" | cut -f1)
echo "fetch_deps.sh: ${#main_pkgs[@]} packages + ${#fallback_pkgs[@]} fallback run-time packages in $dest ($((size_kib / 1024)) MiB)"
if (( size_kib > budget_mib * 1024 )); then
  echo "fetch_deps.sh: over the ${budget_mib} MiB budget for carrying to the GPU machine" >&2
  exit 1
fi
