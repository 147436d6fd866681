"""lobench.nn: lobench.torch.binary_cross_entropy as a torch.nn.Module, the counterpart of
torch.nn.BCEWithLogitsLoss for logits A @ E.T that are never built.

    loss_fn = lobench.nn.CutBCEWithLogitsLoss(reduction="mean", pos_weight=None)
    loss = loss_fn(A, E, targets, weights)        # as F.binary_cross_entropy_with_logits(A @ E.T, multi_hot)
"""
from __future__ import annotations

from typing import Optional

from lobench import _needs

_needs.require("torch", "lobench.nn", _needs.TORCH)

import torch  # noqa: E402

from lobench import torch as lbt  # noqa: E402

__all__ = ["CutBCEWithLogitsLoss"]


class CutBCEWithLogitsLoss(torch.nn.Module):
    """Holds the options of lobench.torch.binary_cross_entropy; pos_weight ([V] or a scalar) is a
    buffer, so it follows the module's dtype conversions and state_dict (and must stay on the CPU)."""

    def __init__(self, reduction: str = "mean", pos_weight: Optional[torch.Tensor] = None, *,
                 weights_normalize: Optional[str] = None, variant: str = "fused", threads: Optional[int] = None):
        super().__init__()
        self.reduction, self.weights_normalize = reduction, weights_normalize
        self.variant, self.threads = variant, threads
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, A: torch.Tensor, E: torch.Tensor, targets: torch.Tensor,
                weights: Optional[torch.Tensor] = None) -> torch.Tensor:
        return lbt.binary_cross_entropy(A, E, targets, weights, reduction=self.reduction, pos_weight=self.pos_weight,
                                        weights_normalize=self.weights_normalize, variant=self.variant,
                                        threads=self.threads)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}, weights_normalize={self.weights_normalize!r}, variant={self.variant!r}"
