"""lobench.torch: lobench's BCE step as a PyTorch op (CPU tensors).

    import lobench.torch as lbt
    loss = lbt.binary_cross_entropy(A, E, targets)      # A [P, D] or [B, N, D], E [V, D], targets [..., L]
    loss.backward()                                      # A.grad, E.grad from the one fused pass

The drop-in for F.binary_cross_entropy_with_logits(A @ E.T, multi_hot(targets)): with weights None and
reduction "mean" the loss is that expression's .mean() (the mean over V, then over positions), without
the [P, V] logits. With weights [...] (one per position) "mean" is Σ w·l / Σ w (a weighted mean over
positions, 0 when Σ w = 0) and "sum" is Σ w·Σ_v BCE (= F.binary_cross_entropy_with_logits(...,
weight=w[..., None], reduction="sum")). Target ids outside [0, V) are padding; a repeated id counts once.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import torch

import lobench

__all__ = ["binary_cross_entropy", "BinaryCrossEntropy"]


def _check_tensor(x, name: str, dtypes, what: str) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"argument '{name}' must be a torch.Tensor ({what}), got {type(x).__name__}")
    if x.device.type != "cpu":
        raise ValueError(f"argument '{name}' is on {x.device}; lobench.torch runs on CPU tensors only")
    if x.dtype not in dtypes:
        raise TypeError(f"argument '{name}' must be {' or '.join(str(d) for d in dtypes)} ({what}), got {x.dtype}")


def _ids(targets: torch.Tensor, V: int) -> np.ndarray:
    """[P, L] int32 ids for the C++ step: ids outside [0, V) become -1, so wide ids never wrap."""
    t = targets.detach().reshape(-1, targets.shape[-1])
    if t.dtype != torch.int32:
        t = torch.where((t >= 0) & (t < V), t, torch.full_like(t, -1)).to(torch.int32)
    return t.contiguous().numpy()


class BinaryCrossEntropy(torch.autograd.Function):
    """forward(A, E, targets, weights, reduction, variant, threads) -> (loss, counts [..., 4]).
    The gradients of A, E (and of weights, from the per-position losses) are computed in the forward
    pass by the fused step and handed out once by backward."""

    @staticmethod
    def forward(ctx, A, E, targets, weights, reduction, variant, threads):
        P, D = A.numel() // A.shape[-1], A.shape[-1]
        a = A.detach().reshape(P, D).contiguous()
        e = E.detach().contiguous()
        w = None if weights is None else weights.detach().reshape(P).contiguous().numpy()
        r = lobench.bce(a.numpy(), e.numpy(), _ids(targets, E.shape[0]), w, reduction=reduction,
                        variant=variant, threads=threads)
        ctx.dA = torch.from_numpy(r.dA).view(A.shape)
        ctx.dE = torch.from_numpy(r.dE)
        ctx.dW = None
        if weights is not None and ctx.needs_input_grad[3]:
            # d loss / d w_p: l_p − loss over Σ w for "mean", l_p for "sum" (l_p: the per-position loss).
            l_p = r.per_position_loss
            if reduction == "mean":
                sw = float(np.sum(w, dtype=np.float64))
                l_p = (l_p - r.loss) / sw if sw > 0 else np.zeros_like(l_p)
            ctx.dW = torch.from_numpy(l_p.astype(np.float32)).view(weights.shape)
        counts = torch.from_numpy(r.counts).view(*A.shape[:-1], 4)
        ctx.mark_non_differentiable(counts)
        return torch.tensor(r.loss, dtype=A.dtype), counts

    @staticmethod
    def backward(ctx, g_loss, g_counts):
        if ctx.dA is None:
            raise RuntimeError("lobench.torch: backward ran twice through one binary_cross_entropy call; its "
                               "gradients are computed once in the forward pass (recompute the loss instead of "
                               "retain_graph=True)")
        grads = [ctx.dA, ctx.dE, ctx.dW]
        ctx.dA = ctx.dE = ctx.dW = None  # handed over: autograd may keep the buffers without a copy
        if float(g_loss) != 1.0:
            grads = [None if g is None else g.mul_(g_loss) for g in grads]
        need = ctx.needs_input_grad
        return (grads[0] if need[0] else None, grads[1] if need[1] else None, None,
                grads[2] if need[3] else None, None, None, None)


def binary_cross_entropy(A: torch.Tensor, E: torch.Tensor, targets: torch.Tensor,
                         weights: Optional[torch.Tensor] = None, reduction: str = "mean",
                         variant: str = "fused", return_metrics: bool = False, threads: Optional[int] = None):
    """BCE-with-logits of A @ E.T against the multi-hot targets, without materialising the logits.

    A: float32 [P, D] or [B, N, D]; E: float32 [V, D]; targets: integer [..., L] with A's leading
    shape; weights: float32 of A's leading shape, or None. reduction: "mean" or "sum". variant: a
    name from lobench.variants(). threads: None = torch.get_num_threads(). Returns the scalar loss,
    or (loss, counts) with return_metrics, counts int64 [..., 4]: TP, FP, FN, TN at logit > 0 per
    position (unweighted). Gradients flow to A, E and weights."""
    _check_tensor(A, "A", (torch.float32,), "activations [P, D] or [B, N, D]")
    _check_tensor(E, "E", (torch.float32,), "embeddings [V, D]")
    _check_tensor(targets, "targets", (torch.int32, torch.int64), "ids [..., L]")
    if A.dim() not in (2, 3):
        raise ValueError(f"argument 'A' must have rank 2 [P, D] or 3 [B, N, D], got shape {tuple(A.shape)}")
    if E.dim() != 2 or E.shape[1] != A.shape[-1]:
        raise ValueError(f"argument 'E' must have shape [V, {A.shape[-1]}] (D = A.shape[-1]), got {tuple(E.shape)}")
    if targets.dim() != A.dim() or targets.shape[:-1] != A.shape[:-1]:
        raise ValueError(f"argument 'targets' must have shape {tuple(A.shape[:-1])} + (L,), got {tuple(targets.shape)}")
    if weights is not None:
        _check_tensor(weights, "weights", (torch.float32,), "one weight per position")
        if weights.shape != A.shape[:-1]:
            raise ValueError(f"argument 'weights' must have shape {tuple(A.shape[:-1])}, got {tuple(weights.shape)}")
    if reduction not in ("mean", "sum"):
        raise ValueError(f"argument 'reduction' must be 'mean' or 'sum', got {reduction!r}")
    loss, counts = BinaryCrossEntropy.apply(A, E, targets, weights, reduction, variant,
                                            torch.get_num_threads() if threads is None else threads)
    return (loss, counts) if return_metrics else loss
