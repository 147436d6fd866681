"""BCE-with-logits of A·Eᵀ against multi-hot targets, in vocabulary blocks with plain JAX operations
(lax.scan over blocks of E; one [P, block] logit tile per step). lobench.jax computes its forward
pass this way, and its backward this way where lobench's C++ step does not apply (float64 under x64,
non-finite values); every derivative of these functions (grad of grad, jvp) is JAX's own.

Per position p and column v, x = a_p·e_v, y = 1 when v is one of p's ids (ids outside [0, V) are
padding, a repeated id counts once): l = softplus(x) − y·x = max(x, 0) − y·x + log1p(exp(−|x|)).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

TILE_ELEMENTS = 1 << 22  # elements of one [P, block] logit tile


def block_size(P: int, V: int, block_v=None) -> int:
    if block_v is not None:
        return max(1, min(int(block_v), max(V, 1)))
    return max(1, min(max(V, 1), TILE_ELEMENTS // max(P, 1)))


def _blocks(E, bv):
    """E padded with zero rows to a multiple of bv, as [n_blocks, bv, D]."""
    V, D = E.shape
    n = -(-V // bv) if V else 0
    Ep = jnp.pad(E, ((0, n * bv - V), (0, 0)))
    return Ep.reshape(n, bv, D), n


def _labels(ids, start, bv):
    """[P, bv] bool: column start + j is one of the row's ids."""
    cols = start + jnp.arange(bv)
    hit = jnp.zeros((ids.shape[0], bv), bool)
    for l in range(ids.shape[1]):  # L is static and small; duplicates OR into one hit
        hit = hit | (ids[:, l:l + 1] == cols[None, :])
    return hit


def _tile(A, Eb, ids, start, bv, V, compute):
    x = jnp.dot(A.astype(compute), Eb.astype(compute).T, preferred_element_type=compute)
    y = _labels(ids, start, bv)
    live = (start + jnp.arange(bv)) < V  # padding rows of the last block
    return x, y, live


def per_position(A, E, ids, compute, block_v=None):
    """S_p = Σ_v l(a_p·e_v, y_pv) [P] in `compute`, and the cut counts [P, 4] (TP, FP, FN, TN at
    logit > 0) in `compute` (exact integers below 2^24 in float32)."""
    P, V = A.shape[0], E.shape[0]
    bv = block_size(P, V, block_v)
    blocks, n = _blocks(E, bv)
    if n == 0:
        return jnp.zeros((P,), compute), jnp.zeros((P, 4), compute)

    def body(carry, xs):
        S, C = carry
        j, Eb = xs
        start = j * bv
        x, y, live = _tile(A, Eb, ids, start, bv, V, compute)
        yf = y.astype(compute)
        l = jnp.maximum(x, 0) - yf * x + jnp.log1p(jnp.exp(-jnp.abs(x)))
        S = S + jnp.sum(jnp.where(live[None, :], l, 0), axis=1)
        pred = jax.lax.stop_gradient(x) > 0
        live2 = live[None, :]
        counts = jnp.stack([jnp.sum(pred & y & live2, 1), jnp.sum(pred & ~y & live2, 1),
                            jnp.sum(~pred & y & live2, 1), jnp.sum(~pred & ~y & live2, 1)], axis=1)
        return (S, C + counts.astype(compute)), None

    init = (jnp.zeros((P,), compute), jnp.zeros((P, 4), compute))
    (S, C), _ = jax.lax.scan(jax.checkpoint(body), init, (jnp.arange(n), blocks))
    return S, C


def gradients(A, E, ids, g, compute, block_v=None):
    """dA [P, D], dE [V, D] (in `compute`) of Σ_p g_p·S_p, g [P]: (σ(x) − y)·g_p per logit."""
    P, V = A.shape[0], E.shape[0]
    bv = block_size(P, V, block_v)
    blocks, n = _blocks(E, bv)
    if n == 0:
        return jnp.zeros(A.shape, compute), jnp.zeros(E.shape, compute)
    Ac = A.astype(compute)

    def body(dA, xs):
        j, Eb = xs
        x, y, live = _tile(A, Eb, ids, j * bv, bv, V, compute)
        G = jnp.where(live[None, :], (jax.nn.sigmoid(x) - y.astype(compute)) * g.astype(compute)[:, None], 0)
        return dA + G @ Eb.astype(compute), G.T @ Ac

    dA, dE = jax.lax.scan(jax.checkpoint(body), jnp.zeros(A.shape, compute), (jnp.arange(n), blocks))
    return dA, dE.reshape(n * bv, -1)[:V]
