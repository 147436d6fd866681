#!/usr/bin/env python3
"""Peer: the Cut BCE algorithm in its plain-JAX form, ours (jax_chunked_op.cut_bce: lax.scan over
vocabulary blocks of --block-v rows of E, a custom_vjp whose backward recomputes each block's logits; no
[P, V] buffer), loss and the gradients of A and E by jax.value_and_grad, jitted, at lobench's shapes and
inputs protocol (unit weights, mean reduction). Rows as jax_dense_bce.py's (variant "jax_chunked", backend
"peer", block_v recorded); the skip by memory uses jax_chunked_op.working_bytes, a model of the
algorithm's working set (the row's rss_growth_bytes is the meter). fp32 only. Its flops are counted as
every row's, 6·P·V·D, although the algorithm does 8·P·V·D (the backward recomputes the logits).

Usage: python3 harness/peers/jax_chunked_bce.py RUN.h5 --B 32 --N 32 --V 100000 --D 128 --L 8
       [--block-v 2048] [--reps N | --min-time 1 --max-reps 20 --max-time 30] [--warmup 1] [--threads 2]
"""
import peer_measure

# First of all, before numpy, h5py or the framework load and size their thread pools: bind the CPUs.
CORES = peer_measure.bind_from_argv() if __name__ == "__main__" else None

import argparse  # noqa: E402
import sys

import jax_peer
import peer_rows
import peer_runner


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    peer_rows.add_common_args(ap)
    ap.add_argument("--block-v", type=int, default=2048, help="rows of E per vocabulary block (default 2048)")
    args = peer_rows.parse_args(ap)
    if args.block_v < 1:
        ap.error(f"--block-v {args.block_v}: needs at least 1")
    jax = jax_peer.start_jax()
    cores = CORES
    if jax is None:
        print("jax is not installed (python3 -m pip install jax): no jax_chunked rows written")
        return 0
    import jax.numpy as jnp
    from jax_chunked_op import cut_bce, working_bytes

    block_v = args.block_v
    step_fn = jax.jit(jax.value_and_grad(lambda A, E, T, w: cut_bce(A, E, T, w, block_v), argnums=(0, 1)))

    def make_step(operand, A_h, E_h, T_h, V):
        A, E = jnp.asarray(A_h), jnp.asarray(E_h)
        T = jnp.asarray(T_h, dtype=jnp.int32)
        w = jnp.ones(A.shape[0], jnp.float32)
        return lambda: step_fn(A, E, T, w)

    peer = jax_peer.JaxPeer(jax, "jax_chunked", cores, args.threads, make_step,
                            lambda P, V, D, L: working_bytes(P, V, D, block_v),
                            lambda op: f"lax.scan over {block_v}-row blocks, custom_vjp recomputing logits",
                            operands=("fp32",), block_v=block_v)
    peer_runner.run_points(peer_rows.RunFile(args.run), args, peer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
