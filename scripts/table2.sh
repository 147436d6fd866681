#!/usr/bin/env bash
# Table II of the Cut BCE paper on this CPU, every implementation in one run file: lobench's sweep
# (harness/sweeps/table2.args: dense, chunked, fused), then every peer at the same points, threads, seed and
# repetition rule (harness/peers/sweep_peer_args.py reads them from the file): JAX's dense BCE, Keras 3's
# binary_crossentropy on JAX, our chunked JAX (Cut BCE's algorithm) and PyTorch's dense BCE. A peer whose
# framework is not installed is skipped with a note. Then the table: plots/table2_markdown.py OUT.h5.
#
# Usage: scripts/table2.sh OUT.h5 [more `lobench run` options, after the sweep's: --V 100000, --resume, ...]
# Environment: LOBENCH (the binary, default build/lobench), PYTHON (default python3), TORCH_PYTHON (an
# interpreter that imports torch; default python3 if it does, else /usr/bin/python3, Debian's torch).
# With --resume the peers leave out the points they already have (--skip-existing).
# Exit status: lobench's (2 usage, 1 failed rows) if not 0, else 1 if a peer failed, else 0.
set -uo pipefail

if [[ $# -lt 1 || "$1" == -* ]]; then
  echo "usage: scripts/table2.sh OUT.h5 [lobench run options]" >&2
  exit 2
fi
out=$1
shift
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lobench=${LOBENCH:-$root/build/lobench}
python=${PYTHON:-python3}
if [[ ! -x "$lobench" ]]; then
  echo "table2.sh: $lobench is not built (cmake --build build --target lobench)" >&2
  exit 2
fi

"$lobench" run @"$root/harness/sweeps/table2.args" --out "$out" "$@"
rc=$?
if [[ ! -f "$out" ]] || (( rc == 2 )); then
  echo "table2.sh: lobench run exited $rc (a usage or input error): the peers were not run" >&2
  exit "$rc"
fi

peer_opts=()
for a in "$@"; do
  [[ "$a" == "--resume" ]] && peer_opts+=(--skip-existing)
done
if ! lines=$("$python" "$root/harness/peers/sweep_peer_args.py" "$out"); then
  echo "table2.sh: cannot read the sweep from $out" >&2
  exit 2
fi

torch_python=${TORCH_PYTHON:-}
if [[ -z "$torch_python" ]]; then
  for candidate in "$python" /usr/bin/python3; do
    if "$candidate" -c "import torch, h5py, pandas" > /dev/null 2>&1; then
      torch_python=$candidate
      break
    fi
  done
fi

peer_rc=0
# peer script : the module its interpreter must import : that interpreter
for entry in "jax_dense:jax:$python" "keras_dense:keras:$python" "jax_chunked:jax:$python" "torch_dense:torch:$torch_python"; do
  IFS=: read -r peer module interpreter <<< "$entry"
  check="import $module"
  [[ "$module" == keras ]] && check="import os; os.environ['KERAS_BACKEND'] = 'jax'; import jax, keras"
  if [[ -z "$interpreter" ]] || ! "$interpreter" -c "$check" > /dev/null 2>&1; then
    echo "table2.sh: $peer skipped: $module is not installed for ${interpreter:-any interpreter} (scripts/install_deps.sh)"
    continue
  fi
  while read -r line; do
    [[ -n "$line" ]] || continue
    # shellcheck disable=SC2086  # the line is the peers' own option list
    "$interpreter" "$root/harness/peers/${peer}_bce.py" "$out" $line "${peer_opts[@]}" || peer_rc=1
  done <<< "$lines"
done

echo "table2.sh: $out (table: $python plots/table2_markdown.py $out)"
(( rc != 0 )) && exit "$rc"
exit "$peer_rc"
