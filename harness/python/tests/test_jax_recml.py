"""RecML's documented behaviour of cut_binary_cross_entropy, held by lobench.jax (written from RecML's
docstring and the notes in shared/notes/recml_cutbce.md, not from its tests): 4-D activations with
shared targets, per-position losses and metrics, metrics differentiable to the weights, padding and
duplicates, grad of grad, float64 under x64, NaN propagation, negative and integer weights, L = 0,
vmap, and a mesh run under shard_map."""
import os
import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
def enable_x64():  # a context manager in every JAX this suite meets
    return jax.enable_x64(True)

from lobench.jax import cut_binary_cross_entropy as cut  # noqa: E402
from conftest import multi_hot, rel  # noqa: E402

EPS = 1e-8


def dense_recml(A, E, T, W=None):
    """RecML's definition over dense logits: (loss, losses [...], tp, fp, fn, tn [...]) with
    losses = w·mean_v BCE, loss = Σ losses / (Σ w + 1e-8), counts × w."""
    V = E.shape[0]
    lead = A.shape[:-1]
    Tb = jnp.broadcast_to(T, lead + T.shape[-1:])
    Y = jnp.asarray(multi_hot(np.asarray(Tb).reshape(int(np.prod(lead)), Tb.shape[-1]), V)).reshape(lead + (V,)).astype(A.dtype)
    X = A @ E.T
    per = jnp.mean(jnp.maximum(X, 0) - X * Y + jnp.log1p(jnp.exp(-jnp.abs(X))), axis=-1)
    pred, pos = X > 0, Y > 0
    counts = [jnp.sum(pred & pos, -1), jnp.sum(pred & ~pos, -1), jnp.sum(~pred & pos, -1), jnp.sum(~pred & ~pos, -1)]
    counts = [c.astype(per.dtype) for c in counts]
    if W is None:
        return (jnp.sum(per) / (per.size + EPS), per, *counts)
    return (jnp.sum(per * W) / (jnp.sum(W) + EPS), per * W, *[c * W for c in counts])


def case(shape=(2, 3, 5), D=6, V=37, L=3, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal(shape + (D,)).astype(dtype)
    E = rng.standard_normal((V, D)).astype(dtype)
    T = rng.integers(-1, V + 1, shape + (L,)).astype(np.int32)  # padding as -1 and V
    if L > 1:
        T[..., 1] = T[..., 0]  # duplicates
    W = (rng.random(shape) * (rng.random(shape) > 0.25)).astype(dtype)  # zero weights
    return A, E, T, W


@pytest.mark.parametrize("shared", [False, True])
def test_four_d_activations(shared):
    A, E, T, W = case(shape=(3, 2, 5))
    T3 = T[0] if shared else T
    loss, losses = cut(A, E, T3, W, return_per_target_losses=True)
    r = dense_recml(A, E, T3, W)
    assert losses.shape == (3, 2, 5)
    assert abs(float(loss) - float(r[0])) <= 1e-6 * float(r[0])
    assert rel(losses, r[1]) <= 1e-6
    g = jax.grad(lambda a, e: cut(a, e, T3, W), argnums=(0, 1))(A, E)
    rg = jax.grad(lambda a, e: dense_recml(a, e, T3, W)[0], argnums=(0, 1))(A, E)
    assert rel(g[0], rg[0]) <= 1e-5 and rel(g[1], rg[1]) <= 1e-5


def test_rank_five_is_refused():
    with pytest.raises(ValueError, match="rank 3"):
        cut(np.zeros((1, 1, 2, 3, 4), np.float32), np.zeros((5, 4), np.float32), np.zeros((1, 1, 2, 3, 1), np.int32))


@pytest.mark.parametrize("weighted", [False, True])
def test_per_position_losses_and_metrics(weighted):
    A, E, T, W = case()
    W = W if weighted else None
    out = cut(A, E, T, W, return_metrics=True, return_per_target_losses=True, return_per_target_metrics=True)
    ref = dense_recml(A, E, T, W)
    assert len(out) == 6
    assert abs(float(out[0]) - float(ref[0])) <= 1e-6 * float(ref[0])
    assert rel(out[1], ref[1]) <= 1e-6
    for got, want in zip(out[2:], ref[2:]):
        assert got.shape == (2, 3, 5)
        np.testing.assert_allclose(got, want, rtol=1e-6)
    scalars = cut(A, E, T, W, return_metrics=True)
    assert len(scalars) == 5
    np.testing.assert_allclose([float(s) for s in scalars[1:]], [float(jnp.sum(m)) for m in ref[2:]], rtol=1e-6)


def test_metrics_and_losses_are_differentiable_as_in_recml():
    A, E, T, W = case()
    # d Σ tp / d w = the per-position TP count (the metrics are counts × w).
    g_tp = jax.grad(lambda w: cut(A, E, T, w, return_metrics=True)[1])(W)
    np.testing.assert_allclose(g_tp, dense_recml(A, E, T, None)[2], rtol=1e-6)
    # Counts carry no gradient to A, E.
    assert not np.any(np.asarray(jax.grad(lambda a: cut(a, E, T, W, return_metrics=True)[2])(A)))
    # Any cotangent on the per-position losses reaches A, E and W.
    u = np.random.default_rng(1).standard_normal(W.shape).astype(np.float32)

    def f(a, e, w):
        return jnp.sum(cut(a, e, T, w, return_per_target_losses=True)[1] * u)

    def ref(a, e, w):
        return jnp.sum(dense_recml(a, e, T, w)[1] * u)
    for got, want in zip(jax.grad(f, argnums=(0, 1, 2))(A, E, W), jax.grad(ref, argnums=(0, 1, 2))(A, E, W)):
        assert rel(got, want) <= 1e-5


def test_padding_duplicates_and_zero_logits():
    A, E, T, W = case(L=1)
    T2 = np.concatenate([T, T, np.full_like(T, -1), np.full_like(T, E.shape[0])], axis=-1)
    assert abs(float(cut(A, E, T2, W)) - float(cut(A, E, T, W))) <= 1e-6 * float(cut(A, E, T, W))
    zero = cut(np.zeros_like(A), E, T2)  # every logit 0: the loss is ln 2 whatever the targets
    assert abs(float(zero) - np.log(2)) <= 1e-6


def test_grad_of_grad_matches_the_dense_formula():
    A, E, T, W = case(shape=(2, 3), D=4, V=11)
    h = jax.hessian(lambda a: cut(a, E, T, W))(A)
    rh = jax.hessian(lambda a: dense_recml(a, E, T, W)[0])(A)
    assert float(jnp.max(jnp.abs(h))) > 0 and rel(h, rh) <= 1e-5
    gg = jax.grad(lambda e: jnp.sum(jax.grad(lambda a: cut(a, e, T, W))(A) ** 2))(E)
    rgg = jax.grad(lambda e: jnp.sum(jax.grad(lambda a: dense_recml(a, e, T, W)[0])(A) ** 2))(E)
    assert rel(gg, rgg) <= 1e-5


def test_float64_under_x64_is_float64_to_the_last_digits():
    with enable_x64():
        A, E, T, W = case(dtype=np.float64)
        loss, (gA, gE, gW) = jax.value_and_grad(lambda a, e, w: cut(a, e, T, w), argnums=(0, 1, 2))(A, E, W)
        r, (rA, rE, rW) = jax.value_and_grad(lambda a, e, w: dense_recml(a, e, T, w)[0], argnums=(0, 1, 2))(A, E, W)
        assert loss.dtype == jnp.float64 and gA.dtype == jnp.float64
        assert abs(float(loss) - float(r)) <= 1e-13 * float(r)
        assert rel(gA, rA) <= 1e-12 and rel(gE, rE) <= 1e-12 and rel(gW, rW) <= 1e-12


def test_nan_and_inf_propagate_without_raising():
    A, E, T, W = case()
    A[1, 2, 3] = np.nan
    loss, g = jax.value_and_grad(lambda a: cut(a, E, T, W))(A)
    assert np.isnan(float(loss))
    rg = jax.grad(lambda a: dense_recml(a, E, T, W)[0])(A)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(rg))
    E2 = E.copy()
    E2[0, 0] = np.inf
    assert not np.isfinite(float(cut(A * 0 + 1, E2, T, W)))


def test_negative_and_integer_weights():
    A, E, T, W = case()
    signed = W * np.where(np.random.default_rng(3).random(W.shape) < 0.4, -1, 1).astype(np.float32)
    for w in (signed, (W > 0).astype(np.int32)):
        loss, g = jax.value_and_grad(lambda a: cut(a, E, T, w))(A)
        r, rg = jax.value_and_grad(lambda a: dense_recml(a, E, T, w)[0])(A)
        assert abs(float(loss) - float(r)) <= 1e-5 * abs(float(r)) and rel(g, rg) <= 1e-5


def test_no_targets_L_zero():
    A, E, _, W = case()
    T = np.zeros(A.shape[:-1] + (0,), np.int32)
    loss, g = jax.value_and_grad(lambda a: cut(a, E, T, W))(A)
    r, rg = jax.value_and_grad(lambda a: dense_recml(a, E, T, W)[0])(A)
    assert abs(float(loss) - float(r)) <= 1e-6 * float(r) and rel(g, rg) <= 1e-5


def test_vmap_and_jit():
    A, E, T, W = case(shape=(4, 6))
    per_row = jax.jit(jax.vmap(lambda a, t, w: cut(a, E, t, w)))(A, T, W)
    want = [float(dense_recml(A[i], E, T[i], W[i])[0]) for i in range(4)]
    np.testing.assert_allclose(per_row, want, rtol=1e-6)
    g = jax.grad(lambda a: jnp.sum(jax.vmap(lambda x, t, w: cut(x, E, t, w))(a, T, W)))(A)
    rg = jax.grad(lambda a: sum(dense_recml(a[i], E, T[i], W[i])[0] for i in range(4)))(A)
    assert rel(g, rg) <= 1e-5


def test_block_v_does_not_change_the_result():
    A, E, T, W = case(V=37)
    a = cut(A, E, T, W)
    for bv in (1, 5, 36, 37, 1000):
        assert abs(float(cut(A, E, T, W, block_v=bv)) - float(a)) <= 1e-6 * float(a)


def test_embeddings_sharded_along_d_are_refused_with_the_reason():
    A, E, T, W = case()
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("data",))
    with pytest.raises(NotImplementedError, match="emb_spec.*along D"):
        cut(A, E, T, W, mesh=mesh, emb_spec=jax.sharding.PartitionSpec(None, "data"))


MESH_SCRIPT = r"""
import numpy as np, jax, jax.numpy as jnp
from jax.sharding import Mesh, PartitionSpec as PS, NamedSharding
from lobench.jax import cut_binary_cross_entropy as cut
assert len(jax.devices()) == 4
rng = np.random.default_rng(0)
A = rng.standard_normal((4, 6, 8)).astype(np.float32); E = rng.standard_normal((53, 8)).astype(np.float32)
T = rng.integers(-1, 54, (4, 6, 3)).astype(np.int32); W = rng.random((4, 6)).astype(np.float32)
mesh = Mesh(np.array(jax.devices()), ("data",))
A_s = jax.device_put(A, NamedSharding(mesh, PS("data")))
f = lambda a, e, w: cut(a, e, T, w, mesh=mesh, act_spec=PS("data"))
loss, g = jax.value_and_grad(f, argnums=(0, 1, 2))(A_s, E, W)
r, rg = jax.value_and_grad(lambda a, e, w: cut(a, e, T, w), argnums=(0, 1, 2))(A, E, W)
rel = lambda x, y: float(np.linalg.norm(np.asarray(x) - np.asarray(y)) / np.linalg.norm(np.asarray(y)))
assert abs(float(loss) - float(r)) <= 1e-6 * float(r), (loss, r)
assert all(rel(x, y) <= 1e-6 for x, y in zip(g, rg)), [rel(x, y) for x, y in zip(g, rg)]
# RecML's spellings: a 2-D mesh with D sharded over 'model' in act_spec, E replicated (P()).
mesh2 = Mesh(np.array(jax.devices()).reshape(2, 2), ("data", "model"))
l2 = cut(A, E, T, W, mesh=mesh2, act_spec=PS("data", None, "model"), emb_spec=PS())
l3 = cut(A, E, T, W, mesh=mesh2, act_spec=PS("data"))
assert abs(float(l2) - float(r)) <= 1e-6 * float(r) and abs(float(l3) - float(r)) <= 1e-6 * float(r)
# Jitted gradients on 2-D meshes (the C++ step's host callback hung here; the backward is now the
# blocked formula): tokens over 'data' with E vocabulary-sharded over 'model', and D-sharded A with
# a short or empty spec. Each must equal the unsharded jitted gradients.
ref = jax.jit(jax.grad(lambda a, e: cut(a, e, T, W), argnums=(0, 1)))(A, E)
E60 = np.concatenate([E, E[:7]])  # 60 rows: splits over 'model' = 4
ref60 = jax.jit(jax.grad(lambda a, e: cut(a, e, T, W), argnums=(0, 1)))(A, E60)
for shape, a_spec, e_spec, e in (((1, 4), PS("data", None, None), PS("model", None), E60),
                                 ((4, 1), PS("data", None, "model"), PS(), E),
                                 ((2, 2), PS("data"), None, E)):
    m = Mesh(np.array(jax.devices()).reshape(shape), ("data", "model"))
    gfn = jax.jit(jax.grad(lambda a, x: cut(a, x, T, W, mesh=m, act_spec=a_spec, emb_spec=e_spec), argnums=(0, 1)))
    got = gfn(jax.device_put(A, NamedSharding(m, a_spec)), jax.device_put(e, NamedSharding(m, e_spec or PS())))
    want = ref60 if e is E60 else ref
    assert all(rel(x, y) <= 1e-6 for x, y in zip(got, want)), (shape, [rel(x, y) for x, y in zip(got, want)])
print("mesh ok", len(g[0].sharding.device_set))
"""


def test_mesh_runs_per_shard_under_shard_map():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", MESH_SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "mesh ok" in out.stdout


def test_bfloat16_inputs_are_computed_in_float32():
    A, E, T, W = case()
    a, e = jnp.asarray(A, jnp.bfloat16), jnp.asarray(E, jnp.bfloat16)
    loss, (gA, gE) = jax.value_and_grad(lambda x, y: cut(x, y, T, W), argnums=(0, 1))(a, e)
    assert loss.dtype == jnp.float32 and gA.dtype == jnp.bfloat16 and gE.dtype == jnp.bfloat16
    a64, e64 = np.asarray(a, np.float64), np.asarray(e, np.float64)  # the rounded inputs, exactly
    with enable_x64():
        r, (rA, rE) = jax.value_and_grad(lambda x, y: dense_recml(x, y, T, W.astype(np.float64))[0],
                                         argnums=(0, 1))(a64, e64)
    assert abs(float(loss) - float(r)) <= 1e-6 * float(r)
    assert rel(np.asarray(gA, np.float64), rA) <= 2 ** -7 and rel(np.asarray(gE, np.float64), rE) <= 2 ** -7


@pytest.mark.parametrize("x64", [False, True])
def test_gradients_match_finite_differences_of_the_float64_loss(x64):
    from conftest import directional_fd
    A, E, T, W = case(seed=5)
    signed = W * np.where(np.random.default_rng(4).random(W.shape) < 0.4, -1, 1).astype(np.float32)
    with enable_x64():
        def loss64(a, e, w):
            return float(dense_recml(jnp.asarray(a), jnp.asarray(e), T, jnp.asarray(w))[0])
    dtype = np.float64 if x64 else np.float32
    rng = np.random.default_rng(6)
    with (enable_x64() if x64 else jax.enable_x64(False)):
        args = [x.astype(dtype) for x in (A, E, signed)]
        grads = jax.grad(lambda a, e, w: cut(a, e, T, w), argnums=(0, 1, 2))(*args)
    for i, g in enumerate(grads):
        u = rng.standard_normal(args[i].shape)

        def along(x, i=i):
            xs = [np.asarray(a, np.float64) for a in args]
            xs[i] = x
            with enable_x64():
                return loss64(*xs)
        fd = directional_fd(along, args[i], u, h=1e-5)
        g = np.asarray(g, np.float64)
        tol = 1e-7 if x64 else 1e-5  # |u·(g − g*)| <= tol·|u|·|g*|
        assert abs(float(np.sum(g * u)) - fd) <= tol * np.linalg.norm(u) * np.linalg.norm(g), i
