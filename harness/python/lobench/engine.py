"""`python -m lobench run|list` with Python variants: lobench's own engine (the C++ `run` and `list`
commands, compiled into the module lobench._engine) measures Python variants (lobench/python_variants.py)
beside the built-in ones, into one run file.

Python variants are named in `--variants` as `module:Class` or `file.py:Class` (the row then carries the
object's `name`), by `--python-variant SPEC` (repeatable; registered without being run unless `--variants`
names them, e.g. for `list`), or declared by installed packages under the entry-point group
`lobench.variants` (always registered here). The framework peers (lobench/peer_*.py) are also taken by
their short names (`--variants jax_dense`), from the table `lobench list` shows them from
(harness/sweep/python_peers.hpp, read through lobench._engine).
"""
from __future__ import annotations

import sys
from typing import List, Tuple

from . import python_variants as pv
from .python_variants import origin_of, pin_threads, python_peers  # noqa: F401 (engine.python_peers)


def _split_args(args: List[str]) -> Tuple[List[str], List[str]]:
    """(args without --python-variant, the specs it named)."""
    rest, specs, i = [], [], 0
    while i < len(args):
        a = args[i]
        if a == "--python-variant":
            if i + 1 >= len(args) or args[i + 1].startswith("--"):  # the next option is no variant
                raise ValueError("--python-variant needs a value (module:Class or file.py:Class)")
            specs.append(args[i + 1])
            i += 2
            continue
        if a.startswith("--python-variant="):
            specs.append(a.split("=", 1)[1])
        else:
            rest.append(a)
        i += 1
    return rest, specs


def _variants_specs(args: List[str]) -> List[Tuple[int, str, List[str]]]:
    """Each --variants value: (its index in args, the text before the list, the comma-separated entries)."""
    found = []
    for i, a in enumerate(args):
        if a == "--variants" and i + 1 < len(args):
            found.append((i + 1, "", args[i + 1].split(",")))
        elif a.startswith("--variants="):
            found.append((i, "--variants=", a.split("=", 1)[1].split(",")))
    return found


def wants_engine(args: List[str]) -> bool:
    """Whether `python -m lobench ARGS` needs the in-process engine: a run or list naming Python
    variants (a `module:Class` or a peer's short name), or packages declaring some."""
    if not args or args[0] not in ("run", "list"):
        return False
    try:
        rest, specs = _split_args(args)
    except ValueError:
        return True  # `--python-variant` without a value: the engine path says so (exit 2)
    entries = [v for _, _, vs in _variants_specs(rest) for v in vs]
    if specs or any(pv.is_spec(v) for v in entries):
        return True
    if entries and set(entries) & set(python_peers()):
        return True
    try:
        return bool(pv.entry_point_variants())
    except ValueError:
        return True  # a broken entry point: the engine path reports it


def main(args: List[str]) -> int:
    try:
        from . import _engine
    except ImportError as e:
        print("lobench: Python variants need lobench._engine, built with the C++ tree "
              "(cmake -DLOBENCH_PYTHON_PACKAGE=ON, then PYTHONPATH=BUILD/python); the wheel has no engine "
              f"({e})", file=sys.stderr)
        return 2
    try:
        rest, specs = _split_args(_engine.expand_args(["lobench"] + list(args))[1:])
        pin_threads(rest)
        loaded = {}  # spec -> object: a spec named twice is one variant

        def load(spec):
            if spec not in loaded:
                loaded[spec] = pv.load_spec(spec)
            return loaded[spec]

        objects = [(obj, f"entry point {type(obj).__module__}") for obj in pv.entry_point_variants()]
        for spec in specs:
            load(spec)
        # a peer's short name loads the peer, unless an installed package's variant took that name
        peers = {name: spec for name, spec in python_peers().items() if name not in {o.name for o, _ in objects}}

        def resolve(entry):
            if pv.is_spec(entry):
                return load(entry).name
            if entry in peers:
                load(peers[entry])
            return entry

        for index, prefix, entries in _variants_specs(rest):
            rest[index] = prefix + ",".join(resolve(v) for v in entries)
        objects += [(obj, spec) for spec, obj in loaded.items()]
        for obj, where in objects:
            _engine.register_python_variant(obj, origin_of(obj, where))
    except ValueError as e:
        print(f"lobench: {e}", file=sys.stderr)
        return 2
    # `run --isolate` (by default for Python variants) measures each row in a fresh `python -m lobench`
    # with these arguments, which loads the same variants (harness/sweep/isolated_row.hpp).
    return _engine.main(["lobench"] + rest, [sys.executable, "-m", "lobench"] + list(args))
