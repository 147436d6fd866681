"""Peer `keras_dense` (`--variants lobench.peer_keras_dense:KerasDense`): the Cut BCE paper's baseline.
Keras 3's keras.losses.binary_crossentropy(y, logits, from_logits=True) on the JAX backend: its mean over
V per position, then the contract's weighted reduction over positions (what a Keras user's sample_weight
does), on dense [P, V] logits A @ Eᵀ; jit(value_and_grad) as jax_dense (lobench/peer_jax_dense.py).
KERAS_BACKEND is set to jax before Keras is imported. fp32. Threads: lobench/_peer_common.py."""
import os

from lobench import peer_jax_dense
from lobench._peer_common import JaxThreads, operand_skip_reason
from lobench.python_variants import Variant

os.environ.setdefault("KERAS_BACKEND", "jax")
try:
    import keras
except Exception:  # ImportError, or Keras failing on a backend it cannot load
    keras = None


class KerasDense(Variant):
    name = "keras_dense"
    description = "peer: Keras 3 binary_crossentropy(from_logits=True) on JAX, dense [P, V] logits"

    def skip_reason(self, shape, options):
        if peer_jax_dense.jax is None:
            return "jax is not installed (python -m pip install jax)"
        if keras is None:
            return "keras is not installed (python -m pip install keras)"
        if keras.backend.backend() != "jax":
            return f"keras runs on the {keras.backend.backend()} backend (KERAS_BACKEND), not jax"
        return operand_skip_reason(options) or JaxThreads.skip_reason(peer_jax_dense.jax, options)

    def predicted_bytes(self, shape, options):
        return 4 * shape["P"] * shape["V"] * 4  # as jax_dense's

    def prepare(self, A, E, targets, weights, reduction, options):
        V = E.shape[0]

        def position_sums(x, y):  # Keras's per-position mean over V, times V
            return V * keras.losses.binary_crossentropy(y, x, from_logits=True)

        return peer_jax_dense.dense_step(position_sums, A, E, targets, weights, reduction)
