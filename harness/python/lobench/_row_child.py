"""The process of one isolated row of a lobench.run() sweep (lobench/sweep_api.py): started by the engine
(harness/sweep/isolated_row.hpp) as `python -c BOOT PAYLOAD ARGS...`, it registers the Python variants of the
parent's call again (PAYLOAD: the parent's sys.path and each variant as its spec or pickled object), then runs
the parent's `lobench run ARGS`, which, seeing the row request in its environment, measures that one row and
sends it back through the pipe, as `python -m lobench run` does for the command line (lobench/engine.py)."""
from __future__ import annotations

import pickle
import sys


def main() -> None:
    payload_path, args = sys.argv[1], sys.argv[2:]
    with open(payload_path, "rb") as f:
        payload = pickle.load(f)
    sys.path[:] = payload["sys_path"]  # the parent's modules: what its pickled objects refer to

    from . import _engine
    from . import python_variants as pv
    pv.pin_threads(args)  # before a variant's module imports its framework, as `python -m lobench` does
    try:
        for obj in pv.entry_point_variants():
            _engine.register_python_variant(obj, f"entry point {type(obj).__module__}")
        for kind, value, origin in payload["variants"]:
            _engine.register_python_variant(pv.load_spec(value) if kind == "spec" else pickle.loads(value), origin)
    except Exception as e:  # the row fails with this printed above the engine's "exited with status 2"
        print(f"lobench.run: the row's process could not register the call's variants: {type(e).__name__}: {e}",
              file=sys.stderr)
        sys.exit(2)
    sys.exit(_engine.main(["lobench"] + args, []))


if __name__ == "__main__":
    main()
