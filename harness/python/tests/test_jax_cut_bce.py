"""The chunked JAX peer's op (lobench.jax_cut_bce.cut_bce) against a float64 NumPy evaluation of lobench's contract
(docs/method.md#what-every-variant-computes) on ragged cases, with the project's accuracy rules (loss ≤ 1e-6 relative, dA and dE
≤ 1e-5 relative L2), a finite-difference check of its custom backward in float64, and the absence of any
[P, V]-sized buffer in its forward and backward."""
import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from lobench.jax_cut_bce import cut_bce, unique_valid_targets  # noqa: E402


def reference(A, E, T, w):
    """float64, dense: the contract as written."""
    A, E, w = A.astype(np.float64), E.astype(np.float64), w.astype(np.float64)
    P, V = A.shape[0], E.shape[0]
    y = np.zeros((P, V))
    for p in range(P):
        for t in T[p]:
            if 0 <= t < V:
                y[p, t] = 1.0
    x = A @ E.T
    element = np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x))) - y * x
    total = w.sum()
    if total == 0:
        return 0.0, np.zeros_like(A), np.zeros_like(E)
    loss = float((w * element.mean(axis=1)).sum() / total)
    g = (w[:, None] / (V * total)) * (1 / (1 + np.exp(-x)) - y)
    return loss, g @ E, g.T @ A


def ragged_case(P, V, D, L, seed, weighted=True, all_zero_weights=False):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((P, D)).astype(np.float32)
    E = rng.standard_normal((V, D)).astype(np.float32)
    T = rng.integers(0, V, size=(P, L)).astype(np.int32)
    T[rng.random((P, L)) < 0.2] = -1                   # padding, both kinds
    T[rng.random((P, L)) < 0.1] = V
    T[rng.random((P, L)) < 0.05] = V + 7
    if L > 1:
        T[1::3, 1] = T[1::3, 0]                          # duplicates (a padding id repeated, too)
    T[0, :] = -1                                         # an all-padding row
    w = rng.random(P).astype(np.float32) if weighted else np.ones(P, np.float32)
    if weighted:
        w[2::5] = 0                                      # zero weights
    if all_zero_weights:
        w[:] = 0
    return A, E, T, w


def rel(a, b):
    return float(np.linalg.norm(np.asarray(a, np.float64) - b) / max(np.linalg.norm(b), 1e-300))


CASES = [  # (P, V, D, L, block_v, weighted)
    (37, 1001, 16, 5, 256, True),    # V not a multiple of the block, P odd
    (13, 100, 8, 3, 256, True),      # V below one block
    (20, 777, 12, 1, 100, False),    # L = 1, unweighted
    (9, 512, 32, 8, 128, True),      # V a multiple of the block
]


@pytest.mark.parametrize("P,V,D,L,block_v,weighted", CASES)
def test_matches_float64_reference(P, V, D, L, block_v, weighted):
    A, E, T, w = ragged_case(P, V, D, L, seed=P + V, weighted=weighted)
    loss_ref, dA_ref, dE_ref = reference(A, E, T, w)
    step = jax.jit(jax.value_and_grad(lambda a, e: cut_bce(a, e, jnp.asarray(T), jnp.asarray(w), block_v),
                                      argnums=(0, 1)))
    loss, (dA, dE) = step(jnp.asarray(A), jnp.asarray(E))
    assert abs(float(loss) - loss_ref) / abs(loss_ref) <= 1e-6
    assert rel(dA, dA_ref) <= 1e-5
    assert rel(dE, dE_ref) <= 1e-5


def test_zero_total_weight_gives_zero_loss_and_gradients():
    A, E, T, w = ragged_case(11, 300, 8, 4, seed=3, all_zero_weights=True)
    loss, grads = jax.value_and_grad(lambda a, e, ww: cut_bce(a, e, jnp.asarray(T), ww, 64), argnums=(0, 1, 2))(
        jnp.asarray(A), jnp.asarray(E), jnp.asarray(w))
    assert float(loss) == 0.0
    for g in grads:
        assert np.all(np.asarray(g) == 0) and np.all(np.isfinite(np.asarray(g)))


def test_unique_valid_targets_counts_a_repeated_id_once_and_ignores_padding():
    T = jnp.asarray([[3, 3, -1, 5, 10], [10, -1, -1, 0, 0]], dtype=jnp.int32)
    keep = np.asarray(unique_valid_targets(T, 10))
    assert keep.tolist() == [[True, False, False, True, False], [False, False, False, True, False]]


def test_custom_backward_matches_finite_differences():
    """Central differences of the float64 loss along random directions of A, E and w against the custom
    VJP's directional derivative."""
    with jax.enable_x64(True):
        A, E, T, w = ragged_case(10, 203, 6, 4, seed=7)
        A, E, w = (jnp.asarray(x, dtype=jnp.float64) for x in (A, E, w))
        Tj = jnp.asarray(T)
        f = lambda a, e, ww: cut_bce(a, e, Tj, ww, 64)  # noqa: E731
        grads = jax.grad(f, argnums=(0, 1, 2))(A, E, w)
        rng = np.random.default_rng(11)
        h = 1e-5
        for i, x in enumerate((A, E, w)):
            u = jnp.asarray(rng.standard_normal(x.shape))
            args_plus = [A, E, w]
            args_minus = [A, E, w]
            args_plus[i] = x + h * u
            args_minus[i] = x - h * u
            fd = (float(f(*args_plus)) - float(f(*args_minus))) / (2 * h)
            analytic = float(jnp.vdot(grads[i], u))
            assert abs(fd - analytic) <= 1e-7 * max(1.0, abs(analytic)), (i, fd, analytic)


def _largest_buffer(jaxpr):
    """Elements of the largest value any equation (nested ones included) produces."""
    largest = 0
    for eqn in jaxpr.eqns:
        for v in eqn.outvars:
            largest = max(largest, int(np.prod(getattr(v.aval, "shape", ()), dtype=np.int64)))
        for p in eqn.params.values():
            inner = getattr(p, "jaxpr", None)
            if inner is not None:
                largest = max(largest, _largest_buffer(getattr(inner, "jaxpr", inner)))
    return largest


def test_no_buffer_of_p_by_v_in_forward_or_backward():
    P, V, D, L, block_v = 256, 4000, 8, 4, 256   # a block's logits (P·block_v) outsize E (V·D)
    A, E, T, w = ragged_case(P, V, D, L, seed=5)
    Tj, wj = jnp.asarray(T), jnp.asarray(w)

    def largest(loss_fn):
        closed = jax.make_jaxpr(jax.value_and_grad(loss_fn, argnums=(0, 1)))(jnp.asarray(A), jnp.asarray(E))
        return _largest_buffer(closed.jaxpr)

    def dense(a, e):  # the walk must see a [P, V] buffer where there is one
        x = a @ e.T
        return jnp.mean(jnp.maximum(x, 0) + jnp.log1p(jnp.exp(-jnp.abs(x))))

    assert largest(dense) >= P * V
    chunked = largest(lambda a, e: cut_bce(a, e, Tj, wj, block_v))
    assert chunked >= P * block_v            # the block's logits are seen: the walk reaches the scans
    assert chunked < P * V // 4, chunked     # nothing near [P, V]
