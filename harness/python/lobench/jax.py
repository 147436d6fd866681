"""lobench.jax: lobench's BCE step as a JAX op on the CPU, with RecML's cut_binary_cross_entropy
signature and semantics.

    from lobench.jax import cut_binary_cross_entropy
    loss = cut_binary_cross_entropy(activations, embeddings, targets, weights)     # [B, N, D], [V, D], [B, N, L]
    grads = jax.grad(lambda a, e: cut_binary_cross_entropy(a, e, targets))(activations, embeddings)

Semantics (RecML's op): per-position loss = the mean over all V of BCE-with-logits(a·e_v, y_v), y_v = 1
when v is one of the position's ids (ids outside [0, V) are ignored, a repeated id counts once); loss =
Σ w·l / (Σ w + 1e-8), without weights Σ l / (#positions + 1e-8). return_metrics adds TP, FP, FN, TN
(prediction: logit > 0), weighted by w and summed, as float32 scalars.

The step runs in C++ (jax.pure_callback, so it works under jit and grad); the custom_vjp's forward
computes the gradients too, in the same fused pass, and keeps them as residuals (no recomputation).
"""
from __future__ import annotations

from functools import partial
from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np

import lobench

__all__ = ["cut_binary_cross_entropy"]

EPS = 1e-8  # RecML's denominator guard: Σ w + EPS


def _host_step(A, E, T, W, *, variant, threads, want_grads):
    """The C++ step on the host arrays, in RecML's normalisation. Returns loss (float32), metrics [4]
    (float32, weighted sums), and, with want_grads, dA, dE, dW (float32)."""
    A, E, T = np.asarray(A), np.asarray(E), np.asarray(T)
    W = None if W is None else np.asarray(W)
    r = lobench.bce(A, E, T, W, reduction="mean", variant=variant, threads=threads)
    sw = float(A.shape[0]) if W is None else float(np.sum(W, dtype=np.float64))
    # lobench's mean is Σ w·l / Σ w (0 when Σ w = 0); RecML's divides by Σ w + EPS.
    c = sw / (sw + EPS)
    loss = np.float32(r.loss * c)
    w = np.ones(A.shape[0]) if W is None else W.astype(np.float64)
    metrics = (r.counts * w[:, None]).sum(axis=0).astype(np.float32)
    if not want_grads:
        return loss, metrics
    dA = r.dA if c == 1.0 else (r.dA * np.float32(c))
    dE = r.dE if c == 1.0 else (r.dE * np.float32(c))
    # d loss / d w_p = (l_p − loss) / (Σ w + EPS).
    dW = ((r.per_position_loss - r.loss * c) / (sw + EPS)).astype(np.float32)
    return loss, metrics, dA, dE, dW


def _callback(A, E, T, W, variant, threads, want_grads):
    P, D = A.shape
    V = E.shape[0]
    out = [jax.ShapeDtypeStruct((), jnp.float32), jax.ShapeDtypeStruct((4,), jnp.float32)]
    if want_grads:
        out += [jax.ShapeDtypeStruct((P, D), jnp.float32), jax.ShapeDtypeStruct((V, D), jnp.float32),
                jax.ShapeDtypeStruct((P,), jnp.float32)]
    fn = partial(_host_step, variant=variant, threads=threads, want_grads=want_grads)
    if W is None:
        host = lambda a, e, t: fn(a, e, t, None)  # noqa: E731
        return jax.pure_callback(host, tuple(out), A, E, T, vmap_method="sequential")
    return jax.pure_callback(fn, tuple(out), A, E, T, W, vmap_method="sequential")


@partial(jax.custom_vjp, nondiff_argnums=(0, 1))
def _cut_bce(variant, threads, A, E, T, W):
    return _callback(A, E, T, W, variant, threads, want_grads=False)


def _cut_bce_fwd(variant, threads, A, E, T, W):
    loss, metrics, dA, dE, dW = _callback(A, E, T, W, variant, threads, want_grads=True)
    return (loss, metrics), (dA, dE, None if W is None else dW)


def _cut_bce_bwd(variant, threads, residuals, cotangents):
    dA, dE, dW = residuals
    g = cotangents[0]  # the metrics' cotangents are dropped (counts have no gradient)
    return g * dA, g * dE, None, None if dW is None else g * dW


_cut_bce.defvjp(_cut_bce_fwd, _cut_bce_bwd)


def cut_binary_cross_entropy(activations, embeddings, targets, weights=None, return_metrics: bool = False,
                             *, variant: str = "fused", threads: Optional[int] = None):
    """RecML's cut_binary_cross_entropy on the CPU through lobench's C++ step.

    activations: [B, N, D] (or [P, D]) floats; embeddings: [V, D]; targets: integer ids [B, N, L]
    (or [P, L]); weights: one per position, shape activations.shape[:-1], or None. Returns loss, or
    (loss, tp, fp, fn, tn) with return_metrics. The step computes in float32; the gradients come back
    in the inputs' dtypes. variant: a name from lobench.variants(); threads: None = OpenMP's default."""
    if isinstance(targets, np.ndarray) and targets.dtype.kind in "iu" and targets.dtype.itemsize > 4:
        # Without jax_enable_x64, jnp.asarray would wrap wide ids into int32 range: pad them first.
        V = np.shape(embeddings)[0]
        targets = np.where((targets >= 0) & (targets < V), targets, -1).astype(np.int32)
    A, E, T = jnp.asarray(activations), jnp.asarray(embeddings), jnp.asarray(targets)
    if A.ndim not in (2, 3):
        raise ValueError(f"argument 'activations' must have rank 3 [B, N, D] (or 2, [P, D]), got shape {A.shape}")
    if not jnp.issubdtype(A.dtype, jnp.floating):
        raise TypeError(f"argument 'activations' must be floating point, got {A.dtype}")
    if E.ndim != 2 or E.shape[1] != A.shape[-1]:
        raise ValueError(f"argument 'embeddings' must have shape [V, {A.shape[-1]}] (D = activations.shape[-1]), "
                         f"got {E.shape}")
    if not jnp.issubdtype(E.dtype, jnp.floating):
        raise TypeError(f"argument 'embeddings' must be floating point, got {E.dtype}")
    if T.ndim != A.ndim or T.shape[:-1] != A.shape[:-1]:
        raise ValueError(f"argument 'targets' must have shape {A.shape[:-1]} + (L,), got {T.shape}")
    if not jnp.issubdtype(T.dtype, jnp.integer):
        raise TypeError(f"argument 'targets' must be integer ids, got {T.dtype}")
    W = None
    if weights is not None:
        W = jnp.asarray(weights)
        if W.shape != A.shape[:-1]:
            raise ValueError(f"argument 'weights' must have shape {A.shape[:-1]} (activations.shape[:-1]), got {W.shape}")
        if not jnp.issubdtype(W.dtype, jnp.floating):
            raise TypeError(f"argument 'weights' must be floating point, got {W.dtype}")
    V, D = E.shape
    P = int(np.prod(A.shape[:-1]))
    t = T.reshape(P, T.shape[-1])
    if t.dtype != jnp.int32:  # ids outside [0, V) are padding: make them -1 before narrowing
        t = jnp.where((t >= 0) & (t < V), t, -1).astype(jnp.int32)
    a = A.reshape(P, D).astype(jnp.float32)
    w = None if W is None else W.reshape(P).astype(jnp.float32)
    loss, metrics = _cut_bce(variant, threads, a, E.astype(jnp.float32), t, w)
    if return_metrics:
        return loss, metrics[0], metrics[1], metrics[2], metrics[3]
    return loss
