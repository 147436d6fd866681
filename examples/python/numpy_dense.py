"""An example Python variant: the BCE step as dense float64 NumPy (the contract as written,
docs/method.md#what-every-variant-computes).
Measured by lobench's engine beside the C++ variants:

    PYTHONPATH=build/python python -m lobench run --variants fused,examples/python/numpy_dense.py:NumpyDense \
        --B 1 --N 16 --V 1000 --D 32 --out run.h5
"""
import numpy as np

from lobench.python_variants import Variant


class NumpyDense(Variant):
    name = "numpy_dense"
    description = "example Python variant: dense [P, V] logits in float64 NumPy"

    def predicted_bytes(self, shape, options):
        # logits, their gradient and the multi-hot targets, [P, V] float64 each, plus A and E in float64
        P, V, D = shape["P"], shape["V"], shape["D"]
        return 3 * P * V * 8 + (P + V) * D * 8

    def prepare(self, A, E, targets, weights, reduction, options):
        P, V = A.shape[0], E.shape[0]
        A64, E64 = A.astype(np.float64), E.astype(np.float64)
        w = np.ones(P) if weights is None else weights.astype(np.float64)
        rows, cols = np.nonzero((targets >= 0) & (targets < V))
        y = np.zeros((P, V))
        y[rows, targets[rows, cols]] = 1.0  # padding ignored, a repeated id counts once

        def step():
            x = A64 @ E64.T
            elem = np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x))) - y * x
            if reduction == "mean":
                total = w.sum()
                loss = 0.0 if total == 0 else float((w * elem.mean(axis=1)).sum() / total)
                scale = 0.0 if total == 0 else 1.0 / (V * total)
            else:
                loss, scale = float((w * elem.sum(axis=1)).sum()), 1.0
            g = (scale * w)[:, None] * (1.0 / (1.0 + np.exp(-x)) - y)
            pred = x > 0
            counts = np.stack([(pred & (y > 0)).sum(1), (pred & (y == 0)).sum(1),
                               (~pred & (y > 0)).sum(1), (~pred & (y == 0)).sum(1)], axis=1)
            return loss, g @ E64, g.T @ A64, counts

        return step
