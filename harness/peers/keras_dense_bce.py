#!/usr/bin/env python3
"""Peer baseline: the Cut BCE paper's. Keras 3's keras.losses.binary_crossentropy(y, logits,
from_logits=True) on the JAX backend (KERAS_BACKEND=jax, set here before Keras is imported): the mean over
V per position, then the mean over positions, on materialized [P, V] logits A @ Eᵀ against dense multi-hot
targets; loss and the gradients of A and E by jax.value_and_grad, jitted. Same shapes, inputs protocol,
threads, timing and row columns as jax_dense_bce.py (variant "keras_dense", backend "peer"); the dense
working set 3·P·V·4 bytes decides the skip by memory. fp32 only (Keras's own mixed precision is a layer
policy, not a loss option).

If Keras or JAX is not installed the script says so and exits 0 without writing.

Usage: python3 harness/peers/keras_dense_bce.py RUN.h5 --B 32 --N 32 --V 100000 --D 128 --L 8
       [--reps N | --min-time 1 --max-reps 20 --max-time 30] [--warmup 1] [--threads 2]
"""
import peer_measure

# First of all, before numpy, h5py or the framework load and size their thread pools: bind the CPUs.
CORES = peer_measure.bind_from_argv() if __name__ == "__main__" else None

import argparse  # noqa: E402
import os
import sys

import jax_peer
import peer_rows
import peer_runner


def make_loss(keras, jnp):
    """loss(A, E, multi_hot): Keras's per-position mean over V, then the mean over positions."""

    def loss_fn(A, E, multi_hot):
        return jnp.mean(keras.losses.binary_crossentropy(multi_hot, A @ E.T, from_logits=True))

    return loss_fn


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    peer_rows.add_common_args(ap)
    args = peer_rows.parse_args(ap)
    jax = jax_peer.start_jax()
    cores = CORES
    if jax is None:
        print("jax is not installed (python3 -m pip install jax): no keras_dense rows written")
        return 0
    os.environ["KERAS_BACKEND"] = "jax"
    try:
        import keras
    except ImportError as e:
        print(f"keras is not importable ({e}; python3 -m pip install keras): no keras_dense rows written")
        return 0
    if keras.backend.backend() != "jax":
        print(f"keras runs on the {keras.backend.backend()} backend, not jax: no keras_dense rows written")
        return 0
    import jax.numpy as jnp

    step_fn = jax.jit(jax.value_and_grad(make_loss(keras, jnp), argnums=(0, 1)))

    def make_step(operand, A_h, E_h, T_h, V):
        A, E = jnp.asarray(A_h), jnp.asarray(E_h)
        mh = jax_peer.dense_multi_hot(jax, T_h, V)
        return lambda: step_fn(A, E, mh)

    peer = jax_peer.JaxPeer(jax, "keras_dense", cores, args.threads, make_step,
                            lambda P, V, D, L: peer_rows.dense_bytes(P, V),
                            lambda op: "binary_crossentropy(from_logits=True), jit(value_and_grad)",
                            operands=("fp32",), framework=f"keras {keras.__version__}, ")
    peer_runner.run_points(peer_rows.RunFile(args.run), args, peer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
