"""Peer `jax_chunked` (`--variants lobench.peer_jax_chunked:JaxChunked`): the Cut BCE algorithm in its
plain-JAX form, ours (lobench/jax_cut_bce.py: lax.scan over vocabulary blocks of E, a custom_vjp whose
backward recomputes each block's logits; no [P, V] buffer), jit(value_and_grad) with respect to A and E.
Blocks of --block-v rows (0: 2048). Weights and both reductions (sum = V·Σw times the weighted mean); no
cut counts (the row's counts_mismatch is NaN). fp32. Its flops are counted as every row's, 6·P·V·D,
although the algorithm does 8·P·V·D (the backward recomputes the logits). Threads: lobench/_peer_common.py."""
import os

from lobench._peer_common import JaxThreads, operand_skip_reason, reduction_weights
from lobench.python_variants import Variant

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
try:
    import jax
    import jax.numpy as jnp

    from lobench.jax_cut_bce import cut_bce, working_bytes
except ImportError:
    jax = None

DEFAULT_BLOCK_V = 2048


def block_of(options):
    return options["block_v"] or DEFAULT_BLOCK_V


class JaxChunked(Variant):
    name = "jax_chunked"
    description = "peer: Cut BCE in plain JAX (lax.scan over vocabulary blocks, custom_vjp recomputing logits)"

    def skip_reason(self, shape, options):
        if jax is None:
            return "jax is not installed (python -m pip install jax)"
        return operand_skip_reason(options) or JaxThreads.skip_reason(jax, options)

    def predicted_bytes(self, shape, options):
        return working_bytes(shape["P"], shape["V"], shape["D"], block_of(options)) if jax else 0

    def prepare(self, A, E, targets, weights, reduction, options):
        P, V = A.shape[0], E.shape[0]
        w, _ = reduction_weights(weights, "mean", P, V)
        # cut_bce is the weighted mean; the sum is V·Σw times it (0 when Σw = 0, as the contract's)
        factor = V * float(w.astype("float64").sum()) if reduction == "sum" else 1.0
        block_v = block_of(options)
        grad = jax.jit(jax.value_and_grad(lambda A, E, T, w: factor * cut_bce(A, E, T, w, block_v), argnums=(0, 1)))
        args = [jax.device_put(a) for a in (A, E, targets, w)]

        def step():
            loss, (dA, dE) = jax.block_until_ready(grad(*args))
            return loss, dA, dE

        return step
