"""lobench.jax: RecML's cut_binary_cross_entropy (recml/core/ops/binary_cross_entropy_ops.py), its
signature and semantics, with lobench's fused C++ step as the backward on the CPU.

    from lobench.jax import cut_binary_cross_entropy
    loss = cut_binary_cross_entropy(activations, embeddings, targets, weights)   # [B, N, D], [V, D], [B, N, L]
    grads = jax.grad(lambda a, e: cut_binary_cross_entropy(a, e, targets))(activations, embeddings)

Semantics (RecML's; docs/python.md lists where lobench differs): per-position loss l = the mean over
all V of BCE-with-logits(a·e_v, y_v), y_v = 1 when v is one of the position's ids (ids outside
[0, V) are ignored, a repeated id counts once); losses = l·w; loss = Σ losses / (Σ w + 1e-8), without
weights Σ l / (#positions + 1e-8). Activations [B, N, D] or [X, B, N, D] (targets [X, B, N, L] or a
shared [B, N, L]); lobench also takes [P, D]. return_per_target_losses adds `losses` [..., B, N];
return_metrics adds TP, FP, FN, TN (prediction: logit > 0) weighted by w, summed to scalars unless
return_per_target_metrics. As in RecML, the metrics carry gradients to the weights only.

How it computes: the forward pass (loss, losses, counts) is an XLA scan over vocabulary blocks
(lobench/_jax_blocked.py; float32, or float64 for float64 inputs under jax_enable_x64). The backward
recomputes: lobench's C++ step (jax.pure_callback, one fused pass, float32) with the per-position
cotangents as weights, or the same blocked JAX formula for float64 inputs and for non-finite values
(NaN propagates; nothing raises inside a callback). The backward's own derivatives (grad of grad,
jax.hessian) are those of the blocked formula (a custom_jvp), so every order is exact. Arguments are
checked before anything is traced into a callback. Inputs live on the host CPU: with a `mesh`, the op
runs per shard under shard_map (tokens split over the mesh, E replicated or gathered, dE summed over
shards; on a multi-device mesh the backward is the blocked JAX formula, see _sharded).
"""
from __future__ import annotations

from functools import partial
from typing import Optional

from lobench import _needs

_needs.require("jax", "lobench.jax", _needs.JAX)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import lobench
from lobench import _jax_blocked as blocked
from lobench import _validate

__all__ = ["cut_binary_cross_entropy"]

EPS = 1e-8  # RecML's denominator guard: Σ w + EPS


def _compute_dtype(*xs):
    return jnp.float64 if any(x.dtype == jnp.float64 for x in xs) else jnp.float32


# ----- the backward's gradients: the C++ step, differentiated through the blocked formula -----

def _host_gradients(A, E, T, g, *, variant, threads):
    """dA, dE (float32) of Σ_p g_p·S_p by lobench's C++ step, g as the position weights (reduction
    "sum"); a negative g is handled by two steps over max(g, 0) and max(−g, 0)."""
    A = np.ascontiguousarray(A, np.float32)
    E = np.ascontiguousarray(E, np.float32)
    T = np.ascontiguousarray(T, np.int32) if T.shape[1] else np.full((A.shape[0], 1), -1, np.int32)
    g = np.asarray(g, np.float32)
    if not g.any() or A.shape[0] == 0 or A.shape[1] == 0:
        return np.zeros(A.shape, np.float32), np.zeros(E.shape, np.float32)

    def step(w):
        r = lobench.bce(A, E, T, w, reduction="sum", variant=variant, threads=threads)
        return r.dA, r.dE
    if not (g < 0).any():
        return step(g)
    pA, pE = step(np.maximum(g, 0))
    nA, nE = step(np.maximum(-g, 0))
    return pA - nA, pE - nE


@partial(jax.custom_jvp, nondiff_argnums=(0,))
def _gradients(cfg, A, E, T, g):
    """dA, dE of Σ_p g_p·S_p in A's and E's dtypes."""
    variant, threads, block_v, host_step = cfg
    compute = _compute_dtype(A, E, g)
    if compute == jnp.float64 or not host_step:
        dA, dE = blocked.gradients(A, E, T, g, compute, block_v)
        return dA.astype(A.dtype), dE.astype(E.dtype)
    shapes = (jax.ShapeDtypeStruct(A.shape, jnp.float32), jax.ShapeDtypeStruct(E.shape, jnp.float32))
    host = partial(_host_gradients, variant=variant, threads=threads)
    finite = jnp.all(jnp.isfinite(A)) & jnp.all(jnp.isfinite(E)) & jnp.all(jnp.isfinite(g))
    dA, dE = jax.lax.cond(finite,
                          lambda: jax.pure_callback(host, shapes, A, E, T, g, vmap_method="sequential"),
                          lambda: blocked.gradients(A, E, T, g, jnp.float32, block_v))
    return dA.astype(A.dtype), dE.astype(E.dtype)


@_gradients.defjvp
def _gradients_jvp(cfg, primals, tangents):
    A, E, T, g = primals
    tA, tE, _, tg = tangents
    compute = _compute_dtype(A, E, g)

    def formula(a, e, gg):
        dA, dE = blocked.gradients(a, e, T, gg, compute, cfg[2])
        return dA.astype(A.dtype), dE.astype(E.dtype)
    return jax.jvp(formula, (A, E, g), (tA, tE, tg))


# ----- the op: per-position losses and counts, RecML's custom_vjp structure -----

@partial(jax.custom_vjp, nondiff_argnums=(0,))
def _per_position(cfg, A, E, T):
    return _per_position_fwd(cfg, A, E, T)[0]


def _per_position_fwd(cfg, A, E, T):
    compute = _compute_dtype(A, E)
    S, counts = blocked.per_position(A, E, T, compute, cfg[2])
    V = E.shape[0]
    return (S / V, counts), (A, E, T)


def _per_position_bwd(cfg, residuals, cotangents):
    A, E, T = residuals
    d_losses = cotangents[0]  # the counts have no gradient with respect to A and E (as in RecML)
    dA, dE = _gradients(cfg, A, E, T, d_losses / E.shape[0])
    return dA, dE, np.zeros(T.shape, jax.dtypes.float0)


_per_position.defvjp(_per_position_fwd, _per_position_bwd)


def _check(activations, embeddings, targets, weights):
    """jnp arrays of the arguments, or TypeError / ValueError naming the argument (before tracing)."""
    if isinstance(targets, np.ndarray) and targets.dtype.kind in "iu" and targets.dtype.itemsize > 4:
        # Without jax_enable_x64, jnp.asarray would wrap wide ids into int32 range: make them -1 first.
        V = np.shape(embeddings)[0]
        targets = np.where((targets >= 0) & (targets < V), targets, -1).astype(np.int32)
    A, E, T = jnp.asarray(activations), jnp.asarray(embeddings), jnp.asarray(targets)
    if A.ndim not in (2, 3, 4):
        raise ValueError(f"argument 'activations' must have rank 3 [B, N, D] or 4 [X, B, N, D] (or 2, [P, D]), "
                         f"got shape {A.shape}")
    if not jnp.issubdtype(A.dtype, jnp.floating):
        raise TypeError(f"argument 'activations' must be floating point, got {A.dtype}")
    if E.ndim != 2 or E.shape[1] != A.shape[-1]:
        raise ValueError(f"argument 'embeddings' must have shape [V, {A.shape[-1]}] (D = activations.shape[-1]), "
                         f"got {E.shape}")
    if not jnp.issubdtype(E.dtype, jnp.floating):
        raise TypeError(f"argument 'embeddings' must be floating point, got {E.dtype}")
    shared = A.ndim == 4 and T.ndim == 3 and T.shape[:-1] == A.shape[1:-1]
    if not shared and (T.ndim != A.ndim or T.shape[:-1] != A.shape[:-1]):
        raise ValueError(f"argument 'targets' must have shape {A.shape[:-1]} + (L,)"
                         + (f" or {A.shape[1:-1]} + (L,) (shared over X)" if A.ndim == 4 else "") + f", got {T.shape}")
    if not jnp.issubdtype(T.dtype, jnp.integer):
        raise TypeError(f"argument 'targets' must be integer ids, got {T.dtype}")
    W = None
    if weights is not None:
        W = jnp.asarray(weights)
        if W.shape != A.shape[:-1]:
            raise ValueError(f"argument 'weights' must have shape {A.shape[:-1]} (activations.shape[:-1], one weight "
                             f"per position), got {W.shape}")
        if not (jnp.issubdtype(W.dtype, jnp.floating) or jnp.issubdtype(W.dtype, jnp.integer)):
            raise TypeError(f"argument 'weights' must be numeric, got {W.dtype}")
    return A, E, (jnp.broadcast_to(T, A.shape[:-1] + T.shape[-1:]) if shared else T), W


def _ids(T, P, V):
    """[P, L] int32 ids, those outside [0, V) replaced by -1 (wide ids never wrap into range)."""
    t = T.reshape(P, T.shape[-1])
    if t.dtype != jnp.int32:
        t = jnp.where((t >= 0) & (t < V), t, -1).astype(jnp.int32)
    return t


def _token_axes(act_spec, rank):
    """The mesh axes that split the positions: act_spec's entries for the axes before D (a short
    spec names only leading axes; an entry may be a tuple of mesh axes). D's entry is left out, since
    each shard needs whole rows of A."""
    axes = []
    for entry in tuple(act_spec or ())[:rank - 1]:
        for a in (entry if isinstance(entry, tuple) else (entry,)):
            if a is not None and a not in axes:
                axes.append(a)
    return tuple(axes)


def _sharded(cfg, mesh, act_spec, rank, A2, E, T2):
    """_per_position under shard_map: positions split over the mesh axes act_spec uses for its token
    axes, E and the gradients' dE replicated (the shard_map transpose sums dE over the shards; a
    vocabulary-sharded E is gathered on entry, as RecML's forward does). On a mesh of more than one
    device the backward is the blocked JAX formula: lobench's C++ step runs in a host callback, and
    JAX 0.10's CPU client hangs (all-reduce rendezvous timeout, then abort) when such a callback reads
    its inputs inside a multi-device shard_map."""
    from jax.sharding import PartitionSpec
    if mesh.size > 1:
        cfg = cfg[:3] + (False,)
    axes = _token_axes(act_spec, rank)
    if not axes:
        axes = tuple(mesh.axis_names)
    rows = PartitionSpec(axes if len(axes) > 1 else axes[0])
    n = int(np.prod([mesh.shape[a] for a in axes]))
    if A2.shape[0] % n:
        raise ValueError(f"argument 'mesh': {A2.shape[0]} positions do not split evenly over the {n} shards of "
                         f"mesh axes {axes}")
    fn = jax.shard_map(partial(_per_position, cfg), mesh=mesh, in_specs=(rows, PartitionSpec(), rows),
                       out_specs=(rows, rows), check_vma=False)
    return fn(A2, E, T2)


def cut_binary_cross_entropy(activations, embeddings, targets, weights=None, return_metrics: bool = False, *,
                             return_per_target_losses: bool = False, return_per_target_metrics: bool = False,
                             block_v: Optional[int] = None, mesh=None, act_spec=None, emb_spec=None,
                             variant: str = "fused", threads: Optional[int] = None):
    """RecML's cut_binary_cross_entropy: returns loss; (loss, losses) with return_per_target_losses;
    (loss, tp, fp, fn, tn) with return_metrics; (loss, losses, tp, fp, fn, tn) with both.

    activations: floating [B, N, D] or [X, B, N, D] (or [P, D]); embeddings: floating [V, D];
    targets: integer ids, activations.shape[:-1] + (L,) (with 4-D activations also a shared
    [B, N, L]; L may be 0); weights: activations.shape[:-1] (one per position, any sign, float or
    integer) or None. block_v: the vocabulary tile of the blocked JAX passes (None: a tile of 4M
    logits). mesh / act_spec: run per shard under shard_map (positions split over the mesh axes of
    act_spec's token axes, or all of the mesh's axes; D stays whole); emb_spec: None, PartitionSpec()
    or a vocabulary sharding such as P('model', None) (E is gathered on entry); D-sharded E raises
    NotImplementedError. On a mesh of several devices the backward is the blocked JAX formula.
    variant: the C++ step's variant (lobench.variants()); threads: None (OpenMP's default, capped at
    the cores) or 1..1024. Loss dtype: float32, float64 for float64 inputs under jax_enable_x64."""
    A, E, T, W = _check(activations, embeddings, targets, weights)
    for name, value in (("return_metrics", return_metrics), ("return_per_target_losses", return_per_target_losses),
                        ("return_per_target_metrics", return_per_target_metrics)):
        _validate.flag(value, name)
    if not isinstance(variant, str) or variant not in lobench.variants():
        raise ValueError(f"argument 'variant' must be one of {lobench.variants()}, got {variant!r}")
    threads = _validate.threads(threads)
    block_v = _validate.integer(block_v, "block_v", 1, 2**31 - 1, allow_none=True)
    if emb_spec is not None and len(tuple(emb_spec)) > 1 and tuple(emb_spec)[1] is not None:
        raise NotImplementedError(f"argument 'emb_spec' {emb_spec}: embeddings sharded along D are not implemented "
                                  "(as in RecML); shard the vocabulary axis (P('model', None)) or replicate E")
    if (act_spec is not None or emb_spec is not None) and mesh is None:
        raise ValueError("arguments 'act_spec' / 'emb_spec' need 'mesh'")
    V, D = E.shape
    lead = A.shape[:-1]
    P = int(np.prod(lead)) if lead else 1
    T2 = _ids(T, P, V)
    if T2.shape[1] and P:
        # The C++ backward's memory, planned now (shapes are static) rather than failing in a callback.
        need = lobench.planned_bytes(P, V, D, max(1, T2.shape[1]), True, variant, threads)
        limit = lobench._ext.default_memory_limit()
        if need > limit:
            raise lobench.MemoryLimitError(f"shapes P = {P}, V = {V}, D = {D} need {need / 2**30:.2f} GiB in the "
                                           f"backward step, more than the memory limit {limit / 2**30:.2f} GiB")
    cfg = (variant, threads, block_v, True)  # True: the backward may use the C++ step
    A2 = A.reshape(P, D)
    if mesh is None:
        l, counts = _per_position(cfg, A2, E, T2)
    else:
        l, counts = _sharded(cfg, mesh, act_spec, A.ndim, A2, E, T2)
    losses, counts = l.reshape(lead), counts.reshape(lead + (4,))
    if W is not None:
        losses = losses * W
        counts = counts * W[..., None]
        weight_sum = jnp.sum(W)
    else:
        weight_sum = P
    loss = jnp.sum(losses) / (weight_sum + EPS)
    out = (loss, losses) if return_per_target_losses else (loss,)
    if return_metrics:
        metrics = [counts[..., k] for k in range(4)]
        out += tuple(metrics if return_per_target_metrics else [jnp.sum(m) for m in metrics])
    return out[0] if len(out) == 1 else out
