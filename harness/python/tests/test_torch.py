"""lobench.torch.binary_cross_entropy against PyTorch's dense BCE (float32 and float64), every variant."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed for this interpreter (Debian's python3-torch "
                                             "serves /usr/bin/python3; ctest runs this file there)")
import torch.nn.functional as F  # noqa: E402

import lobench  # noqa: E402
import lobench.torch as lbt  # noqa: E402
from conftest import CASE_IDS, CASES, GRAD_TOL, LOSS_TOL, make_case, multi_hot, rel, xmc_problem  # noqa: E402


def dense_loss(A, E, T, W, reduction, pos_weight=None):
    """What a PyTorch user writes: F.binary_cross_entropy_with_logits over the [P, V] logits, the
    position weights broadcast over V."""
    Y = torch.from_numpy(multi_hot(T.reshape(-1, T.shape[-1]).numpy(), E.shape[0])).to(A.dtype)
    X = A.reshape(-1, A.shape[-1]) @ E.T
    if W is None or not W.requires_grad:
        w = None if W is None else W.reshape(-1, 1)
        return F.binary_cross_entropy_with_logits(X, Y, weight=w, pos_weight=pos_weight, reduction=reduction)
    # PyTorch's op has no gradient for `weight`: the same expression with the weights applied outside.
    per = F.binary_cross_entropy_with_logits(X, Y, pos_weight=pos_weight, reduction="none") * W.reshape(-1, 1)
    return per.mean() if reduction == "mean" else per.sum()


def leaves(c, dtype, shape3=None):
    A = torch.from_numpy(c["A"]).to(dtype)
    T = torch.from_numpy(c["targets"]).long()
    W = None if c["weights"] is None else torch.from_numpy(c["weights"]).to(dtype)
    if shape3:
        A, T = A.reshape(*shape3, -1), T.reshape(*shape3, -1)
        W = None if W is None else W.reshape(shape3)
    A.requires_grad_(True)
    E = torch.from_numpy(c["E"]).to(dtype).requires_grad_(True)
    if W is not None:
        W.requires_grad_(True)
    return A, E, T, W


def grads(loss, A, E, W):
    loss.backward()
    return A.grad, E.grad, None if W is None else W.grad


@pytest.mark.parametrize("variant", lobench.variants())
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_matches_dense_bce(variant, case):
    c = make_case(*case)
    A, E, T, W = leaves(c, torch.float32)
    loss = lbt.binary_cross_entropy(A, E, T, W, reduction=c["reduction"], variant=variant, threads=2)
    gA, gE, gW = grads(loss, A, E, W)
    for dtype, tol_loss, tol_grad in [(torch.float64, LOSS_TOL, GRAD_TOL), (torch.float32, LOSS_TOL, GRAD_TOL)]:
        A2, E2, T2, W2 = leaves(c, dtype)
        ref = dense_loss(A2, E2, T2, W2, c["reduction"])
        rA, rE, rW = grads(ref, A2, E2, W2)
        what = f"{variant} vs dense {dtype}"
        assert abs(loss.item() - ref.item()) <= tol_loss * abs(ref.item()), what
        assert rel(gA.numpy(), rA.detach().numpy()) <= tol_grad, what
        assert rel(gE.numpy(), rE.detach().numpy()) <= tol_grad, what
        if W is not None:
            assert rel(gW.numpy(), rW.detach().numpy()) <= tol_grad, what


def test_targets_of_any_layout_give_the_same_loss_and_gradients():
    """Column-major (a transposed [L, P]) and sliced targets are accepted as PyTorch accepts them, with the
    values of the C-contiguous ones (the C++ step had refused a transposed tensor's strides)."""
    c = next(c for c in map(lambda case: make_case(*case), CASES) if min(c["targets"].shape) > 1)
    A, E, T, W = leaves(c, torch.float32)
    ref = lbt.binary_cross_entropy(A, E, T, W, reduction=c["reduction"], threads=2)
    gA, gE, _ = grads(ref, A, E, W)
    for layout in (T.T.contiguous().T, torch.stack([T, T], dim=2)[:, :, 0]):
        assert not layout.is_contiguous() and torch.equal(layout, T)
        A2, E2, _, W2 = leaves(c, torch.float32)
        loss = lbt.binary_cross_entropy(A2, E2, layout, W2, reduction=c["reduction"], threads=2)
        hA, hE, _ = grads(loss, A2, E2, W2)
        assert loss.item() == ref.item() and torch.equal(hA, gA) and torch.equal(hE, gE)


def test_three_d_inputs_and_mean_is_the_dense_mean():
    # [B, N, D] activations, no weights, no padding: exactly F.binary_cross_entropy_with_logits(...).mean().
    rng = np.random.default_rng(3)
    B, N, D, V, L = 3, 11, 16, 777, 4
    A = torch.tensor(rng.standard_normal((B, N, D), dtype=np.float32), requires_grad=True)
    E = torch.tensor(rng.standard_normal((V, D), dtype=np.float32), requires_grad=True)
    T = torch.tensor(rng.integers(0, V, (B, N, L)))
    Y = torch.zeros(B, N, V).scatter_(2, T, 1.0)
    ref = F.binary_cross_entropy_with_logits(A @ E.T, Y, reduction="none").mean()
    ref.backward()
    rA, rE = A.grad.clone(), E.grad.clone()
    A.grad = E.grad = None
    loss, counts = lbt.binary_cross_entropy(A, E, T, return_metrics=True)
    (3.0 * loss).backward()  # a cotangent other than 1
    assert abs(loss.item() - ref.item()) <= LOSS_TOL * ref.item()
    assert rel(A.grad.numpy(), 3 * rA.numpy()) <= GRAD_TOL and rel(E.grad.numpy(), 3 * rE.numpy()) <= GRAD_TOL
    assert counts.shape == (B, N, 4) and counts.dtype == torch.int64 and (counts.sum(-1) == V).all()
    pred = (A @ E.T).detach() > 0
    assert torch.equal(counts[..., 0], (pred & (Y > 0)).sum(-1))


def test_backward_twice_through_a_retained_graph_gives_the_same_gradients():
    c = make_case(*CASES[1])
    A, E, T, W = leaves(c, torch.float32)
    loss = lbt.binary_cross_entropy(A, E, T, W)
    loss.backward(retain_graph=True)
    gA, gE, gW = A.grad.clone(), E.grad.clone(), W.grad.clone()
    loss.backward()  # accumulates: twice the first gradients
    assert rel(A.grad.numpy(), 2 * gA.numpy()) <= 1e-6 and rel(E.grad.numpy(), 2 * gE.numpy()) <= 1e-6
    assert rel(W.grad.numpy(), 2 * gW.numpy()) <= 1e-6


@pytest.mark.parametrize("change, exc, pattern", [
    (dict(A=lambda a: a.int()), TypeError, r"argument 'A' must be a floating tensor"),
    (dict(A=lambda a: a[0, 0]), ValueError, r"argument 'A' must have rank >= 1"),
    (dict(A=lambda a: a.detach().numpy()), TypeError, r"argument 'A' must be a torch.Tensor"),
    (dict(E=lambda e: e[:, :2]), ValueError, r"argument 'E' must have shape \[V, 16\]"),
    (dict(T=lambda t: t.float()), TypeError, r"argument 'targets' must be an integer tensor"),
    (dict(T=lambda t: t[:5]), ValueError, r"argument 'targets' must have shape \(37,\) \+ \(L,\)"),
    (dict(W=lambda w: w[:5]), ValueError, r"argument 'weights' must have shape \(37,\)"),
    (dict(reduction="none"), ValueError, r"'none' would be the \[P, V\] loss tensor"),
    (dict(reduction="avg"), ValueError, r"argument 'reduction' must be one of"),
    (dict(variant="nope"), ValueError, r"argument 'variant'"),
    (dict(threads=100000), ValueError, r"argument 'threads' must be in \[1, 1024\]"),
    (dict(weights_normalize="sum"), ValueError, r"argument 'weights_normalize'"),
])
def test_bad_inputs_raise_naming_the_argument(change, exc, pattern):
    c = make_case(*CASES[1])
    A, E, T, W = leaves(c, torch.float32)
    args = dict(A=A, E=E, T=T, W=W)
    for k in ("A", "E", "T", "W"):
        if k in change:
            args[k] = change[k](args[k])
    kw = {k: v for k, v in change.items() if k in ("reduction", "variant", "threads", "weights_normalize")}
    with pytest.raises(exc, match=pattern):
        lbt.binary_cross_entropy(args["A"], args["E"], args["T"], args["W"], **kw)


def train(loss_fn, steps=50, D=32, lr=2.0, batch=64):
    """A linear XMC model (features → D → labels) trained by SGD on Bibtex; returns the losses."""
    X, T, V, _ = xmc_problem(n=batch * 8)
    g = torch.Generator().manual_seed(0)
    enc = (torch.randn(X.shape[1], D, generator=g) * 0.05).requires_grad_(True)
    E = (torch.randn(V, D, generator=g) * 0.05).requires_grad_(True)
    X, T = torch.from_numpy(X), torch.from_numpy(T).long()
    losses = []
    for step in range(steps):
        rows = slice((step * batch) % X.shape[0], (step * batch) % X.shape[0] + batch)
        loss = loss_fn(X[rows] @ enc, E, T[rows])
        enc.grad = E.grad = None
        loss.backward()
        with torch.no_grad():
            enc -= lr * enc.grad
            E -= lr * E.grad
        losses.append(loss.item())
    return np.array(losses)


def test_training_loop_matches_dense_bce_step_for_step():
    ours = train(lambda A, E, T: lbt.binary_cross_entropy(A, E, T, threads=2))
    dense = train(lambda A, E, T: dense_loss(A, E, T, None, "mean"))
    assert ours[-1] < 0.5 * ours[0], "the loop should learn"
    np.testing.assert_allclose(ours, dense, rtol=1e-5, atol=0)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_gradients_match_finite_differences_of_the_float64_loss(reduction):
    from conftest import directional_fd, reference
    c = make_case(37, 301, 16, 3, True, reduction, 11)
    A, E, T, W = leaves(c, torch.float32)
    # conftest.reference is lobench's contract (Σ w·l / Σ w for "mean"): weights_normalize="sum_w".
    lbt.binary_cross_entropy(A, E, T, W, reduction=reduction,
                             weights_normalize="sum_w" if reduction == "mean" else None).backward()
    rng = np.random.default_rng(0)
    for name, grad in [("A", A.grad), ("E", E.grad), ("weights", W.grad)]:
        x0 = c[name]
        u = rng.standard_normal(x0.shape)

        def loss_of(x, name=name):
            args = dict(c)
            args[name] = x
            return reference(**args)["loss"]
        fd = directional_fd(loss_of, x0, u)
        # The accuracy rule for gradients (relative L2 error <= 1e-5) bounds the directional error by
        # Cauchy-Schwarz: |u.(g - g*)| <= |u| |g - g*| <= 1e-5 |u| |g*|. (A floor on |fd| instead made
        # the test flip with the float32 summation order when u.g* happened to be small.)
        g = np.asarray(grad.numpy(), np.float64)
        assert abs(float(np.sum(g * u)) - fd) <= 1e-5 * np.linalg.norm(u) * np.linalg.norm(g), name
