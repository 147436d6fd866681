"""Python variants: an implementation of the BCE step written in Python (NumPy, JAX, PyTorch, a Triton
kernel behind a Python call) measured by lobench's own engine beside the C++ variants, on the same
inputs, with the same timing rule and the same float64 reference (docs/plugins.md).

A Python variant is any object with these attributes (subclassing `Variant` is optional):

    name: str                                   # the row's variant name; must not be a built-in's
    description: str                            # optional, one line for `lobench list`
    skip_reason(shape, options) -> str | None   # optional: why this point cannot run (without it: fp32
                                                #   operands only; with it, the operand is its to check)
    predicted_bytes(shape, options) -> int      # optional: peak working bytes it will allocate
    prepare(A, E, targets, weights, reduction, options) -> step
    self_timed: bool                            # optional: step() returns (seconds, outputs), its own time
                                                #   of the step (e.g. CUDA events); the row's timing_source
    measured_peak_bytes() -> int | None         # optional, called after the last step: the framework's own
                                                #   peak of the steps' working bytes (the row's memory_meter
                                                #   `framework_counter`); else the process's RSS growth

`shape` and `options` are dicts: shape {"B", "N", "P", "V", "D", "L", "reduction", "weighted"},
options {"threads", "block_v", "block_p", "e_format", "operand"}. `prepare` gets the engine's inputs
as read-only NumPy arrays that it must not keep beyond its step: A [P, D] float32, E [V, D] float32,
targets [P, L] int32 (ids outside [0, V) are padding, repeats count once), weights [P] float32 or None,
reduction "mean" or "sum". It may convert them (to a device, another framework) untimed. `step()` is then
called repeatedly and timed by the engine's clock; it returns (loss, dA, dE) or (loss, dA, dE, counts)
with dA [P, D], dE [V, D] and counts [P, 4] (TP, FP, FN, TN at logit > 0) as anything np.asarray reads
(finish any asynchronous work, e.g. jax's block_until_ready, before returning).

A variant is named `module:Class` or `path/to/file.py:Class` (`python -m lobench run --variants
fused,my_variants:NumpyDense`), or registered by a package under the entry-point group
"lobench.variants" (`name = "package.module:Class"`), which `python -m lobench` loads every time.

Also here, for both ways of running them (`python -m lobench run`, lobench/engine.py, and lobench.run(),
lobench/sweep_api.py): the framework peers' short names (python_peers), what a variant's rows record as
their origin (origin_of), and the pinning of a measuring process to its --threads CPUs (pin_threads).
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any, Callable, Dict, List, Optional

ENTRY_POINT_GROUP = "lobench.variants"


class Variant:
    """Optional base class: the defaults of the protocol's optional parts."""

    name = ""
    description = "a Python variant"

    def skip_reason(self, shape: Dict[str, Any], options: Dict[str, Any]) -> Optional[str]:
        if options["operand"] != "fp32":  # a variant that computes in bf16 or tf32 says so by overriding this
            return f"computes in fp32 only (operand {options['operand']} not supported)"
        return None

    def predicted_bytes(self, shape: Dict[str, Any], options: Dict[str, Any]) -> int:
        return 0

    def prepare(self, A, E, targets, weights, reduction: str, options: Dict[str, Any]) -> Callable[[], tuple]:
        raise NotImplementedError


def is_spec(text: str) -> bool:
    """`module:Class` or `file.py:Class` (a built-in variant's name has no colon)."""
    return ":" in text and not text.startswith(("cpu/", "cuda/"))


def _import_module(where: str):
    if where.endswith(".py") or os.sep in where:
        path = os.path.abspath(where)
        if not os.path.isfile(path):
            raise ValueError(f"{where}: no such file")
        name = "lobench_user_" + os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # a module file beside the user, as `python -m` finds it
    return importlib.import_module(where)


def load_spec(spec: str):
    """The variant object that `module:Class` (or `file.py:Class`) names: the class instantiated with no
    arguments, or the object itself if it is not a class. ValueError saying what is wrong otherwise."""
    where, _, attr = spec.rpartition(":")
    if not where or not attr:
        raise ValueError(f"{spec}: a Python variant is named module:Class or file.py:Class")
    try:
        module = _import_module(where)
    except ValueError:
        raise
    except Exception as e:  # ImportError, or the module raised while importing
        raise ValueError(f"{spec}: cannot import {where}: {type(e).__name__}: {e}") from e
    target = getattr(module, attr, None)
    if target is None:
        raise ValueError(f"{spec}: {where} has no attribute {attr}")
    obj = _instantiate(target, spec)
    check_protocol(obj, spec)
    return obj


def _instantiate(target, where: str):
    """The class instantiated with no arguments (or the object itself); what its __init__ raises becomes a
    ValueError naming it (a usage error, exit 2), not a traceback."""
    if not isinstance(target, type):
        return target
    try:
        return target()
    except Exception as e:
        raise ValueError(f"{where}: {target.__name__}() raised {type(e).__name__}: {e}") from e


def _attribute(obj, attr: str, where: str):
    """obj.attr, or None when it has none; what a property raising raises becomes a ValueError naming it."""
    try:
        return getattr(obj, attr, None)
    except Exception as e:
        raise ValueError(f"{where}: reading its `{attr}` raised {type(e).__name__}: {e}") from e


def check_protocol(obj, where: str) -> None:
    name = _attribute(obj, "name", where)
    if not isinstance(name, str) or not name or ":" in name or "/" in name or "," in name:
        raise ValueError(f"{where}: its `name` must be a non-empty string without ':', '/' or ',' (got {name!r})")
    description = _attribute(obj, "description", where)
    if description is not None and not isinstance(description, str):
        raise ValueError(f"{where}: its `description` must be a string (got {type(description).__name__})")
    if not callable(getattr(obj, "prepare", None)):
        raise ValueError(f"{where}: it has no prepare(A, E, targets, weights, reduction, options) method")


def entry_point_variants() -> List[Any]:
    """The variants installed packages declare under the entry-point group `lobench.variants`."""
    from importlib.metadata import entry_points

    try:
        eps = entry_points(group=ENTRY_POINT_GROUP)
    except TypeError:  # Python < 3.10
        eps = entry_points().get(ENTRY_POINT_GROUP, [])
    found = []
    for ep in eps:
        try:
            target = ep.load()
        except Exception as e:
            raise ValueError(f"entry point {ep.name} = {ep.value} ({ENTRY_POINT_GROUP}): {type(e).__name__}: {e}") from e
        obj = _instantiate(target, f"entry point {ep.name} = {ep.value}")
        check_protocol(obj, f"entry point {ep.name} = {ep.value}")
        found.append(obj)
    return found


def checked_outputs(result, P: int, V: int, D: int):
    """A step's result as the engine takes it: (loss as a float, dA float32 [P, D], dE float32 [V, D],
    counts int64 [P, 4] or None), or ValueError saying what is wrong: a loss that is not one real number
    (a str, a bool, a complex, an array of several), arrays of another shape or of a non-real dtype
    (complex, bool, object), counts that are not whole numbers. Nothing is converted silently (a complex
    dA would lose its imaginary part, a fractional count its fraction)."""
    import numpy as np

    if not isinstance(result, (tuple, list)):
        raise ValueError("its step must return (loss, dA, dE) or (loss, dA, dE, counts), "
                         f"got {type(result).__name__}")
    if len(result) not in (3, 4):
        raise ValueError(f"its step returned {len(result)} values; expected (loss, dA, dE[, counts])")
    counts = _whole_array(result[3], "counts", (P, 4)) if len(result) == 4 else None
    return (_real_loss(result[0]), _real_array(result[1], "dA", (P, D)), _real_array(result[2], "dE", (V, D)), counts)


def _real_loss(value) -> float:
    import numpy as np

    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise ValueError(f"its step returned a loss of type {type(value).__name__} ({value!r}); expected a real number")
    a = np.asarray(value)
    if a.dtype.kind not in "fiu" or a.size != 1:
        raise ValueError(f"its step returned a loss of dtype {a.dtype} and shape {a.shape}; expected one real number")
    return float(a.reshape(()))


def _array_of(value, what: str, shape):
    import numpy as np

    a = np.asarray(value)
    if a.shape != tuple(shape):
        raise ValueError(f"its step returned {what} of shape {a.shape}, expected {tuple(shape)}")
    return a


def _real_array(value, what: str, shape):
    import numpy as np

    a = _array_of(value, what, shape)
    if a.dtype.kind not in "fiu":
        raise ValueError(f"its step returned {what} of dtype {a.dtype}; expected real numbers (float32)")
    return np.ascontiguousarray(a, dtype=np.float32)


def _whole_array(value, what: str, shape):
    import numpy as np

    a = _array_of(value, what, shape)
    if a.dtype.kind == "f":
        if not np.all(np.isfinite(a)) or not np.all(a == np.round(a)):
            raise ValueError(f"its step returned {what} that are not whole numbers (dtype {a.dtype})")
    elif a.dtype.kind not in "iu":
        raise ValueError(f"its step returned {what} of dtype {a.dtype}; expected integers")
    return np.ascontiguousarray(a, dtype=np.int64)


def python_peers() -> Dict[str, str]:
    """The framework peers' short names and the `module:Class` each names (harness/sweep/python_peers.hpp,
    through lobench._engine); empty without the engine, which alone can run them."""
    try:
        from . import _engine
    except ImportError:
        return {}
    return {name: spec for name, spec, _ in _engine.python_peers()}


def _threads_asked(args: List[str]) -> List[int]:
    """The --threads values of a command line (empty when none or not numbers: the engine reports those)."""
    values = []
    for i, a in enumerate(args):
        text = args[i + 1] if a == "--threads" and i + 1 < len(args) else a.split("=", 1)[1] if a.startswith("--threads=") else None
        if text is not None:
            try:
                values += [int(v) for v in text.split(",")]
            except ValueError:
                return []
    return values


def pin_threads(args: List[str]) -> Optional[List[int]]:
    """Binds the process to its first max(--threads) allowed CPUs and sets the usual thread variables where
    unset, before any variant module is imported: XLA, OpenMP, OpenBLAS and PyTorch size their pools from the
    CPUs the process may use (lobench/_peer_common.py). Returns the CPUs bound, or None when it did not bind
    (no --threads: the engine's default is every CPU; not Linux; more threads asked than CPUs allowed)."""
    import os

    asked = _threads_asked(args)
    if not asked:
        return None
    threads = max(asked)
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except AttributeError:
        return None
    if threads < 1 or threads > len(allowed):
        return None
    os.sched_setaffinity(0, allowed[:threads])
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, str(threads))
    return allowed[:threads]


FRAMEWORKS = ("numpy", "jax", "torch", "keras", "tensorflow")


def _frameworks_of(module) -> set:
    """The frameworks a variant's module imports, itself or through a lobench module it imports (not every
    framework this process has loaded: the peers of one run share a process)."""
    import types

    found = set()

    def walk(mod, depth):
        for value in list(vars(mod).values()):
            if isinstance(value, types.ModuleType):
                top = value.__name__.split(".")[0]
                if top in FRAMEWORKS and top in sys.modules:
                    found.add(top)
                elif depth and top == "lobench" and value is not mod:
                    walk(value, depth - 1)

    walk(module, 1)
    return found


def origin_of(obj, where: str) -> str:
    """What a Python variant's rows come from: its module, the module's version, the frameworks loaded."""
    module = type(obj).__module__ if not isinstance(obj, type) else obj.__module__
    mod = sys.modules.get(module)
    version = getattr(mod, "__version__", None) if mod else None
    used = _frameworks_of(mod) if mod else set()
    frameworks = [f"{name} {getattr(sys.modules[name], '__version__', '?')}" for name in FRAMEWORKS if name in used]
    parts = [f"python {where}"]
    if version:
        parts.append(f"version={version}")
    if frameworks:
        parts.append("frameworks=" + ",".join(frameworks))
    return " ".join(parts)
