#!/usr/bin/env python3
"""Peer baseline: what a JAX user runs. Dense BCE-with-logits over materialized [P, V] logits, jitted,
with its gradient w.r.t. A and E, at the same shapes and inputs protocol as lobench (A, E ~ N(0, 1)
float32, L targets uniform in [0, V), mean reduction as Keras / Cut BCE). Runs on JAX's default backend:
the GPU where JAX sees one, else the CPU; the backend and device are recorded in each row's reason.

Rows are appended to a lobench run file (the /results table of results/SCHEMA.md) with variant
"jax_dense" and backend "peer", so tables and figures show lobench's variants and the peer together.
Points whose dense working set (logits, multi-hot targets, gradient: 3·P·V·4 bytes) exceeds the
memory limit (the device's, on a GPU; the run file's mem_limit_bytes on the CPU) are recorded as
skipped, as lobench does; an out-of-memory error at run time is recorded the same way.

Threads (--threads N, default 2): the process is bound to its first N CPUs before JAX starts, which is what
sizes XLA's CPU thread pool (jax_peer.py says why no XLA flag does); rows record N in `threads` and in the
reason the CPUs and how many threads did the work. Timing as lobench's: adaptive repetitions by default
(--min-time, --max-reps, --max-time; --reps N fixed), median, spread and flags in the row, the process's
peak RSS growth over one untimed step in rss_growth_bytes (CPU; peer_runner.py), the run's best SGEMM and FMA peak on the
same threads as yardsticks.

Operands (--operand): fp32 runs the product at jax_default_matmul_precision "float32" (no TF32 on a
GPU, where JAX's default may use it); tf32 at "tensorfloat32" (GPU only); bf16 casts A and E to
bfloat16 inside the step and multiplies with float32 accumulation and output (the loss in float32).
The multi-hot targets are built on the device, outside the timed step. Each step is timed with
perf_counter around the call and block_until_ready (dispatch included).

Usage: python3 harness/peers/jax_dense_bce.py RUN.h5 --B 32 --N 32 --V 100000 --D 128 --L 8
       [--operand fp32,bf16] [--reps N | --min-time 1 --max-reps 20 --max-time 30] [--warmup 1]
       [--mem-limit-gib 20] [--threads 2]
"""
import peer_measure

# First of all, before numpy, h5py or the framework load and size their thread pools: bind the CPUs.
CORES = peer_measure.bind_from_argv() if __name__ == "__main__" else None

import argparse  # noqa: E402
import sys

import jax_peer
import peer_rows
import peer_runner


def make_loss(jnp):
    """loss(A, E, multi_hot, operand): dense BCE-with-logits, the mean over P and V (what
    Keras's binary_crossentropy(from_logits=True) and its mean over positions give)."""

    def loss_fn(A, E, multi_hot, operand):
        if operand == "bf16":
            x = jnp.matmul(A.astype(jnp.bfloat16), E.astype(jnp.bfloat16).T, preferred_element_type=jnp.float32)
        else:
            x = A @ E.T
        element = jnp.maximum(x, 0) - x * multi_hot + jnp.log1p(jnp.exp(-jnp.abs(x)))
        return jnp.mean(element)

    return loss_fn


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    peer_rows.add_common_args(ap)
    args = peer_rows.parse_args(ap)
    jax = jax_peer.start_jax()
    cores = CORES
    if jax is None:
        print("jax is not installed (python3 -m pip install jax): no jax_dense rows written")
        return 0
    import jax.numpy as jnp

    loss_fn = make_loss(jnp)

    steps = {op: jax.jit(jax.value_and_grad(lambda A, E, mh, op=op: loss_fn(A, E, mh, op), argnums=(0, 1)))
             for op in peer_rows.OPERANDS}

    def make_step(operand, A_h, E_h, T_h, V):
        A, E = jnp.asarray(A_h), jnp.asarray(E_h)
        mh = jax_peer.dense_multi_hot(jax, T_h, V)
        return lambda: steps[operand](A, E, mh)

    def how(op):
        return "jit(value_and_grad) dense" + (", A, E cast to bf16 in the step, fp32 accumulation" if op == "bf16" else "")

    peer = jax_peer.JaxPeer(jax, "jax_dense", cores, args.threads, make_step,
                            lambda P, V, D, L: peer_rows.dense_bytes(P, V), how)
    peer_runner.run_points(peer_rows.RunFile(args.run), args, peer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
