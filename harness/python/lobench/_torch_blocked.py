"""PyTorch's BCE-with-logits over A·Eᵀ, evaluated in vocabulary blocks with torch operations: the path
lobench.torch takes where the C++ step does not apply (float64, pos_weight, non-finite inputs, empty
shapes, per-position outputs, a loss without gradients: loss_only where it can) and the differentiable formula behind double
backward. At most one [P, block] logit tile is live at a time unless autograd records the operations
(create_graph), in which case every tile is kept, as any double backward must.

Element loss, as PyTorch documents it (pw: pos_weight of the column, 1 without one):
    l(x, y) = (1 − y)·x + (1 + (pw − 1)·y)·(log1p(exp(−|x|)) + max(−x, 0))
and its derivative dl/dx = (1 − y) − (1 + (pw − 1)·y)·σ(−x). The same expression form as PyTorch, so
infinities and NaN give what PyTorch gives (e.g. x = +inf, y = 1: 0·inf = NaN).
"""
from __future__ import annotations

from typing import Optional, Tuple

import torch

# Elements of one [P, block] logit tile (16 MiB of float32).
TILE_ELEMENTS = 1 << 22


def block_size(P: int, V: int) -> int:
    return max(1, min(V, TILE_ELEMENTS // max(P, 1)))


def multi_hot_block(ids: torch.Tensor, start: int, width: int, dtype) -> torch.Tensor:
    """[P, width] 0/1 in dtype: 1 where column start + j is one of the row's ids (ids outside the block,
    padding and repeats contribute nothing twice)."""
    P = ids.shape[0]
    y = torch.zeros(P, width, dtype=dtype)
    if ids.shape[1] == 0 or P == 0:
        return y
    local = ids - start
    inside = (local >= 0) & (local < width)
    rows = torch.arange(P).unsqueeze(1).expand_as(ids)
    y[rows[inside], local[inside]] = 1
    return y


def element_loss(x: torch.Tensor, y: torch.Tensor, pw: Optional[torch.Tensor]) -> torch.Tensor:
    log_weight = 1 if pw is None else 1 + (pw - 1) * y
    return (1 - y) * x + log_weight * (torch.log1p(torch.exp(-x.abs())) + torch.clamp(-x, min=0))


def element_grad(x: torch.Tensor, y: torch.Tensor, pw: Optional[torch.Tensor]) -> torch.Tensor:
    log_weight = 1 if pw is None else 1 + (pw - 1) * y
    return (1 - y) - log_weight * torch.sigmoid(-x)


def per_position(A: torch.Tensor, E: torch.Tensor, ids: torch.Tensor, pw: Optional[torch.Tensor],
                 want_counts: bool) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    """S_p = Σ_v l(a_p·e_v, y_pv) for every position ([P], A's dtype) and, with want_counts, the cut
    counts [P, 4] int64 (TP, FP, FN, TN at logit > 0). Differentiable when autograd is recording."""
    P, V = A.shape[0], E.shape[0]
    S = A.new_zeros(P)
    counts = torch.zeros(P, 4, dtype=torch.int64) if want_counts else None
    bv = block_size(P, V)
    for start in range(0, V, bv):
        stop = min(V, start + bv)
        x = A @ E[start:stop].T
        y = multi_hot_block(ids, start, stop - start, A.dtype)
        S = S + element_loss(x, y, None if pw is None else pw[start:stop]).sum(1)
        if want_counts:
            pred, pos = x.detach() > 0, y > 0
            counts[:, 0] += (pred & pos).sum(1)
            counts[:, 1] += (pred & ~pos).sum(1)
            counts[:, 2] += (~pred & pos).sum(1)
            counts[:, 3] += (~pred & ~pos).sum(1)
    return S, counts


@torch.no_grad()
def loss_only(A: torch.Tensor, E: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """S_p as per_position gives it without pos_weight or counts, for float32 A and E whose logits are
    finite, not recorded: the loss of a target column is softplus(x) − x, so S_p = Σ_v softplus(x_pv) −
    Σ_t x_pt over the row's distinct targets t (padding none), one softplus pass per tile (PyTorch's:
    x itself above 20, where float32 holds log1p(e^x) = x exactly) instead of the element formula's
    several and the tile's multi-hot labels. A tile whose logits are not all finite is left to the element
    formula (what PyTorch gives for infinities)."""
    P, V = A.shape[0], E.shape[0]
    S = A.new_zeros(P)
    bv = block_size(P, V)
    # |a·e| <= |a|·|e| (Cauchy-Schwarz): far below float32's largest, every logit is finite, no tile checked
    norms = A.norm(dim=1).max() * E.norm(dim=1).max() if P and V else torch.tensor(0.0)  # (inf: checked per tile)
    all_finite = bool(norms < 1e37)
    for start in range(0, V, bv):
        stop = min(V, start + bv)
        x = A @ E[start:stop].T
        if all_finite or bool(torch.isfinite(x.sum())):  # (a sum is finite only if every logit is)
            S += torch.nn.functional.softplus(x).sum(1)
        else:
            S += element_loss(x, multi_hot_block(ids, start, stop - start, A.dtype), None).sum(1)
            ids = _outside(ids, start, stop)  # (this block's targets are in its labels already)
    if ids.shape[1]:
        ordered = ids.sort(dim=1).values
        distinct = torch.ones_like(ordered, dtype=torch.bool)
        distinct[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
        valid = distinct & (ordered >= 0) & (ordered < V)
        safe = ordered.clamp(0, V - 1)
        for j in range(ids.shape[1]):  # (a target column at a time: [P, D], not [P, L, D])
            x_t = (A * E[safe[:, j]]).sum(1)
            S -= torch.where(valid[:, j], x_t, torch.zeros_like(x_t))
    return S


def _outside(ids: torch.Tensor, start: int, stop: int) -> torch.Tensor:
    """ids with those in [start, stop) made padding (-1)."""
    return torch.where((ids >= start) & (ids < stop), torch.full_like(ids, -1), ids)


@torch.no_grad()
def gradients(A: torch.Tensor, E: torch.Tensor, ids: torch.Tensor, pw: Optional[torch.Tensor],
              g: torch.Tensor, want_dpw: bool = False):
    """dA, dE (and with want_dpw, d pos_weight [V]) of Σ_p g_p·S_p (g: [P], the cotangent of each
    position's summed loss), without recording."""
    P, V = A.shape[0], E.shape[0]
    dA = torch.zeros_like(A)
    dE = torch.zeros_like(E)
    dpw = torch.zeros(V, dtype=A.dtype) if want_dpw else None
    bv = block_size(P, V)
    for start in range(0, V, bv):
        stop = min(V, start + bv)
        Ec = E[start:stop]
        x = A @ Ec.T
        y = multi_hot_block(ids, start, stop - start, A.dtype)
        G = element_grad(x, y, None if pw is None else pw[start:stop]) * g.unsqueeze(1)
        dA += G @ Ec
        dE[start:stop] = G.T @ A
        if want_dpw:  # d l / d pw = y·softplus(−x)
            dpw[start:stop] = (g.unsqueeze(1) * y * (torch.log1p(torch.exp(-x.abs())) + torch.clamp(-x, min=0))).sum(0)
    return dA, dE, dpw
