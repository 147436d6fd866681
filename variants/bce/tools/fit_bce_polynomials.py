#!/usr/bin/env python3
"""Derives the polynomial coefficients of variants/bce/bce_math.hpp.

Both polynomials are near-minimax in *relative* error, found by Lawson's iteration (iteratively
reweighted least squares) on Chebyshev nodes, with the constant term fixed to 1 so that exp(0) and
log1p(e)/e at e = 0 come out exact. The printed errors are those of the float32 coefficients evaluated
in float32 by Horner's rule with fused multiply-adds, as the kernels evaluate them.

    python3 variants/cpu/tools/fit_bce_polynomials.py
"""
import numpy as np


def lawson(f, lo, hi, degree, iterations=300, nodes=6000):
    """Coefficients c[0..degree] (c[0] = 1) of sum c_k t^k ~ f(t) on [lo, hi], minimax in relative error."""
    k = np.arange(nodes)
    t = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / nodes)
    y = f(t)
    powers = np.stack([t**j for j in range(1, degree + 1)], axis=1)
    rhs = y - 1.0
    w = np.full(nodes, 1.0 / nodes)
    for _ in range(iterations):
        sw = np.sqrt(w) / np.abs(y)
        c, *_ = np.linalg.lstsq(powers * sw[:, None], rhs * sw, rcond=None)
        err = np.abs((powers @ c - rhs) / y)
        w = w * err
        w /= w.sum()
    return np.concatenate([[1.0], c])


def horner_f32(c, t):
    c32 = np.float32(c).astype(np.float64)
    acc = np.full_like(t, c32[-1])
    for ck in c32[-2::-1]:
        acc = np.float32(acc * t + ck).astype(np.float64)
    return acc


def report(name, c, t, exact, value):
    print(f"{name}: max relative error in float32 {np.max(np.abs(value / exact - 1)):.3g}")
    for k, ck in enumerate(np.float32(c)):
        print(f"  c{k} = {float(ck):.9g}f")


ln2 = np.log(2.0)
# e^f on the reduced range |f| <= ln2/2 of exp(-a) = 2^n e^f.
c = lawson(np.exp, -ln2 / 2, ln2 / 2, 6)
t = np.float32(np.linspace(-ln2 / 2, ln2 / 2, 200001)).astype(np.float64)
report("exp(f), degree 6", c, t, np.exp(t), horner_f32(c, t))

# log1p(e)/e on e in [0, 1]: log1p(e) = e * q(e) keeps full relative accuracy as e -> 0.
def log1p_over_e(e):
    return np.where(e == 0, 1.0, np.log1p(e) / np.where(e == 0, 1.0, e))

c = lawson(log1p_over_e, 0.0, 1.0, 8)
t = np.float32(np.linspace(1e-6, 1, 200001)).astype(np.float64)
report("log1p(e)/e, degree 8", c, t, log1p_over_e(t), horner_f32(c, t))
