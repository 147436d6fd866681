"""The dense peers compute lobench's contract (unit weights, mean reduction): JAX's and Keras's loss
functions and the multi-hot targets they are given (padding ids dropped, a repeated id once), against the
float64 reference of test_jax_chunked_op on a ragged case, with the project's tolerances."""
import os

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import jax_dense_bce  # noqa: E402
import jax_peer  # noqa: E402
from test_jax_chunked_op import ragged_case, reference, rel  # noqa: E402


def check(loss_fn):
    A, E, T, w = ragged_case(29, 613, 16, 6, seed=4, weighted=False)
    loss_ref, dA_ref, dE_ref = reference(A, E, T, w)
    mh = jax_peer.dense_multi_hot(jax, T, E.shape[0])
    loss, (dA, dE) = jax.jit(jax.value_and_grad(loss_fn, argnums=(0, 1)))(jnp.asarray(A), jnp.asarray(E), mh)
    assert abs(float(loss) - loss_ref) / abs(loss_ref) <= 1e-6
    assert rel(dA, dA_ref) <= 1e-5 and rel(dE, dE_ref) <= 1e-5


def test_multi_hot_drops_padding_and_counts_a_repeated_id_once():
    T = np.array([[2, 2, -1, 5], [5, 6, 7, 0]], dtype=np.int32)
    mh = np.asarray(jax_peer.dense_multi_hot(jax, T, 6))
    assert mh.tolist() == [[0, 0, 1, 0, 0, 1], [1, 0, 0, 0, 0, 1]]


def test_jax_dense_matches_the_reference():
    fn = jax_dense_bce.make_loss(jnp)
    check(lambda a, e, mh: fn(a, e, mh, "fp32"))


def test_keras_matches_the_reference():
    os.environ["KERAS_BACKEND"] = "jax"
    keras = pytest.importorskip("keras")
    if keras.backend.backend() != "jax":
        pytest.skip(f"keras already started on the {keras.backend.backend()} backend")
    import keras_dense_bce
    check(keras_dense_bce.make_loss(keras, jnp))
