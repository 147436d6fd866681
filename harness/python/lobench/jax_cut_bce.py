"""Cut BCE in pure JAX, written from the paper's description (vocabulary-chunked exact BCE with the logits
recomputed in the backward pass): the peer that shows the algorithm's best plain-JAX form beside the dense
baselines. No [P, V] buffer exists in the forward or the backward.

The contract is lobench's (docs/method.md#what-every-variant-computes): logits x = A·Eᵀ, element loss softplus(x) − y·x with the
stable softplus max(x, 0) + log1p(exp(−|x|)), y[p, v] = 1 iff v occurs in row p of T (ids outside [0, V) are
padding, a repeated id counts once), reduction mean: Σ_p w_p · (1/V) Σ_v l[p, v] / Σ_p w_p (0 when Σw = 0).

The loss splits into a dense background, Σ_v softplus(x[p, v]) as if every label were negative, computed
by a lax.scan over vocabulary blocks of `block_v` rows of E, and a sparse correction −x[p, t] at the unique
valid targets t, computed from the P·L gathered rows of E. The backward (jax.custom_vjp) scans the blocks
again, recomputing each block's logits: g = s·w_p·σ(x) with s = 1/(V·Σw) gives dA += g·E_k and block k of
dE = gᵀ·A, then the targets' −s·w_p terms are subtracted from dA and scattered into dE. The weights get
their exact gradient too, dloss/dw_p = (ℓ_p − loss)/Σw with ℓ_p the position's mean over V.

    loss = cut_bce(A, E, T, w, block_v)            # differentiable in A, E and w (T is integer)
"""
import functools

import jax
import jax.numpy as jnp
from jax import lax


def unique_valid_targets(T, V):
    """[P, L] bool: T[p, l] is in [0, V) and no earlier l' of the row holds the same id."""
    valid = (T >= 0) & (T < V)
    L = T.shape[1]
    earlier = jnp.tril(jnp.ones((L, L), dtype=bool), k=-1)  # earlier[l, l'] = l' < l
    repeated = jnp.any((T[:, :, None] == T[:, None, :]) & earlier[None], axis=2)
    return valid & ~repeated


def _vocab_blocks(E, block_v):
    """E zero-padded to whole blocks, as [blocks, block_v, D], and each block's first id."""
    V, D = E.shape
    blocks = -(-V // block_v)
    padded = jnp.pad(E, ((0, blocks * block_v - V), (0, 0)))
    return padded.reshape(blocks, block_v, D), jnp.arange(blocks) * block_v


def _softplus(x):
    return jnp.maximum(x, 0) + jnp.log1p(jnp.exp(-jnp.abs(x)))


def position_losses(A, E, T, block_v):
    """ℓ_p = (1/V) Σ_v l[p, v], by the background scan and the sparse correction."""
    V = E.shape[0]
    E_blocks, starts = _vocab_blocks(E, block_v)
    in_vocab = jnp.arange(block_v)

    def background_block(acc, block):
        E_k, start = block
        element = jnp.where(start + in_vocab < V, _softplus(A @ E_k.T), 0)
        return acc + jnp.sum(element, axis=1), None

    background, _ = lax.scan(background_block, jnp.zeros(A.shape[0], A.dtype), (E_blocks, starts))
    keep = unique_valid_targets(T, V)
    target_logits = jnp.einsum("pd,pld->pl", A, E[jnp.clip(T, 0, V - 1)])
    correction = jnp.sum(jnp.where(keep, target_logits, 0), axis=1)
    return (background - correction) / V


def _mean(w, ell):
    total = jnp.sum(w)
    return jnp.where(total > 0, jnp.sum(w * ell) / jnp.where(total > 0, total, 1), 0)


@functools.partial(jax.custom_vjp, nondiff_argnums=(4,))
def cut_bce(A, E, T, w, block_v):
    return _mean(w, position_losses(A, E, T, block_v))


def _cut_bce_fwd(A, E, T, w, block_v):
    ell = position_losses(A, E, T, block_v)
    loss = _mean(w, ell)
    return loss, (A, E, T, w, ell, loss)


def _cut_bce_bwd(block_v, residuals, g):
    A, E, T, w, ell, loss = residuals
    V, D = E.shape
    total = jnp.sum(w)
    safe_total = jnp.where(total > 0, total, 1)
    cw = jnp.where(total > 0, g * w / (V * safe_total), 0)  # s·w_p, times the incoming cotangent
    E_blocks, starts = _vocab_blocks(E, block_v)
    in_vocab = jnp.arange(block_v)

    def gradient_block(dA, block):
        E_k, start = block
        grad = jnp.where(start + in_vocab < V, jax.nn.sigmoid(A @ E_k.T) * cw[:, None], 0)
        return dA + grad @ E_k, grad.T @ A

    dA, dE_blocks = lax.scan(gradient_block, jnp.zeros_like(A), (E_blocks, starts))
    dE = dE_blocks.reshape(-1, D)[:V]
    keep = unique_valid_targets(T, V)
    T_safe = jnp.clip(T, 0, V - 1)
    coef = jnp.where(keep, cw[:, None], 0)  # [P, L]: the −s·w_p·y terms, once per unique valid target
    dA = dA - jnp.einsum("pl,pld->pd", coef, E[T_safe])
    dE = dE.at[T_safe].add(-coef[:, :, None] * A[:, None, :])
    dw = jnp.where(total > 0, g * (ell - loss) / safe_total, 0)
    return dA, dE, None, dw


cut_bce.defvjp(_cut_bce_fwd, _cut_bce_bwd)


def working_bytes(P, V, D, block_v, itemsize=4):
    """The working set this algorithm needs beside its inputs and outputs, as a model (XLA may fuse or keep
    more): a block's logits and their element-wise result, E padded to whole blocks, and the backward's
    per-block dE before it is cut to V rows."""
    padded_v = -(-V // block_v) * block_v
    return (2 * P * block_v + 2 * padded_v * D) * itemsize
