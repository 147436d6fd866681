"""Peer `jax_dense` (`--variants lobench.peer_jax_dense:JaxDense`): what a JAX user runs, as a Python
variant. Dense BCE-with-logits over materialised [P, V] logits, jit(value_and_grad) with respect to A
and E, the multi-hot targets and the weights built on the device outside the timed step. The whole contract (DESIGN.md): position weights, mean or sum,
padding and repeated ids, the cut counts. Runs on JAX's default backend; the step blocks until ready.

Threads: XLA sizes its CPU pool when JAX starts, from the CPUs the process may use (harness/peers/jax_peer.py
says why no flag does); the rows record the engine's --threads, which this variant does not control: pin
the process (taskset -c 0-1 python -m lobench run ...) to give XLA the same CPUs."""
import numpy as np

from lobench.python_variants import Variant

try:  # at import, so that the run file's origin names JAX and its version
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = None


class JaxDense(Variant):
    name = "jax_dense"
    description = "peer: JAX jit(value_and_grad) over dense [P, V] logits"

    def skip_reason(self, shape, options):
        return "jax is not installed (python -m pip install jax)" if jax is None else None

    def predicted_bytes(self, shape, options):
        # logits, multi-hot targets, element loss and logit gradient: [P, V] float32 each
        return 4 * shape["P"] * shape["V"] * 4

    def prepare(self, A, E, targets, weights, reduction, options):
        P, V = A.shape[0], E.shape[0]
        valid = (targets >= 0) & (targets < V)
        rows = np.repeat(np.arange(P), targets.shape[1])[valid.ravel()]
        multi_hot = np.zeros((P, V), np.float32)
        multi_hot[rows, targets[valid]] = 1.0  # a repeated id counts once
        w = np.ones(P, np.float32) if weights is None else np.asarray(weights, np.float32)
        total = float(w.astype(np.float64).sum())
        # mean: Σ_p w_p · mean_v l / Σ_p w_p; sum: Σ_p w_p Σ_v l (0 when Σw = 0)
        scale = (0.0 if total == 0 else 1.0 / (V * total)) if reduction == "mean" else 1.0

        def loss_fn(A, E, y, w):
            x = A @ E.T
            element = jnp.maximum(x, 0) - x * y + jnp.log1p(jnp.exp(-jnp.abs(x)))
            return scale * jnp.sum(w[:, None] * element), x

        grad = jax.jit(jax.value_and_grad(loss_fn, argnums=(0, 1), has_aux=True))
        args = [jax.device_put(a) for a in (A, E, multi_hot, w)]

        def counts_of(x, y):
            pred = x > 0
            pos = y > 0
            return jnp.stack([(pred & pos).sum(1), (pred & ~pos).sum(1), (~pred & pos).sum(1), (~pred & ~pos).sum(1)], 1)

        counts = jax.jit(counts_of)

        def step():
            (loss, x), (dA, dE) = grad(*args)
            c = counts(x, args[2])
            jax.block_until_ready((loss, dA, dE, c))
            return loss, dA, dE, c

        return step
