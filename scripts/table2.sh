#!/usr/bin/env bash
# Table II of the Cut BCE paper on this CPU, every implementation a variant of one engine, into one run
# file: `python -m lobench run` of the points of harness/sweeps/table2.args measures lobench's dense, chunked
# and fused and the Python variants jax_dense, keras_dense and jax_chunked (lobench/peer_*.py) at the same points, on the
# same inputs, with the same repetition rule and the float64 reference's errors; then torch_dense is added
# to the same file (--resume) by an interpreter that imports torch (Debian's torch serves /usr/bin/python3
# only). A peer whose framework is missing is a skipped row with the reason. Then the table:
# plots/table2_markdown.py OUT.h5.
#
# Usage: scripts/table2.sh OUT.h5 [more `lobench run` options, after the sweep's: --V 100000, --resume, ...]
# Environment: PYTHON (default python3, with JAX and Keras), TORCH_PYTHON (an interpreter that imports
# torch; default $PYTHON if it does, else /usr/bin/python3), LOBENCH_BUILD (the build tree whose
# python/lobench has the engine, default build/).
# Exit status: 2 for a usage error; else the first run's if not 0 (1: failed rows), else the second's.
set -uo pipefail

if [[ $# -lt 1 || "$1" == -* ]]; then
  echo "usage: scripts/table2.sh OUT.h5 [lobench run options]" >&2
  exit 2
fi
out=$1
shift
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${LOBENCH_BUILD:-$root/build}
python=${PYTHON:-python3}
if ! compgen -G "$build/python/lobench/_engine*.so" > /dev/null; then
  echo "table2.sh: $build/python/lobench has no engine (scripts/build.sh lobench _engine, with nanobind installed)" >&2
  exit 2
fi
export PYTHONPATH=$build/python${PYTHONPATH:+:$PYTHONPATH}

torch_python=${TORCH_PYTHON:-}
if [[ -z "$torch_python" ]]; then
  torch_python=$python
  "$python" -c "import torch" > /dev/null 2>&1 || torch_python=/usr/bin/python3
fi

# The sweep's points with every variant this interpreter can run (options after OUT.h5 come later and win).
peers=lobench.peer_jax_dense:JaxDense,lobench.peer_keras_dense:KerasDense,lobench.peer_jax_chunked:JaxChunked
"$python" -m lobench run @"$root/harness/sweeps/table2.args" --variants "dense,chunked,fused,$peers" --out "$out" "$@"
rc=$?
if (( rc == 2 )) || [[ ! -f "$out" ]]; then
  echo "table2.sh: the sweep exited $rc (a usage or input error): torch_dense was not run" >&2
  exit "$rc"
fi
# The same points into the same file: --resume (an --overwrite given for the first run is not repeated).
rest=()
for a in "$@"; do [[ "$a" == --overwrite ]] || rest+=("$a"); done
"$torch_python" -m lobench run @"$root/harness/sweeps/table2.args" --variants lobench.peer_torch_dense:TorchDense \
  --out "$out" "${rest[@]}" --resume
torch_rc=$?
echo "table2.sh: $out (table: $python plots/table2_markdown.py $out)"
(( rc != 0 )) && exit "$rc"
exit "$torch_rc"
