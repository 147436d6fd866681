#!/usr/bin/env bash
# What a Python user does, as CI does it: lobench's wheel installed from this checkout into a fresh
# virtual environment, then, from outside the source tree, `import lobench` and one step checked against a
# float64 evaluation of the contract in NumPy. The environment is removed afterwards.
# The wheel is the one scripts/test.sh made from its build tree (scripts/wheel.sh: build/wheels/, when made
# from the commit checked out), so CI compiles lobench once; without it, `pip wheel -v .` builds one the
# way `pip install .` does (in isolation, with the pinned build requirements: tests off, no CUDA), its
# progress shown.
#   scripts/pip_install_check.sh [PYTHON]     (default python3)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-python3}
src=$PWD
venv=$(mktemp -d "${TMPDIR:-/tmp}/lobench-venv.XXXXXX")
trap 'rm -rf "$venv"' EXIT
start=$SECONDS
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip >/dev/null
head=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo none)
wheel=""
if [ "$(cat "$src/build/wheels/COMMIT" 2>/dev/null)" = "$head" ]; then
  wheel=$(compgen -G "$src/build/wheels/lobench-*.whl" | head -1) || true
fi
if [ -n "$wheel" ]; then
  echo "pip_install_check: installing $wheel (scripts/wheel.sh made it from build/ at this commit: nothing compiles)"
else
  echo "pip_install_check: building the wheel (pip wheel -v .; a few minutes on 2 cores)"
  # the build's progress lines only; on a failure, the log's tail below
  "$venv/bin/python" -m pip wheel -v --no-deps "$src" -w "$venv/wheels" 2>&1 \
    | tee "$venv/wheel.log" | { grep --line-buffered -E '^ *\[ *[0-9]+(/[0-9]+\]|%\])' || true; } || true
  wheel=$(compgen -G "$venv/wheels/lobench-*.whl" | head -1) || true
  [ -n "$wheel" ] || { tail -40 "$venv/wheel.log"; echo "pip_install_check: pip wheel made no wheel" >&2; exit 1; }
fi
"$venv/bin/python" -m pip install -q "$wheel"
cd "$venv"   # not the checkout: the installed package must be the one imported
"$venv/bin/python" - <<'PY'
import numpy as np
import lobench

rng = np.random.default_rng(0)
P, V, D, L = 37, 301, 24, 3
A = rng.standard_normal((P, D), dtype=np.float32)
E = rng.standard_normal((V, D), dtype=np.float32)
T = rng.integers(-1, V + 1, size=(P, L)).astype(np.int32)   # -1 and V are padding
out = lobench.bce(A, E, T)
# float64 contract: mean over V and positions, targets counted once, padding ignored
x = A.astype(np.float64) @ E.astype(np.float64).T
y = np.zeros_like(x)
for p in range(P):
    ids = T[p][(T[p] >= 0) & (T[p] < V)]
    y[p, ids] = 1.0
loss = (np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x))) - y * x).mean()
rel = abs(out.loss - loss) / abs(loss)
assert rel < 1e-6, f"loss {out.loss} vs float64 {loss}: relative error {rel:.2e}"
import importlib.metadata, pathlib
assert importlib.metadata.version("lobench") == lobench.__version__, "wheel metadata and lobench.__version__ differ"
assert (pathlib.Path(lobench.__file__).parent / "py.typed").is_file(), "py.typed is not in the wheel"
print(f"pip_install_check: lobench {lobench.__version__} from {lobench.__file__}; "
      f"variants {lobench.variants()}; loss relative error {rel:.1e}")
PY
version=$("$venv/bin/lobench" --version)   # the Python entry point's, then the wheel's program's
echo "$version"
grep -q "built from commit" <<<"$version" && grep -q "^build: " <<<"$version" \
  || { echo "pip_install_check: lobench --version lacks the program's commit and build flags" >&2; exit 1; }
# The wheel carries the C++ program and the engine: the installed `lobench` command runs a C++ command,
# and a run with a Python variant of the user's (a copy of the example, outside the checkout) writes one
# run file with both rows, each checked against the float64 reference.
cli=$("$venv/bin/python" -c 'import lobench.__main__ as m; print(m.find_cli() or "")')
[ "$cli" = "$("$venv/bin/python" -c 'import lobench, os; print(os.path.join(os.path.dirname(lobench.__file__), "bin", "lobench"))')" ] \
  || { echo "pip_install_check: the installed lobench command does not find the wheel's program (found '$cli')" >&2; exit 1; }
"$venv/bin/lobench" list >/dev/null
cp "$src/examples/python/numpy_dense.py" "$venv/my_variant.py"
log=$("$venv/bin/lobench" run --variants fused,my_variant.py:NumpyDense --B 1 --N 8 --V 500 --D 16 --reps 2 \
      --warmup 0 --out "$venv/run.h5" 2>&1) || { echo "$log"; echo "pip_install_check: the wheel's lobench run failed" >&2; exit 1; }
grep -Eq '^fused .* ok ' <<<"$log" && grep -Eq '^numpy_dense .* ok ' <<<"$log" && grep -q 'summary: 2 ok, 0 skipped, 0 failed' <<<"$log" \
  || { echo "$log"; echo "pip_install_check: expected rows fused and numpy_dense, both ok" >&2; exit 1; }
[ -s "$venv/run.h5" ] || { echo "pip_install_check: no run file" >&2; exit 1; }
echo "pip_install_check: the wheel's lobench ran fused and a Python variant into one run file"
# The notebook API in the same environment: the `results` extra from the same wheel (Python packages only,
# nothing compiles), then lobench.run(...) and the command on the same points give the same rows (times
# apart), as harness/python/tests/test_sweep_api.py checks on the build tree.
"$venv/bin/python" -m pip install -q "lobench[results] @ file://$wheel"
LOBENCH_PRODUCTS=library "$venv/bin/lobench" run --variants fused,chunked --B 1 --N 8 --V 300,517 --D 16 --reps 2 \
  --warmup 0 --seed 3 --threads 1 --out "$venv/cmd.h5" > /dev/null 2>&1 || { echo "pip_install_check: the command's run failed" >&2; exit 1; }
LOBENCH_PRODUCTS=library "$venv/bin/python" - "$venv/cmd.h5" <<'PY'
import sys
import lobench
from lobench import results

df = lobench.run(["fused", "chunked"], B=1, N=8, V=[300, 517], D=16, reps=2, warmup=0, seed=3, threads=1)
ref = results.read(sys.argv[1])
same = ["variant", "V", "D", "status", "reps", "loss", "ref_loss", "rel_loss_err", "rel_dA_err", "rel_dE_err",
        "peak_bytes", "predicted_bytes", "flops"]
assert len(df) == len(ref) == 4, (len(df), len(ref))
assert df[same].equals(ref[same]), (df[same], ref[same])
print(f"pip_install_check: lobench.run gives the command's {len(df)} rows ({', '.join(same)} equal)")
PY
echo "pip_install_check: ok ($((SECONDS - start)) s)"
