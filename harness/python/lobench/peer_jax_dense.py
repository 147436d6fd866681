"""Peer `jax_dense` (`--variants lobench.peer_jax_dense:JaxDense`): what a JAX user runs, as a Python
variant. Dense BCE-with-logits over materialised [P, V] logits, jit(value_and_grad) with respect to A
and E; the multi-hot targets and the weights are put on the device outside the timed step. The whole
contract (docs/method.md#what-every-variant-computes): position weights, mean or sum, padding and repeated ids, the cut counts. fp32 on
JAX's default backend; the step blocks until ready. Threads: lobench/_peer_common.py."""
import os

from lobench._peer_common import JaxThreads, multi_hot, operand_skip_reason, reduction_weights
from lobench.python_variants import Variant

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # a GPU's memory on demand, not 75 % up front
try:  # at import, so that the row's origin names JAX and its version
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = None


def dense_counts(x, y):
    """[P, 4] TP, FP, FN, TN at logit > 0."""
    pred, pos = x > 0, y > 0
    return jnp.stack([(pred & pos).sum(1), (pred & ~pos).sum(1), (~pred & pos).sum(1), (~pred & ~pos).sum(1)], 1)


def dense_step(position_sums, A, E, targets, weights, reduction):
    """The untimed part of a dense JAX peer: the inputs on the device and the jitted step, which returns
    (loss, dA, dE, counts) ready. `position_sums(x, y)` is the peer's [P] Σ_v BCE-with-logits."""
    P, V = A.shape[0], E.shape[0]
    w, scale = reduction_weights(weights, reduction, P, V)

    def loss_fn(A, E, y, w):
        x = A @ E.T
        return scale * jnp.sum(w * position_sums(x, y)), x

    grad = jax.value_and_grad(loss_fn, argnums=(0, 1), has_aux=True)

    @jax.jit
    def step_fn(A, E, y, w):
        (loss, x), (dA, dE) = grad(A, E, y, w)
        return loss, dA, dE, dense_counts(x, y)

    args = [jax.device_put(a) for a in (A, E, multi_hot(targets, V), w)]
    return lambda: jax.block_until_ready(step_fn(*args))


class JaxDense(Variant):
    name = "jax_dense"
    description = "peer: JAX jit(value_and_grad) over dense [P, V] logits"

    def skip_reason(self, shape, options):
        if jax is None:
            return "jax is not installed (python -m pip install jax)"
        return operand_skip_reason(options) or JaxThreads.skip_reason(jax, options)

    def predicted_bytes(self, shape, options):
        # logits, multi-hot targets, element loss and logit gradient: [P, V] float32 each
        return 4 * shape["P"] * shape["V"] * 4

    def prepare(self, A, E, targets, weights, reduction, options):
        def position_sums(x, y):  # Σ_v softplus(x) − y·x, the stable softplus
            return jnp.sum(jnp.maximum(x, 0) - x * y + jnp.log1p(jnp.exp(-jnp.abs(x))), axis=1)

        return dense_step(position_sums, A, E, targets, weights, reduction)
