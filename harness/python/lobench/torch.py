"""lobench.torch: F.binary_cross_entropy_with_logits(A @ E.T, multi_hot(targets), ...) without the
[P, V] logits, on CPU tensors.

    import lobench.torch as lbt
    loss = lbt.binary_cross_entropy(A, E, targets)      # A [..., D], E [V, D], targets [..., L] ids
    loss.backward()                                      # A.grad, E.grad (and weights / pos_weight grads)

Semantics are PyTorch's (docs/python.md lists every difference): with P positions (A's leading
dimensions flattened) and the multi-hot Y [P, V] (ids outside [0, V) are padding, a repeated id counts
once), the loss equals F.binary_cross_entropy_with_logits(A @ E.T, Y, weight=w[:, None],
pos_weight=pos_weight, reduction=reduction): "mean" = Σ w·l / (P·V), "sum" = Σ w·l. lobench's own
normalisation, Σ w·l / (V·Σ w) (0 when Σ w = 0), only with weights_normalize="sum_w".
reduction="none" is refused ([P, V] is what this op exists not to build); reduction="per_position"
gives [...] = w_p·Σ_v l_pv instead.

Two ways of computing, chosen per call (the result does not depend on which; the tests hold both to
the float64 oracle):
- lobench's fused C++ step, when a gradient is wanted and A, E are float32 / bfloat16 / float16 and
  finite, without pos_weight: loss, dA, dE in one pass (bf16 / f16 inputs are computed in float32 and
  the results rounded to the input dtype once). The gradients are handed to autograd without a copy.
- torch operations over vocabulary blocks (lobench/_torch_blocked.py) otherwise: float64 inputs (in
  float64), pos_weight, NaN / inf inputs (propagated as PyTorch does), empty shapes, per-position
  outputs, and the loss alone when no gradient is wanted (torch.no_grad() or no input requiring grad:
  2·P·V·D flops, no dE buffer).
Double backward (create_graph=True, torch.autograd.functional.hessian, gradcheck of gradgrad)
differentiates the blocked formula, so second derivatives are exact, never zero. Backward may run
again through a retained graph (retain_graph=True): the gradients are recomputed from A, E.
"""
from __future__ import annotations

from typing import Optional, Tuple, Union

import numpy as np

from lobench import _needs

_needs.require("torch", "lobench.torch", _needs.TORCH)

import torch  # noqa: E402

import lobench
from lobench import _torch_blocked as blocked
from lobench import _validate

__all__ = ["binary_cross_entropy", "BinaryCrossEntropy"]

REDUCTIONS = ("mean", "sum", "per_position")
FAST_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


def _check_tensor(x, name: str, what: str, floating: bool = True) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"argument '{name}' must be a torch.Tensor ({what}), got {type(x).__name__}")
    if x.device.type != "cpu":
        raise ValueError(f"argument '{name}' is on {x.device}: lobench.torch computes on the CPU (its C++ step) "
                         "and refuses other devices rather than copying every step to the host; "
                         "call .cpu() explicitly if that is what you want")
    if floating and not x.dtype.is_floating_point:
        raise TypeError(f"argument '{name}' must be a floating tensor ({what}), got {x.dtype}")
    if not floating and (x.dtype.is_floating_point or x.dtype.is_complex or x.dtype == torch.bool):
        raise TypeError(f"argument '{name}' must be an integer tensor ({what}), got {x.dtype}")


def _ids(targets: torch.Tensor, V: int) -> torch.Tensor:
    """[P, L] ids as int64, those outside [0, V) replaced by -1 (so wide ids never wrap when narrowed)."""
    t = targets.detach().long()
    return torch.where((t >= 0) & (t < V), t, torch.full_like(t, -1))


class _Config:
    """The non-tensor arguments of one call."""

    def __init__(self, reduction, normalize, variant, threads, want_counts, lead_shape):
        self.reduction, self.normalize, self.variant = reduction, normalize, variant
        self.threads, self.want_counts, self.lead_shape = threads, want_counts, lead_shape

    def scale(self, P: int, V: int, sum_w: float) -> float:
        """The factor turning Σ_p w_p·S_p (S_p: a position's loss summed over V) into the loss."""
        if self.reduction == "mean":
            if self.normalize == "sum_w":
                return 1.0 / (V * sum_w) if sum_w != 0 and V > 0 else 0.0
            return 1.0 / (P * V) if P * V > 0 else float("nan")
        return 1.0


def _fast_path_applies(A, E, W, PW, cfg) -> bool:
    if PW is not None or cfg.reduction == "per_position" or A.shape[0] == 0 or E.shape[0] == 0 or A.shape[1] == 0:
        return False
    if A.dtype not in FAST_DTYPES or E.dtype not in FAST_DTYPES:
        return False
    if cfg.normalize == "sum_w" and W is not None and bool((W < 0).any()):
        return False  # Σ w may cross zero: the blocked path's arithmetic says what happens
    finite = bool(torch.isfinite(A).all()) and bool(torch.isfinite(E).all())
    return finite and (W is None or bool(torch.isfinite(W).all()))


def _loss_only_applies(A, E, PW, cfg) -> bool:
    """The loss without gradients through blocked.loss_only (float32 arithmetic, which handles non-finite
    values itself): no pos_weight, no counts, non-empty shapes."""
    return (PW is None and not cfg.want_counts and A.dtype in FAST_DTYPES and E.dtype in FAST_DTYPES
            and min(A.shape[0], E.shape[0], A.shape[1]) > 0)


def _fused_step(A, E, ids, W, cfg):
    """lobench's C++ step (reduction "sum", weights w): S_p [P] float64, counts, and dA, dE of Σ w_p·S_p
    as float32 tensors. Negative weights: two steps, over max(w, 0) and max(−w, 0), subtracted."""
    a = A.detach().float().contiguous().numpy()
    e = E.detach().float().contiguous().numpy()
    t = ids.to(torch.int32).contiguous().numpy() if ids.shape[1] else np.full((A.shape[0], 1), -1, np.int32)

    def step(w):
        return lobench.bce(a, e, t, w, reduction="sum", variant=cfg.variant, threads=cfg.threads)

    w = None if W is None else W.detach().float().contiguous().numpy()
    if w is None or not (w < 0).any():
        r = step(w)
        return r.per_position_loss, r.counts, torch.from_numpy(r.dA), torch.from_numpy(r.dE)
    pos, neg = step(np.maximum(w, 0)), step(np.maximum(-w, 0))
    dA, dE = torch.from_numpy(pos.dA), torch.from_numpy(pos.dE)
    return pos.per_position_loss, pos.counts, dA.sub_(torch.from_numpy(neg.dA)), dE.sub_(torch.from_numpy(neg.dE))


def _reduce(S, W, cfg, P, V, dtype):
    """The output from the per-position sums S [P] (float64 or the blocked path's dtype)."""
    ws = S if W is None else S * W.detach().to(S.dtype)
    if cfg.reduction == "per_position":
        return ws.to(dtype)
    sum_w = float(P) if W is None else float(W.detach().double().sum())
    if cfg.reduction == "mean" and cfg.normalize != "sum_w":
        return (ws.sum() / (P * V)).to(dtype)  # 0 / 0 = NaN for an empty batch, as PyTorch's mean
    return (ws.sum() * cfg.scale(P, V, sum_w)).to(dtype)


class BinaryCrossEntropy(torch.autograd.Function):
    """forward(A [P, D], E [V, D], W [P] or None, PW [V] or None, ids [P, L], cfg) -> (loss, counts)."""

    @staticmethod
    def forward(ctx, A, E, W, PW, ids, cfg):
        P, V = A.shape[0], E.shape[0]
        out_dtype = torch.promote_types(A.dtype, E.dtype)
        ctx.cfg, ctx.fused = cfg, None
        ctx.save_for_backward(A, E, W, PW, ids)
        if cfg.want_grad and _fast_path_applies(A, E, W, PW, cfg):
            S, counts, dA, dE = _fused_step(A, E, ids, W, cfg)
            S = torch.from_numpy(S)
            ctx.fused = (dA, dE)
            counts = torch.from_numpy(counts)
        elif not cfg.want_grad and _loss_only_applies(A, E, PW, cfg):
            # the loss alone (no_grad, or nothing requires a gradient): 2·P·V·D flops, no dE buffer
            S, counts = blocked.loss_only(A.detach().float(), E.detach().float(), ids), None
        else:
            compute = torch.float64 if out_dtype == torch.float64 else torch.float32
            with torch.no_grad():
                S, counts = blocked.per_position(A.detach().to(compute), E.detach().to(compute), ids,
                                                 None if PW is None else PW.detach().to(compute).expand(V),
                                                 cfg.want_counts)
        ctx.S = S
        counts = (counts if counts is not None else torch.zeros(P, 4, dtype=torch.int64))
        ctx.mark_non_differentiable(counts)
        return _reduce(S, W, cfg, P, V, out_dtype), counts

    @staticmethod
    def backward(ctx, g_out, g_counts):
        A, E, W, PW, ids = ctx.saved_tensors
        cfg = ctx.cfg
        if torch.is_grad_enabled():  # create_graph: differentiate the blocked formula itself
            return _recorded_gradients(A, E, W, PW, ids, cfg, g_out, ctx.needs_input_grad)
        P, V = A.shape[0], E.shape[0]
        sum_w = float(P) if W is None else float(W.detach().double().sum())
        need = ctx.needs_input_grad
        # The cotangent of each position's summed loss S_p (weights folded in).
        if cfg.reduction == "per_position":
            g_pos = g_out.reshape(P).double()
        else:
            g_pos = torch.full((P,), float(g_out) * cfg.scale(P, V, sum_w), dtype=torch.float64)
        dA = dE = dW = dPW = None
        if ctx.fused is not None and cfg.reduction != "per_position":
            dA, dE = ctx.fused  # the C++ step's gradients of Σ w_p·S_p, handed over once without a copy
            ctx.fused = None
            factor = float(g_pos[0]) if P else 0.0
            if factor != 1.0:
                dA, dE = dA.mul_(factor), dE.mul_(factor)
        elif need[0] or need[1] or need[3]:
            compute = torch.float64 if torch.promote_types(A.dtype, E.dtype) == torch.float64 else torch.float32
            g = g_pos if W is None else g_pos * W.detach().double()
            if ctx.fused is None and PW is None and _fast_path_applies(A, E, W, PW, cfg) and not need[3]:
                _, _, dA, dE = _fused_step(A, E, ids, W, cfg)  # a second backward (retain_graph): recompute
                factor = float(g_pos[0]) if P else 0.0
                dA, dE = dA.mul_(factor), dE.mul_(factor)
            else:
                dA, dE, dPW = blocked.gradients(A.detach().to(compute), E.detach().to(compute), ids,
                                                None if PW is None else PW.detach().to(compute).expand(V),
                                                g.to(compute), want_dpw=need[3])
        if need[2]:
            S = ctx.S.double()
            if cfg.reduction == "mean" and cfg.normalize == "sum_w":
                loss_ = float((S * W.detach().double()).sum()) * cfg.scale(P, V, sum_w)
                dW = (S / V - loss_) / sum_w if sum_w != 0 else torch.zeros_like(S)
                dW = dW * float(g_out)
            else:
                dW = g_pos * S
            dW = dW.to(W.dtype).reshape(W.shape)
        if dPW is not None:
            dPW = dPW.to(PW.dtype)
            dPW = dPW.sum().reshape(PW.shape) if PW.numel() == 1 and V != 1 else dPW.reshape(PW.shape)
        return (None if not need[0] or dA is None else dA.to(A.dtype),
                None if not need[1] or dE is None else dE.to(E.dtype), dW, dPW, None, None)


def _recorded_gradients(A, E, W, PW, ids, cfg, g_out, need):
    """The first derivatives as differentiable functions of A, E, W, pos_weight (double backward): the
    blocked loss recomputed while autograd records, then differentiated with create_graph."""
    with torch.enable_grad():
        inputs = [x for x, n in zip((A, E, W, PW), need[:4]) if n]
        S, _ = blocked.per_position(A, E, ids, None if PW is None else PW.expand(E.shape[0]), False)
        P, V = A.shape[0], E.shape[0]
        ws = S if W is None else S * W
        if cfg.reduction == "per_position":
            out = ws
        elif cfg.reduction == "mean" and cfg.normalize == "sum_w":
            out = ws.sum() / (V * W.sum()) if W is not None else ws.sum() / (V * P)
        elif cfg.reduction == "mean":
            out = ws.sum() / (P * V)
        else:
            out = ws.sum()
        grads = torch.autograd.grad(out, inputs, g_out, create_graph=True, allow_unused=True)
    it = iter(grads)
    return tuple(next(it) if n else None for n in need[:4]) + (None, None)


def binary_cross_entropy(A: torch.Tensor, E: torch.Tensor, targets: torch.Tensor,
                         weights: Optional[torch.Tensor] = None, reduction: str = "mean",
                         pos_weight: Optional[torch.Tensor] = None, *, weights_normalize: Optional[str] = None,
                         variant: str = "fused", return_metrics: bool = False,
                         threads: Optional[int] = None) -> Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]:
    """F.binary_cross_entropy_with_logits(A @ E.T, multi_hot(targets), weight=weights[..., None],
    pos_weight=pos_weight, reduction=reduction), the logits never materialised.

    A: floating [..., D] (any leading shape, P positions); E: floating [V, D]; targets: integer
    [..., L], A's leading shape (ids outside [0, V) are padding, repeats count once; L may be 0);
    weights: floating, A's leading shape (one weight per position, any sign), or None; pos_weight:
    floating [V] or a scalar tensor, or None. reduction: "mean" (Σ w·l / (P·V)), "sum", or
    "per_position" ([...] of w_p·Σ_v l_pv); "none" is refused (it is the [P, V] tensor). weights_normalize:
    None (PyTorch's mean) or "sum_w" (lobench's: Σ w·l / (V·Σ w), 0 when Σ w = 0). variant: a name
    from lobench.variants() for the C++ step. return_metrics: also return counts int64 [..., 4] (TP,
    FP, FN, TN at logit > 0 per position, unweighted). threads: None = torch.get_num_threads() (capped
    at 1024), else an int in [1, 1024]."""
    _check_tensor(A, "A", "activations [..., D]")
    _check_tensor(E, "E", "embeddings [V, D]")
    _check_tensor(targets, "targets", "ids [..., L]", floating=False)
    if A.dim() < 1:
        raise ValueError(f"argument 'A' must have rank >= 1 [..., D], got a scalar")
    if E.dim() != 2 or E.shape[1] != A.shape[-1]:
        raise ValueError(f"argument 'E' must have shape [V, {A.shape[-1]}] (D = A.shape[-1]), got {tuple(E.shape)}")
    if targets.dim() != A.dim() or targets.shape[:-1] != A.shape[:-1]:
        raise ValueError(f"argument 'targets' must have shape {tuple(A.shape[:-1])} + (L,), got {tuple(targets.shape)}")
    if weights is not None:
        _check_tensor(weights, "weights", "one weight per position")
        if weights.shape != A.shape[:-1]:
            raise ValueError(f"argument 'weights' must have shape {tuple(A.shape[:-1])} (one per position), "
                             f"got {tuple(weights.shape)}")
    V = E.shape[0]
    if pos_weight is not None:
        _check_tensor(pos_weight, "pos_weight", "one weight per vocabulary column [V]")
        if pos_weight.numel() != 1 and tuple(pos_weight.shape) != (V,):
            raise ValueError(f"argument 'pos_weight' must have shape [{V}] (V) or be a scalar, got {tuple(pos_weight.shape)}")
    if reduction == "none":
        raise ValueError("argument 'reduction': 'none' would be the [P, V] loss tensor, the one thing this op never "
                         "builds; use reduction='per_position' for each position's loss (summed over V), or "
                         "F.binary_cross_entropy_with_logits on explicit logits")
    _validate.choice(reduction, "reduction", REDUCTIONS)
    if weights_normalize is not None:
        _validate.choice(weights_normalize, "weights_normalize", ("sum_w",))
    _validate.flag(return_metrics, "return_metrics")
    if not isinstance(variant, str) or variant not in lobench.variants():
        raise ValueError(f"argument 'variant' must be one of {lobench.variants()}, got {variant!r}")
    threads = _validate.threads(threads)
    if threads is None:
        threads = min(max(torch.get_num_threads(), 1), _validate.MAX_THREADS)
    lead = tuple(A.shape[:-1])
    P = int(np.prod(lead)) if lead else 1
    cfg = _Config(reduction, weights_normalize, variant, threads, return_metrics, lead)
    # Under torch.no_grad() (or with no input requiring grad) the loss alone is computed: no dA, no dE.
    cfg.want_grad = torch.is_grad_enabled() and any(
        x is not None and x.requires_grad for x in (A, E, weights, pos_weight))
    ids = _ids(targets.reshape(P, targets.shape[-1]), V)
    W = None if weights is None else weights.reshape(P)
    PW = None if pos_weight is None else pos_weight.reshape(-1)
    out, counts = BinaryCrossEntropy.apply(A.reshape(P, A.shape[-1]), E, W, PW, ids, cfg)
    if reduction == "per_position":
        out = out.reshape(lead)
    return (out, counts.reshape(*lead, 4)) if return_metrics else out
