#!/usr/bin/env bash
# Proves on a machine that has the C++ development packages installed that .gpu_deps/ alone suffices:
# runs harness/gpu/check.sh OUT_DIR with LOBENCH_DEPS=private in a private mount namespace in which
# every file of the carried packages that the system also has is hidden behind an empty file (so a
# header or library picked from the system instead of the private prefix breaks the build). Root only;
# nothing outside the namespace changes. The build directory is made afresh (LOBENCH_GPU_FRESH=1), so
# no object built against the system's headers is reused. Exit status: check.sh's (3 without a GPU).
#
#   bash harness/gpu/fetch_deps.sh
#   LOBENCH_JOBS=2 LOBENCH_GPU_BUDGET_S=3600 bash harness/gpu/test_fetched_deps.sh /tmp/check_out
set -euo pipefail

out="${1:?usage: bash harness/gpu/test_fetched_deps.sh OUT_DIR}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
[[ $(id -u) == 0 ]] || { echo "needs root (mount namespaces)" >&2; exit 2; }
ls "$root"/.gpu_deps/*.deb > /dev/null 2>&1 || { echo "run harness/gpu/fetch_deps.sh first" >&2; exit 2; }

hide_list=$(mktemp)
empty=$(mktemp)
trap 'rm -f "$hide_list" "$empty"' EXIT
for deb in "$root"/.gpu_deps/*.deb; do
  dpkg-deb --fsys-tarfile "$deb" | tar -t | sed 's#^\./#/#' | grep -v '/$' | grep -v '^/usr/share/doc/'
done | sort -u | while read -r f; do
  if [[ -e "$f" && -f "$(readlink -f "$f")" ]]; then readlink -f "$f"; fi
done | sort -u > "$hide_list"
echo "hiding $(wc -l < "$hide_list") system files of the carried packages"

unshare -m --propagation private bash -c '
  set -e
  while read -r f; do mount --bind "$2" "$f"; done < "$1"
  echo "e.g. $(head -n 1 "$1"): $(wc -c < "$(head -n 1 "$1")") bytes in here"
  cd "$3"
  LOBENCH_DEPS=private LOBENCH_GPU_FRESH=1 exec bash harness/gpu/check.sh "$4"
' hide "$hide_list" "$empty" "$root" "$out"
