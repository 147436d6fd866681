"""Shared cases and the float64 oracle for the Python front ends' tests."""
import os
import sys

import numpy as np
import pytest

# The build tree's package (ctest sets PYTHONPATH to build/python); an installed lobench otherwise.
import lobench  # noqa: F401


def pytest_configure(config):
    # Two tiers (issue 43; docs/reliability.md#the-slow-tier): ctest python_pytest* runs -m "not slow" (what
    # CI runs), python_pytest*_slow (label slow) -m slow. A case is slow only where a fast one of its class
    # stays: another combination of an enumeration, or the same check made by another fast test (named there).
    config.addinivalue_line("markers", "slow: the full tier only (ctest python_pytest*_slow, label slow)")


LOSS_TOL = 1e-6  # relative, as the C++ conformance tests (variants/tests/reference_checks.hpp)
GRAD_TOL = 1e-5  # relative L2


def rel(a, ref):
    a, ref = np.asarray(a, np.float64), np.asarray(ref, np.float64)
    num, den = np.linalg.norm((a - ref).ravel()), np.linalg.norm(ref.ravel())
    return num if den == 0 else num / den


# Ragged cases: (P, V, D, L, weighted, reduction, seed). Unaligned P and V, V beyond one vocabulary
# block (5003), L = 1, D = 1; every case carries padding (-1 and V), duplicates, and with weights zeros.
CASES = [
    (1, 1, 1, 1, False, "mean", 0),
    (37, 301, 16, 3, True, "mean", 1),
    (37, 301, 16, 3, True, "sum", 2),
    (70, 5003, 24, 5, True, "mean", 3),
    (130, 517, 33, 1, False, "mean", 4),
    (65, 1029, 8, 4, False, "sum", 5),
    (9, 2000, 5, 7, True, "sum", 6),
]
CASE_IDS = [f"P{c[0]}-V{c[1]}-D{c[2]}-L{c[3]}-{'w' if c[4] else 'nw'}-{c[5]}" for c in CASES]


def make_case(P, V, D, L, weighted, reduction, seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((P, D), dtype=np.float32)
    E = rng.standard_normal((V, D), dtype=np.float32)
    T = rng.integers(0, V, (P, L)).astype(np.int32)
    if L > 1:
        T[:, 1] = T[:, 0]                          # duplicates
    pad = rng.random((P, L)) < 0.25
    T[pad] = np.where(rng.random(pad.sum()) < 0.5, -1, V)  # padding, both spellings
    if P > 1:
        T[0, :] = -1                               # a position with no valid target
    W = None
    if weighted:
        W = rng.random(P).astype(np.float32) * 2
        W[rng.random(P) < 0.2] = 0.0               # zero weights
    return dict(A=A, E=E, targets=T, weights=W, reduction=reduction)


def multi_hot(T, V):
    Y = np.zeros((T.shape[0], V), np.float64)
    for p, row in enumerate(T):
        for t in row:
            if 0 <= t < V:
                Y[p, t] = 1.0
    return Y


def reference(A, E, targets, weights, reduction):
    """Dense float64 BCE-with-logits: loss, per-position loss, dA, dE, counts (the contract)."""
    A64, E64 = A.astype(np.float64), E.astype(np.float64)
    V = E.shape[0]
    Y = multi_hot(targets, V)
    X = A64 @ E64.T
    elem = np.maximum(X, 0) - X * Y + np.log1p(np.exp(-np.abs(X)))
    w = np.ones(A.shape[0]) if weights is None else weights.astype(np.float64)
    if reduction == "mean":
        per = elem.mean(axis=1)
        sw = w.sum()
        loss = (w * per).sum() / sw if sw > 0 else 0.0
        scale = (w / (V * sw))[:, None] if sw > 0 else np.zeros((A.shape[0], 1))
    else:
        per = elem.sum(axis=1)
        loss = (w * per).sum()
        scale = w[:, None]
    G = scale * (1.0 / (1.0 + np.exp(-X)) - Y)
    pred = X > 0
    counts = np.stack([(pred & (Y > 0)).sum(1), (pred & (Y == 0)).sum(1), (~pred & (Y > 0)).sum(1),
                       (~pred & (Y == 0)).sum(1)], axis=1)
    near_zero = (np.abs(X) < 1e-5).any(axis=1)
    return dict(loss=loss, per_position_loss=per, dA=G @ E64, dE=G.T @ A64, counts=counts, near_zero=near_zero)


def shared_datasets():
    return os.environ.get("LOBENCH_SHARED_DATASETS",
                          os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "shared", "datasets"))


def read_mulan_arff(arff_path, xml_path, limit=None):
    """A Mulan sparse ARFF (binary features) as (features [n, F] float32, label lists)."""
    import re
    with open(xml_path, encoding="utf-8") as f:
        label_names = set(re.findall(r'<label name="([^"]+)"', f.read()))
    names, rows = [], []
    with open(arff_path, encoding="utf-8") as f:
        for line in f:
            s = line.strip()
            if s.lower().startswith("@attribute"):
                names.append(s.split()[1].strip("'\""))
            elif s.lower().startswith("@data"):
                break
        for line in f:
            s = line.strip()
            if s.startswith("{"):
                rows.append([int(kv.split()[0]) for kv in s.strip("{}").split(",") if kv.strip()])
                if limit and len(rows) >= limit:
                    break
    is_label = np.array([n in label_names for n in names])
    feat_index = -np.ones(len(names), np.int64)
    feat_index[~is_label] = np.arange((~is_label).sum())
    label_index = -np.ones(len(names), np.int64)
    label_index[is_label] = np.arange(is_label.sum())
    X = np.zeros((len(rows), int((~is_label).sum())), np.float32)
    labels = []
    for i, idx in enumerate(rows):
        idx = np.array(idx, np.int64)
        X[i, feat_index[idx[~is_label[idx]]]] = 1.0
        labels.append(label_index[idx[is_label[idx]]].tolist())
    return X, labels, int(is_label.sum())


def xmc_problem(n=512):
    """Bibtex from ../shared/datasets/xmc (features, padded label ids [n, L] with -1, V), or a seeded
    synthetic problem of the same shape where the data set is absent."""
    root = os.path.join(shared_datasets(), "xmc")
    arff, xml = os.path.join(root, "bibtex-train.arff"), os.path.join(root, "bibtex.xml")
    if os.path.exists(arff) and os.path.exists(xml):
        X, labels, V = read_mulan_arff(arff, xml, limit=n)
        source = "bibtex"
    else:
        rng = np.random.default_rng(0)
        X = (rng.random((n, 1836)) < 0.04).astype(np.float32)
        V = 159
        labels = [rng.choice(V, size=rng.integers(1, 6), replace=False).tolist() for _ in range(n)]
        source = "synthetic (bibtex not found under ../shared/datasets/xmc)"
    L = max(1, max(len(l) for l in labels))
    T = -np.ones((len(labels), L), np.int32)
    for i, l in enumerate(labels):
        T[i, :len(l)] = l
    return X, T, V, source


def directional_fd(loss_of, x, direction, h=1e-4):
    """Central finite difference of a float64 loss along `direction` at x."""
    x, direction = np.asarray(x, np.float64), np.asarray(direction, np.float64)
    return (loss_of(x + h * direction) - loss_of(x - h * direction)) / (2 * h)
