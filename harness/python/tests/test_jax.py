"""lobench.jax.cut_binary_cross_entropy against JAX's dense BCE and RecML's semantics, every variant."""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="jax is not installed for this interpreter (scripts/install_deps.sh "
                                         "installs it from PyPI for python3)")
import jax.numpy as jnp  # noqa: E402

import lobench  # noqa: E402
from lobench.jax import cut_binary_cross_entropy  # noqa: E402
from conftest import CASE_IDS, CASES, GRAD_TOL, LOSS_TOL, make_case, multi_hot, reference, rel, xmc_problem  # noqa: E402

EPS = 1e-8


def dense_cut_bce(A, E, Y, W):
    """RecML's definition over dense [P, V] logits: per-position mean over V, Σ w·l / (Σ w + 1e-8)."""
    X = A @ E.T
    per = jnp.mean(jnp.maximum(X, 0) - X * Y + jnp.log1p(jnp.exp(-jnp.abs(X))), axis=-1)
    if W is None:
        return jnp.sum(per) / (per.size + EPS)
    return jnp.sum(per * W) / (jnp.sum(W) + EPS)


def variant_case_grid():
    """Every variant on every mean case; the fast tier keeps a diagonal of the grid, so that each variant and
    each case is checked once there (the NumPy front end, test_numpy.py, runs the whole grid fast)."""
    cases = [(c, i) for c, i in zip(CASES, CASE_IDS) if c[5] == "mean"]
    variants = lobench.variants()
    grid = []
    for k, (c, cid) in enumerate(cases):
        for j, v in enumerate(variants):
            fast = j == k % len(variants) or k == j % len(cases)
            grid.append(pytest.param(v, c, id=f"{cid}-{v}", marks=() if fast else pytest.mark.slow))
    return grid


@pytest.mark.parametrize("variant, case", variant_case_grid())
def test_matches_dense_bce_and_the_float64_reference(variant, case):
    c = make_case(*case)
    A, E, T, W = c["A"], c["E"], c["targets"], c["weights"]
    if W is None:
        f = lambda a, e: cut_binary_cross_entropy(a, e, T, variant=variant, threads=2)  # noqa: E731
        loss, (gA, gE) = jax.value_and_grad(f, argnums=(0, 1))(A, E)
    else:
        f = lambda a, e, w: cut_binary_cross_entropy(a, e, T, w, variant=variant, threads=2)  # noqa: E731
        loss, (gA, gE, gW) = jax.value_and_grad(f, argnums=(0, 1, 2))(A, E, W)
    Y = multi_hot(T, E.shape[0]).astype(np.float32)
    if W is None:
        rloss, (rA, rE) = jax.value_and_grad(lambda a, e: dense_cut_bce(a, e, Y, None), argnums=(0, 1))(A, E)
    else:
        rloss, (rA, rE, rW) = jax.value_and_grad(lambda a, e, w: dense_cut_bce(a, e, Y, w), argnums=(0, 1, 2))(A, E, W)
        assert rel(gW, rW) <= GRAD_TOL
    assert abs(float(loss) - float(rloss)) <= LOSS_TOL * abs(float(rloss))
    assert rel(gA, rA) <= GRAD_TOL and rel(gE, rE) <= GRAD_TOL
    # The float64 oracle (lobench's Σ w·l / Σ w; RecML's EPS moves it by < 1e-8 relative here).
    ref = reference(**c)
    sw = len(A) if W is None else float(W.astype(np.float64).sum())
    c_eps = sw / (sw + EPS)
    assert abs(float(loss) - ref["loss"] * c_eps) <= LOSS_TOL * abs(ref["loss"])
    assert rel(gA, ref["dA"] * c_eps) <= GRAD_TOL and rel(gE, ref["dE"] * c_eps) <= GRAD_TOL


def test_recml_signature_metrics_jit_and_wide_padding():
    rng = np.random.default_rng(5)
    B, N, D, V, L = 2, 9, 12, 333, 3
    A = rng.standard_normal((B, N, D), dtype=np.float32)
    E = rng.standard_normal((V, D), dtype=np.float32)
    T = rng.integers(-1, V + 1, (B, N, L)).astype(np.int32)
    T[..., 1] = T[..., 0]
    W = (rng.random((B, N)) * (rng.random((B, N)) > 0.3)).astype(np.float32)
    loss, tp, fp, fn, tn = jax.jit(lambda a, e, t, w: cut_binary_cross_entropy(a, e, t, w, return_metrics=True))(
        A, E, T, W)
    Y = multi_hot(T.reshape(-1, L), V)
    X = A.reshape(-1, D).astype(np.float64) @ E.T.astype(np.float64)
    w = W.reshape(-1).astype(np.float64)
    pred = X > 0
    want = [((pred & (Y > 0)).sum(1) * w).sum(), ((pred & (Y == 0)).sum(1) * w).sum(),
            ((~pred & (Y > 0)).sum(1) * w).sum(), ((~pred & (Y == 0)).sum(1) * w).sum()]
    np.testing.assert_allclose([tp, fp, fn, tn], want, rtol=1e-6)
    assert abs(float(loss) - float(dense_cut_bce(A, E, Y.reshape(B, N, V), W))) <= LOSS_TOL * float(loss)
    # Wide int64 ids outside [0, V) stay padding (they would wrap into range if narrowed blindly).
    T64 = T.astype(np.int64)
    T64[T64 == -1] = 2**32
    T64[T64 == V] = 2**33 + 5
    np.testing.assert_array_equal(cut_binary_cross_entropy(A, E, T64, W), cut_binary_cross_entropy(A, E, T, W))
    # All weights zero: RecML's loss is 0 / (0 + 1e-8) = 0, and so are the gradients.
    z, g = jax.value_and_grad(lambda a: cut_binary_cross_entropy(a, E, T, np.zeros((B, N), np.float32)))(A)
    assert float(z) == 0.0 and not np.any(np.asarray(g))


@pytest.mark.parametrize("call, exc, pattern", [
    (lambda A, E, T: cut_binary_cross_entropy(A[0, 0], E, T), ValueError, r"argument 'activations' must have rank 3"),
    (lambda A, E, T: cut_binary_cross_entropy(A, E[:, :3], T), ValueError, r"argument 'embeddings' must have shape"),
    (lambda A, E, T: cut_binary_cross_entropy(A, E, T[:, :2]), ValueError, r"argument 'targets' must have shape"),
    (lambda A, E, T: cut_binary_cross_entropy(A, E, T.astype(np.float32)), TypeError, r"argument 'targets' must be integer"),
    (lambda A, E, T: cut_binary_cross_entropy(A, E, T, np.ones((2, 4), np.float32)), ValueError, r"argument 'weights'"),
    (lambda A, E, T: cut_binary_cross_entropy(A.astype(np.int32), E, T), TypeError, r"argument 'activations' must be floating"),
])
def test_bad_inputs_raise_naming_the_argument(call, exc, pattern):
    A = np.zeros((2, 3, 8), np.float32)
    E = np.zeros((10, 8), np.float32)
    T = np.zeros((2, 3, 2), np.int32)
    with pytest.raises(exc, match=pattern):
        call(A, E, T)


def test_typos_are_refused_before_anything_is_traced():
    A = np.zeros((2, 3, 8), np.float32)
    E, T = np.zeros((10, 8), np.float32), np.zeros((2, 3, 2), np.int32)
    with pytest.raises(ValueError, match=r"argument 'variant' must be one of"):
        jax.jit(lambda a: cut_binary_cross_entropy(a, E, T, variant="fusd"))(A)
    with pytest.raises(ValueError, match=r"argument 'threads' must be in \[1, 1024\]"):
        cut_binary_cross_entropy(A, E, T, threads=0)
    with pytest.raises(ValueError, match=r"rank 3 \[B, N, D\] or 4"):
        cut_binary_cross_entropy(np.zeros((1, 2, 3, 4, 8), np.float32), E, T)


def train(loss_fn, steps=50, D=32, lr=2.0, batch=64):
    """The same linear XMC model and SGD loop as the PyTorch test, in JAX; returns the losses."""
    X, T, V, _ = xmc_problem(n=batch * 8)
    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    params = (jax.random.normal(k1, (X.shape[1], D)) * 0.05, jax.random.normal(k2, (V, D)) * 0.05)

    @jax.jit
    def step(params, x, t):
        loss, g = jax.value_and_grad(lambda p: loss_fn(x @ p[0], p[1], t))(params)
        return loss, tuple(p - lr * gp for p, gp in zip(params, g))

    losses = []
    for s in range(steps):
        rows = slice((s * batch) % X.shape[0], (s * batch) % X.shape[0] + batch)
        loss, params = step(params, X[rows], T[rows])
        losses.append(float(loss))
    return np.array(losses)


def test_training_loop_matches_dense_bce_step_for_step():
    X, T, V, _ = xmc_problem(n=64)
    ours = train(lambda A, E, t: cut_binary_cross_entropy(A, E, t, threads=2))
    dense = train(lambda A, E, t: dense_cut_bce(A, E, jax.nn.one_hot(t, V).max(axis=1), None))
    assert ours[-1] < 0.5 * ours[0], "the loop should learn"
    np.testing.assert_allclose(ours, dense, rtol=1e-5, atol=0)


def test_gradients_match_finite_differences_of_the_float64_loss():
    from conftest import directional_fd
    c = make_case(37, 301, 16, 3, True, "mean", 12)
    A, E, T, W = c["A"], c["E"], c["targets"], c["weights"]
    grads = jax.grad(lambda a, e, w: cut_binary_cross_entropy(a, e, T, w), argnums=(0, 1, 2))(A, E, W)
    rng = np.random.default_rng(1)
    for i, name in enumerate(["A", "E", "weights"]):
        u = rng.standard_normal(c[name].shape)

        def loss_of(x, name=name):  # RecML's normalisation on the float64 oracle
            args = dict(c)
            args[name] = x
            sw = float(np.sum(np.asarray(args["weights"], np.float64)))
            return reference(**args)["loss"] * sw / (sw + EPS)
        fd = directional_fd(loss_of, c[name], u)
        # The accuracy rule for gradients (relative L2 error <= 1e-5) bounds the directional error by
        # Cauchy-Schwarz: |u.(g - g*)| <= |u| |g - g*| <= 1e-5 |u| |g*|. (A floor on |fd| instead made
        # the test flip with the float32 summation order when u.g* happened to be small.)
        g = np.asarray(np.asarray(grads[i], np.float64), np.float64)
        assert abs(float(np.sum(g * u)) - fd) <= 1e-5 * np.linalg.norm(u) * np.linalg.norm(g), name
