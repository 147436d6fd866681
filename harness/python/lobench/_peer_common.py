"""What the framework peers (lobench/peer_*.py) share: the dense multi-hot targets a framework user
builds, the contract's reduction as a weight vector and a scale, and the rule for JAX's thread pool.

Threads: XLA sizes its CPU thread pool once, from the CPUs the process may run on when its backend
starts, and has no flag for it (the XLA_FLAGS word `intra_op_parallelism_threads=N` is not an XLA flag:
without `--` it is silently ignored, with `--` XLA aborts). `python -m lobench run` therefore pins the
process to its first --threads CPUs before any variant module is imported (lobench/python_variants.py,
pin_threads); a JAX peer skips, with the reason, a row that asks for another number of threads than the
pool it got.
"""
from __future__ import annotations

import os
from typing import Optional, Tuple

import numpy as np


def multi_hot(targets: np.ndarray, V: int) -> np.ndarray:
    """[P, V] float32: 1 at each valid id of a row (ids outside [0, V) are padding; a repeated id once)."""
    P = targets.shape[0]
    valid = (targets >= 0) & (targets < V)
    rows = np.repeat(np.arange(P), targets.shape[1])[valid.ravel()]
    y = np.zeros((P, V), np.float32)
    y[rows, targets[valid]] = 1.0
    return y


def reduction_weights(weights: Optional[np.ndarray], reduction: str, P: int, V: int) -> Tuple[np.ndarray, float]:
    """(w [P] float32, scale) such that loss = scale · Σ_p w_p Σ_v l[p, v], the contract's reduction:
    mean Σ_p w_p · mean_v l / Σ_p w_p (0 when Σw = 0), sum Σ_p w_p Σ_v l."""
    w = np.ones(P, np.float32) if weights is None else np.asarray(weights, np.float32)
    if reduction == "sum":
        return w, 1.0
    total = float(w.astype(np.float64).sum())
    return w, (0.0 if total == 0 else 1.0 / (V * total))


def cpus() -> int:
    """How many CPUs this process may run on now."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class JaxThreads:
    """The CPUs XLA's pool was sized for: read when the first JAX peer prepares a row (the backend starts
    then), and the reason a row asking for a different --threads cannot have them."""

    pool: Optional[int] = None

    @classmethod
    def skip_reason(cls, jax, options) -> Optional[str]:
        if jax.default_backend() != "cpu":
            return None
        if cls.pool is None:
            cls.pool = cpus()
        if options["threads"] != cls.pool:
            return (f"XLA's CPU pool has {cls.pool} threads (the CPUs the process could use when JAX started), "
                    f"not {options['threads']}: one --threads value per process")
        return None


def operand_skip_reason(options, supported=("fp32",)) -> Optional[str]:
    if options["operand"] not in supported:
        return f"operand {options['operand']} is not implemented by this peer ({', '.join(supported)})"
    return None
