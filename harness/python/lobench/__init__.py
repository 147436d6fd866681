"""lobench: exact BCE loss and gradients of A·Eᵀ over huge vocabularies, from NumPy, PyTorch and JAX.

    import lobench
    r = lobench.bce(A, E, targets)           # A [P, D], E [V, D] float32; targets [P, L] int32
    r.loss, r.dA, r.dE, r.counts             # counts [P, 4]: TP, FP, FN, TN at logit > 0

The step is the C++ one (any registered CPU variant, `lobench.variants()`), run on the caller's arrays
in place with the GIL released. Semantics (docs/method.md#what-every-variant-computes): per-position loss = mean (or sum)
over all V of BCE-with-logits(a_p·e_v, y_pv), y_pv = 1 when v is one of the row's ids; ids outside
[0, V) are padding and a repeated id counts once. The scalar loss is the position-weighted mean of the
per-position losses (Σ w·l / Σ w, 0 when Σ w = 0) for reduction="mean", or Σ w·l for "sum". dA and dE
are its gradients.

Front ends (docs/python.md says exactly where each differs from what it replaces):
`lobench.torch.binary_cross_entropy` (PyTorch's F.binary_cross_entropy_with_logits semantics; module
form lobench.nn.CutBCEWithLogitsLoss) and `lobench.jax.cut_binary_cross_entropy` (RecML's op).
Number formats: `lobench.quantize`, `lobench.formats`. Run files: `lobench.results`. Sweeps (the `lobench run`
command, rows as a pandas DataFrame, e.g. in a notebook): `lobench.run`. Threads, memory
and argument ranges are the CLI's (threads in [1, 1024], memory planned before allocating).
"""
from __future__ import annotations

import dataclasses
import importlib
from typing import Optional

import numpy as np

try:
    from . import _ext
except ImportError as e:  # a build tree whose package lacks the compiled module (the quick start builds only `lobench`)
    import glob as _glob
    import os as _os
    _here = _os.path.dirname(__file__)
    _why = f"cannot load: {e}" if _glob.glob(_os.path.join(_here, "_ext*")) else "is not built"
    raise ImportError(f"lobench's compiled module _ext in {_here} {_why}: build it with scripts/build.sh (every "
                      "target) or scripts/test.sh, or install the package with `pip install .`") from None
from . import _validate
from ._validate import MemoryLimitError
from ._version import __version__
from .sweep_api import run

__all__ = ["bce", "BCEResult", "variants", "variant_info", "quantize", "QuantizeResult", "formats", "roundings",
           "planned_bytes", "MemoryLimitError", "run", "__version__"]


@dataclasses.dataclass(frozen=True)
class BCEResult:
    """One step's outputs. The arrays are the C++ step's own buffers (no copy)."""

    loss: float                     # the reduced loss (float64)
    per_position_loss: np.ndarray   # [P] float64, unweighted mean (or sum) over V
    dA: np.ndarray                  # [P, D] float32, d loss / d A
    dE: np.ndarray                  # [V, D] float32, d loss / d E
    counts: np.ndarray              # [P, 4] int64: TP, FP, FN, TN (prediction: logit > 0)
    variant: str                    # "cpu/NAME"
    peak_working_bytes: int         # counted by the variant's allocator (inputs and outputs excluded)
    e_stored_bytes: int             # bytes of E in its storage format (0 for float32 E)
    step_seconds: float             # the C++ step alone (the variant's run())

    @property
    def tp(self) -> np.ndarray:
        return self.counts[:, 0]

    @property
    def fp(self) -> np.ndarray:
        return self.counts[:, 1]

    @property
    def fn(self) -> np.ndarray:
        return self.counts[:, 2]

    @property
    def tn(self) -> np.ndarray:
        return self.counts[:, 3]


def _array(x, name: str, kind: str, ndim: int, shape_doc: str, convert: bool) -> np.ndarray:
    """x as a C-contiguous float32 (kind 'f') or int32 (kind 'i') array of rank ndim, without a copy
    unless convert is set; TypeError / ValueError naming the argument otherwise."""
    want = np.float32 if kind == "f" else np.int32
    if not isinstance(x, np.ndarray):
        if not convert:
            raise TypeError(f"argument '{name}' must be a numpy.ndarray of {np.dtype(want)} {shape_doc}, "
                            f"got {type(x).__name__} (pass convert=True to convert)")
        x = np.asarray(x)
    if x.ndim != ndim:
        raise ValueError(f"argument '{name}' must have rank {ndim} {shape_doc}, got shape {x.shape}")
    if x.dtype != want:
        ok = x.dtype.kind == "f" if kind == "f" else x.dtype.kind in "iu"
        if not (convert and ok):
            hint = "float64" if kind == "f" else "int64"
            raise TypeError(f"argument '{name}' must be {np.dtype(want)}, got {x.dtype}"
                            + (f" (pass convert=True to accept {hint})" if ok else ""))
    elif not x.flags.c_contiguous and not convert:
        raise ValueError(f"argument '{name}' must be C-contiguous (strides {x.strides}); "
                         "use np.ascontiguousarray or pass convert=True")
    if kind == "i" and x.dtype != want:
        # Ids outside [0, V) are padding; wider ones must stay padding, not wrap into int32 range.
        return x  # narrowed by _ids once V is known
    return np.ascontiguousarray(x, dtype=want)


def _ids(targets: np.ndarray, V: int) -> np.ndarray:
    if targets.dtype == np.int32:
        return np.ascontiguousarray(targets)
    valid = (targets >= 0) & (targets < V)
    return np.ascontiguousarray(np.where(valid, targets, -1).astype(np.int32))


def bce(A, E, targets, weights=None, reduction: str = "mean", variant: str = "fused",
        e_format: Optional[str] = None, threads: Optional[int] = None, convert: bool = False,
        e_rounding: str = "nearest_even", seed: int = 0, mem_limit: Optional[int] = None) -> BCEResult:
    """Loss, per-position loss, dA, dE and cut counts of BCE(A·Eᵀ, multi-hot(targets)).

    A: [P, D] float32; E: [V, D] float32; targets: [P, L] int32 (ids outside [0, V) are padding,
    repeats count once); weights: [P] float32 >= 0 or None (all ones); reduction: "mean" or "sum";
    variant: a name from lobench.variants(); e_format: E's storage format (None or "fp32": float32;
    else a name from lobench.formats(), E rounded into it with e_rounding / seed, the variant reading
    the packed codes; the gradients are those of the rounded E); threads: None = OpenMP's default
    (OMP_NUM_THREADS) capped at the number of cores, else an int in [1, 1024] as the CLI's --threads (in
    a child forked after this process ran a step, always 1: OpenMP's threads do not survive fork);
    mem_limit: bytes the step may use (None: memory available now minus max(1 GiB, 10 %), the CLI's
    --mem-limit default); a step predicted to need more raises MemoryLimitError before allocating.
    convert=True accepts other float / integer dtypes and non-contiguous arrays (copying them);
    otherwise the inputs are used in place and a wrong dtype, rank or layout raises.
    """
    A = _array(A, "A", "f", 2, "[P, D]", convert)
    E = _array(E, "E", "f", 2, "[V, D]", convert)
    targets = _array(targets, "targets", "i", 2, "[P, L]", convert)
    if A.shape[1] != E.shape[1]:
        raise ValueError(f"argument 'E' has shape {E.shape}; expected [V, {A.shape[1]}] (D = A.shape[1])")
    if targets.shape[0] != A.shape[0]:
        raise ValueError(f"argument 'targets' has shape {targets.shape}; expected [{A.shape[0]}, L] (P = A.shape[0])")
    targets = _ids(targets, E.shape[0])
    if weights is not None:
        weights = _array(weights, "weights", "f", 1, "[P]", convert)
        if weights.shape[0] != A.shape[0]:
            raise ValueError(f"argument 'weights' has shape {weights.shape}; expected [{A.shape[0]}] (P = A.shape[0])")
    if reduction not in ("mean", "sum"):
        raise ValueError(f"argument 'reduction' must be 'mean' or 'sum', got {reduction!r}")
    if not isinstance(variant, str):
        raise TypeError(f"argument 'variant' must be a str (one of {variants()}), got {type(variant).__name__}")
    threads = _validate.threads(threads)
    seed = _validate.seed(seed)
    mem_limit = _validate.memory_limit(mem_limit)
    if not isinstance(e_rounding, str):
        raise TypeError(f"argument 'e_rounding' must be a str (see lobench.roundings()), got {type(e_rounding).__name__}")
    if e_format is not None and not isinstance(e_format, str):
        raise TypeError(f"argument 'e_format' must be None or a str (see lobench.formats()), got {type(e_format).__name__}")
    try:
        r = _ext.bce(A, E, targets, weights, reduction, variant, e_format or "", e_rounding, seed, threads, mem_limit)
    except ValueError as e:
        _validate.raise_memory(e)
    return BCEResult(**r)


def planned_bytes(P: int, V: int, D: int, L: int, weighted: bool = False, variant: str = "fused",
                  threads: Optional[int] = None) -> float:
    """Bytes one step of `variant` would need (inputs, outputs, predicted working set), as `lobench check`
    predicts them; bce() refuses a step whose prediction exceeds its mem_limit."""
    for name, v in (("P", P), ("V", V), ("D", D), ("L", L)):
        _validate.integer(v, name, 0, 2**62)
    return _ext.planned_bytes(int(P), int(V), int(D), int(L), bool(weighted), variant, _validate.threads(threads))


def variant_info() -> list:
    """The registered CPU variants: dicts of name, description, supports, stored_e (reads a stored E)."""
    return _ext.variants()


def variants() -> list:
    """Names of the registered CPU variants (what bce(variant=...) accepts)."""
    return [v["name"] for v in _ext.variants()]


@dataclasses.dataclass(frozen=True)
class QuantizeResult:
    values: np.ndarray              # float32, x rounded onto the format's grid
    codes: Optional[np.ndarray]     # uint8 (<= 8 bits) / uint16 (<= 16 bits) bit patterns, None if wider
    format: str                     # canonical name (ml_dtypes' for its types: "float8_e4m3fn", ...)
    bits: int                       # storage width of the format
    description: str

    def as_ml_dtypes(self) -> np.ndarray:
        """The codes viewed as the ml_dtypes type of the same name (needs ml_dtypes and such a type)."""
        import ml_dtypes
        if self.codes is None or not hasattr(ml_dtypes, self.format):
            raise ValueError(f"ml_dtypes has no type for {self.format!r} (or the format has no packed codes)")
        return self.codes.view(getattr(ml_dtypes, self.format))


def quantize(x, format: str, rounding: str = "nearest_even", seed: int = 0, bits: Optional[int] = None,
             threads: Optional[int] = None) -> QuantizeResult:
    """Rounds float32 x (any shape) into a number format (lobench.formats(): ml_dtypes names, tf32,
    any eXmY, "_sat" for saturation) with a rounding mode (lobench.roundings()); stochastic modes draw
    Philox bits keyed by seed and element index (the same at any thread count); bits = random bits of
    stochastic rounding (None: the format's default). Bit-exact with ml_dtypes' casts for nearest_even."""
    if not isinstance(x, np.ndarray) or x.dtype != np.float32:
        got = x.dtype if isinstance(x, np.ndarray) else type(x).__name__
        raise TypeError(f"argument 'x' must be a numpy.ndarray of float32, got {got} "
                        "(convert with x.astype(np.float32): float64 inputs would be rounded twice)")
    if not isinstance(format, str):
        raise TypeError(f"argument 'format' must be a str (see lobench.formats()), got {type(format).__name__}")
    if not isinstance(rounding, str):
        raise TypeError(f"argument 'rounding' must be a str (see lobench.roundings()), got {type(rounding).__name__}")
    r = _ext.quantize(np.ascontiguousarray(x), format, rounding, _validate.seed(seed), _validate.sr_bits(bits),
                      _validate.threads(threads))
    return QuantizeResult(**r)


def formats() -> list:
    """Format names quantize() and bce(e_format=...) accept (besides any eXmY and the "_sat" suffix)."""
    return list(_ext.formats())


def roundings() -> list:
    """Rounding mode names."""
    return list(_ext.roundings())


def __getattr__(name):
    # lobench.torch / lobench.jax import their framework only when first used; lobench.results (the
    # run-file reader, plots/lobench_results.py) imports pandas and h5py only then.
    if name in ("torch", "jax", "results", "nn"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'lobench' has no attribute {name!r}")
