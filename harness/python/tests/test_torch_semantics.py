"""PyTorch's documented semantics of F.binary_cross_entropy_with_logits, held by
lobench.torch.binary_cross_entropy: weighted mean Σ w·l / (P·V), pos_weight, float64 / bfloat16 /
float16 inputs, empty batches, negative weights, NaN and inf propagation, no_grad forward,
double backward (gradcheck / gradgradcheck in float64, hessian), the nn.Module wrapper, devices."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed for this interpreter")
import torch.nn.functional as F  # noqa: E402

import lobench  # noqa: E402
import lobench.nn  # noqa: E402
import lobench.torch as lbt  # noqa: E402
from conftest import make_case, multi_hot, rel  # noqa: E402


def ragged(P=29, V=203, D=7, L=4, seed=0, dtype=torch.float64, weights="positive"):
    """A, E, ids (padding -1 and V, duplicates), weights; V and P not multiples of any block."""
    c = make_case(P, V, D, L, True, "mean", seed)
    A = torch.from_numpy(c["A"]).to(dtype).requires_grad_(True)
    E = torch.from_numpy(c["E"]).to(dtype).requires_grad_(True)
    T = torch.from_numpy(c["targets"]).long()
    W = torch.from_numpy(c["weights"]).to(dtype)
    if weights == "signed":
        W = W * torch.from_numpy(np.where(np.random.default_rng(seed).random(P) < 0.4, -1.0, 1.0)).to(dtype)
    return A, E, T, W.requires_grad_(True)


def torch_dense(A, E, T, W=None, reduction="mean", pos_weight=None):
    """The PyTorch expression lobench replaces, with the weights applied as PyTorch broadcasts them."""
    Y = torch.from_numpy(multi_hot(T.numpy(), E.shape[0])).to(A.dtype)
    X = A @ E.T
    if pos_weight is None:
        per = F.binary_cross_entropy_with_logits(X, Y, reduction="none")
    else:  # torch's op has no pos_weight gradient: its documented formula, written with logsigmoid
        per = -(pos_weight * Y * F.logsigmoid(X) + (1 - Y) * F.logsigmoid(-X))
        with torch.no_grad():  # the value is PyTorch's own
            own = F.binary_cross_entropy_with_logits(X, Y, pos_weight=pos_weight.detach(), reduction="none")
            assert rel(own.numpy(), per.numpy()) <= 1e-12
    if W is not None:
        per = per * W[:, None]
    return per.mean() if reduction == "mean" else per.sum()


def grads_of(loss, *xs):
    return torch.autograd.grad(loss, [x for x in xs if x is not None and x.requires_grad])


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("weights", [None, "positive", "signed"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_weighted_reductions_are_pytorchs(reduction, weights, dtype):
    A, E, T, W = ragged(dtype=dtype, weights=weights or "positive")
    W = None if weights is None else W
    ours = lbt.binary_cross_entropy(A, E, T, W, reduction=reduction, threads=2)
    ref = torch_dense(A.double(), E.double(), T, None if W is None else W.double(), reduction)
    tol = 1e-6 if dtype == torch.float32 else 1e-12
    assert ours.dtype == dtype
    assert abs(ours.item() - ref.item()) <= tol * max(1.0, abs(ref.item()))
    if W is not None:  # PyTorch's own weight= argument gives the same value (it has no weight gradient)
        Y = torch.from_numpy(multi_hot(T.numpy(), E.shape[0])).double()
        direct = F.binary_cross_entropy_with_logits(A.double() @ E.double().T, Y, weight=W.detach().double()[:, None],
                                                    reduction=reduction)
        assert abs(ours.item() - direct.item()) <= tol * max(1.0, abs(direct.item()))
    for g, r in zip(grads_of(ours, A, E, W), grads_of(ref, A, E, W)):
        assert rel(g.double().numpy(), r.detach().numpy()) <= (1e-5 if dtype == torch.float32 else 1e-12)


def test_sum_w_normalisation_only_when_asked():
    A, E, T, W = ragged()
    pt = lbt.binary_cross_entropy(A, E, T, W)
    ours = lbt.binary_cross_entropy(A, E, T, W, weights_normalize="sum_w")
    P, V = A.shape[0], E.shape[0]
    assert abs(ours.item() - pt.item() * P / W.sum().item()) <= 1e-12 * ours.item()
    zero = lbt.binary_cross_entropy(A, E, T, torch.zeros_like(W), weights_normalize="sum_w")
    assert zero.item() == 0.0  # lobench's convention: 0 when Σ w = 0
    assert lbt.binary_cross_entropy(A, E, T, torch.zeros_like(W)).item() == 0.0


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_pos_weight_vector_and_scalar(reduction):
    A, E, T, W = ragged(dtype=torch.float64)
    V = E.shape[0]
    pw = (torch.rand(V, generator=torch.Generator().manual_seed(1), dtype=torch.float64) * 3).requires_grad_(True)
    ours = lbt.binary_cross_entropy(A, E, T, W, reduction=reduction, pos_weight=pw)
    ref = torch_dense(A, E, T, W, reduction, pos_weight=pw)
    assert abs(ours.item() - ref.item()) <= 1e-12 * abs(ref.item())
    for g, r in zip(grads_of(ours, A, E, W, pw), grads_of(ref, A, E, W, pw)):
        assert rel(g.numpy(), r.numpy()) <= 1e-11
    s = torch.tensor(2.5, dtype=torch.float64)
    ours = lbt.binary_cross_entropy(A, E, T, pos_weight=s, reduction=reduction)
    ref = torch_dense(A, E, T, None, reduction, pos_weight=s.expand(V))
    assert abs(ours.item() - ref.item()) <= 1e-12 * abs(ref.item())


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_inputs_are_computed_in_float32(dtype):
    A, E, T, W = ragged(dtype=torch.float32)
    a = A.detach().to(dtype).requires_grad_(True)
    e = E.detach().to(dtype).requires_grad_(True)
    ours = lbt.binary_cross_entropy(a, e, T, W.detach().to(dtype))
    ours.backward()
    assert ours.dtype == dtype and a.grad.dtype == dtype and e.grad.dtype == dtype
    # The exact loss of the rounded inputs, rounded once to dtype.
    ref = torch_dense(a.detach().double(), e.detach().double(), T, W.detach().to(dtype).double())
    assert ours.item() == pytest.approx(ref.to(dtype).item(), rel=2 ** -7)
    a64, e64 = a.detach().double().requires_grad_(True), e.detach().double().requires_grad_(True)
    torch_dense(a64, e64, T, W.detach().to(dtype).double()).backward()
    assert rel(a.grad.double().numpy(), a64.grad.numpy()) <= 2 ** -7  # one rounding of each element
    assert rel(e.grad.double().numpy(), e64.grad.numpy()) <= 2 ** -7


@pytest.mark.parametrize("reduction, expected", [("mean", "nan"), ("sum", 0.0)])
def test_empty_batch(reduction, expected):
    A = torch.zeros(0, 5, requires_grad=True)
    E = torch.randn(11, 5, requires_grad=True)
    T = torch.zeros(0, 2, dtype=torch.long)
    ours = lbt.binary_cross_entropy(A, E, T, reduction=reduction)
    ref = F.binary_cross_entropy_with_logits(A @ E.T, torch.zeros(0, 11), reduction=reduction)
    if expected == "nan":
        assert torch.isnan(ours) and torch.isnan(ref)
    else:
        assert ours.item() == expected == ref.item()
    ours.backward()
    assert A.grad.shape == (0, 5) and torch.equal(E.grad, torch.zeros_like(E))


def test_no_targets_L_zero_is_the_background_loss():
    A, E, _, _ = ragged()
    T = torch.zeros(A.shape[0], 0, dtype=torch.long)
    ours = lbt.binary_cross_entropy(A, E, T)
    ref = F.binary_cross_entropy_with_logits(A @ E.T, torch.zeros(A.shape[0], E.shape[0], dtype=A.dtype))
    assert abs(ours.item() - ref.item()) <= 1e-12 * ref.item()
    A32, E32 = A.detach().float().requires_grad_(True), E.detach().float().requires_grad_(True)
    lbt.binary_cross_entropy(A32, E32, T).backward()  # the C++ step with an all-padding column
    A.grad = None
    ref.backward()
    assert rel(A32.grad.numpy(), A.grad.numpy()) <= 1e-5


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_inputs_propagate_as_in_pytorch(bad):
    A, E, T, W = ragged(dtype=torch.float32)
    a = A.detach().clone()
    a[3, 2] = bad
    a.requires_grad_(True)
    ours = lbt.binary_cross_entropy(a, E, T, W)
    ref = torch_dense(a, E, T, W)
    assert (torch.isnan(ours).item() and torch.isnan(ref).item()) or ours.item() == ref.item()
    gA, gE = grads_of(ours, a, E)
    rA, rE = grads_of(ref, a, E)
    assert torch.equal(torch.isnan(gA), torch.isnan(rA)) and torch.equal(torch.isnan(gE), torch.isnan(rE))


def test_no_grad_forward_computes_the_loss_alone():
    A, E, T, W = ragged(dtype=torch.float32)
    with torch.no_grad():
        ours = lbt.binary_cross_entropy(A, E, T, W)
    assert ours.grad_fn is None
    ref = torch_dense(A.double(), E.double(), T, W.double())
    assert abs(ours.item() - ref.item()) <= 1e-6 * ref.item()
    # No input requiring grad: the same forward-only path.
    ours2 = lbt.binary_cross_entropy(A.detach(), E.detach(), T, W.detach())
    assert ours2.item() == ours.item() and not ours2.requires_grad


@pytest.mark.parametrize("reduction", ["mean", "sum", "per_position"])
def test_no_grad_loss_alone_is_pytorchs_with_padding_repeats_and_any_weights(reduction):
    """The forward-only path (one softplus pass per tile, minus the targets' logits, each distinct id once)
    against PyTorch's dense BCE: padding (-1 and V), repeated ids, signed weights, every reduction."""
    A, E, T, W = ragged(dtype=torch.float32, weights="signed")
    T = T.clone()
    T[0, :] = -1
    T[1, 0], T[1, 1] = E.shape[0], T[1, 2]  # padding past V; a repeated id counts once
    with torch.no_grad():
        ours = lbt.binary_cross_entropy(A, E, T, W, reduction=reduction)
        if reduction == "per_position":
            Y = torch.from_numpy(multi_hot(T.numpy(), E.shape[0])).double()
            ref = (F.binary_cross_entropy_with_logits(A.double() @ E.double().T, Y, reduction="none").sum(1)
                   * W.double())
            assert rel(ours.double().numpy(), ref.numpy()) <= 1e-6
        else:
            ref = torch_dense(A.double(), E.double(), T, W.double(), reduction)
            assert abs(ours.item() - ref.item()) <= 1e-6 * max(1.0, abs(ref.item()))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_no_grad_non_finite_inputs_give_pytorchs_value(bad):
    A, E, T, W = ragged(dtype=torch.float32)
    for i, j in ((3, 2), (0, 0)):  # a row with targets and one without
        a = A.detach().clone()
        a[i, j] = bad
        with torch.no_grad():
            ours = lbt.binary_cross_entropy(a, E.detach(), T, W.detach())
            ref = torch_dense(a, E.detach(), T, W.detach())
        assert (torch.isnan(ours).item() and torch.isnan(ref).item()) or ours.item() == ref.item(), (bad, i, ours, ref)


@pytest.mark.parametrize("reduction", ["mean", "sum", "per_position"])
@pytest.mark.parametrize("weights_normalize", [None, "sum_w"])
def test_gradcheck_and_gradgradcheck_in_float64(reduction, weights_normalize):
    if weights_normalize and reduction != "mean":
        pytest.skip("sum_w applies to the mean only")
    A, E, T, W = ragged(P=5, V=13, D=3, L=3, dtype=torch.float64, weights="signed")
    if weights_normalize:
        W = W.detach().abs().requires_grad_(True)
    pw = torch.linspace(0.5, 2.0, 13, dtype=torch.float64, requires_grad=True)

    def f(a, e, w, p):
        return lbt.binary_cross_entropy(a, e, T, w, reduction=reduction, pos_weight=p,
                                        weights_normalize=weights_normalize)
    assert torch.autograd.gradcheck(f, (A, E, W, pw))
    assert torch.autograd.gradgradcheck(f, (A, E, W, pw))

    def g(a, e, w):  # the C++-eligible configuration (no pos_weight)
        return lbt.binary_cross_entropy(a, e, T, w, reduction=reduction, weights_normalize=weights_normalize)
    assert torch.autograd.gradcheck(g, (A, E, W))
    assert torch.autograd.gradgradcheck(g, (A, E, W))


def test_hessian_is_the_dense_hessian_never_zero():
    A, E, T, _ = ragged(P=4, V=9, D=3, L=2, dtype=torch.float32)
    A, E = A.detach(), E.detach()
    ours = torch.autograd.functional.hessian(lambda a: lbt.binary_cross_entropy(a, E, T), A)
    ref = torch.autograd.functional.hessian(lambda a: torch_dense(a, E, T), A)
    assert ours.abs().max() > 0
    assert rel(ours.numpy(), ref.numpy()) <= 1e-5


def test_per_position_reduction_and_backward():
    A, E, T, W = ragged(dtype=torch.float64)
    per = lbt.binary_cross_entropy(A, E, T, W, reduction="per_position")
    Y = torch.from_numpy(multi_hot(T.numpy(), E.shape[0])).double()
    ref = F.binary_cross_entropy_with_logits(A @ E.T, Y, reduction="none").sum(1) * W
    assert per.shape == ref.shape and rel(per.detach().numpy(), ref.detach().numpy()) <= 1e-12
    u = torch.randn(per.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    for g, r in zip(grads_of((per * u).sum(), A, E, W), grads_of((ref * u).sum(), A, E, W)):
        assert rel(g.numpy(), r.numpy()) <= 1e-11


def test_leading_shapes_and_metrics():
    A, E, T, W = ragged(P=24, dtype=torch.float32)
    a3 = A.detach().reshape(2, 3, 4, -1).requires_grad_(True)
    loss, counts = lbt.binary_cross_entropy(a3, E, T.reshape(2, 3, 4, -1), W.detach().reshape(2, 3, 4),
                                            return_metrics=True)
    flat = lbt.binary_cross_entropy(A, E, T, W)
    assert abs(loss.item() - flat.item()) <= 1e-6 * flat.item()
    assert counts.shape == (2, 3, 4, 4) and (counts.sum(-1) == E.shape[0]).all()


def test_module_wrapper():
    A, E, T, W = ragged(dtype=torch.float64)
    pw = torch.full((E.shape[0],), 1.5, dtype=torch.float64)
    m = lobench.nn.CutBCEWithLogitsLoss(reduction="sum", pos_weight=pw)
    assert "pos_weight" in m.state_dict()
    ours = m(A, E, T, W)
    ref = torch_dense(A, E, T, W, "sum", pos_weight=pw)
    assert abs(ours.item() - ref.item()) <= 1e-12 * abs(ref.item())
    assert isinstance(m, torch.nn.Module) and "sum" in repr(m)


def test_tensors_on_another_device_are_refused_with_the_reason():
    A, E, T, W = ragged(dtype=torch.float32)
    meta = A.detach().to("meta")
    with pytest.raises(ValueError, match="argument 'A' is on meta: lobench.torch computes on the CPU"):
        lbt.binary_cross_entropy(meta, E, T)


def test_large_ids_are_padding_not_wrapped():
    A, E, T, W = ragged(dtype=torch.float64)
    T2 = T.clone()
    T2[T2 < 0] = 2 ** 40  # int64 ids beyond int32 are padding, as -1 is
    a = lbt.binary_cross_entropy(A, E, T, W)
    b = lbt.binary_cross_entropy(A, E, T2, W)
    assert a.item() == b.item()
