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

Operands (--operand): fp32 runs the product at jax_default_matmul_precision "float32" (no TF32 on a
GPU, where JAX's default may use it); tf32 at "tensorfloat32" (GPU only); bf16 casts A and E to
bfloat16 inside the step and multiplies with float32 accumulation and output (the loss in float32).
The multi-hot targets are built on the device, outside the timed step. On a GPU each step is timed
with perf_counter around the call and block_until_ready (dispatch included); peak memory is not
measured (JAX cannot reset its peak).

Usage: python3 harness/peers/jax_dense_bce.py RUN.h5 --B 32 --N 32 --V 100000 --D 128 --L 8
       [--operand fp32,bf16] [--reps 3] [--warmup 1] [--mem-limit-gib 20] [--threads 2]
"""
import argparse
import functools
import os
import sys
import time

import peer_rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    peer_rows.add_common_args(ap)
    ap.add_argument("--threads", type=int, default=2, help="XLA CPU threads (set before JAX starts)")
    args = ap.parse_args()

    os.environ.setdefault("XLA_FLAGS", f"--xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads={args.threads}")
    # Allocate on demand, not 75 % of the GPU up front: the limit below is the device's, and an
    # out-of-memory point fails alone.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        print("jax is not installed (python3 -m pip install jax): no jax_dense rows written")
        return 0

    run = peer_rows.RunFile(args.run)
    backend = jax.default_backend()
    device = jax.devices()[0]
    on_gpu = backend in ("gpu", "cuda", "rocm")
    limit = args.mem_limit_gib * 2**30 if args.mem_limit_gib else run.mem_limit
    if on_gpu and not args.mem_limit_gib:
        stats = device.memory_stats() or {}
        limit = float(stats.get("bytes_limit", limit))
    where = f"jax {jax.__version__}, XLA {backend} ({getattr(device, 'device_kind', device.platform)})"

    def loss_fn(A, E, multi_hot, operand):
        if operand == "bf16":
            x = jnp.matmul(A.astype(jnp.bfloat16), E.astype(jnp.bfloat16).T, preferred_element_type=jnp.float32)
        else:
            x = A @ E.T
        # Keras binary_crossentropy(from_logits=True): mean over V of softplus(x) - y·x, then mean over P
        element = jnp.maximum(x, 0) - x * multi_hot + jnp.log1p(jnp.exp(-jnp.abs(x)))
        return jnp.mean(element)

    steps = {op: jax.jit(jax.value_and_grad(lambda A, E, mh, op=op: loss_fn(A, E, mh, op), argnums=(0, 1)))
             for op in peer_rows.OPERANDS}
    precision = {"fp32": "float32", "tf32": "tensorfloat32", "bf16": "float32"}

    @functools.partial(jax.jit, static_argnums=1)
    def multi_hot_of(T, V):
        return jnp.zeros((T.shape[0], V), jnp.float32).at[jnp.arange(T.shape[0])[:, None], T].set(1.0)

    rows = 0
    for B, N, D, L, V, op in peer_rows.points(args):
        P = B * N
        row = run.new_row("jax_dense", B, N, D, L, V, op, args.threads if not on_gpu else 0, args)
        samples = []
        row["gemm_gflops"] = run.gemm_gflops(P, D, op, on_gpu)
        if op == "tf32" and not on_gpu:
            row["status"] = b"skipped"
            peer_rows.set_reason(row, f"tf32 is a GPU matmul mode ({where})")
        elif row["predicted_bytes"] > limit:
            row["status"] = b"skipped"
            peer_rows.set_reason(row, f"OOM predicted: {row['predicted_bytes'] / 2**30:.2f} GiB > "
                                      f"{'GPU ' if on_gpu else ''}limit {limit / 2**30:.2f} GiB ({where})")
        else:
            A_h, E_h, T_h = peer_rows.inputs(args.seed, P, V, D, L)
            A = E = mh = None
            try:
                with jax.default_matmul_precision(precision[op]):
                    A, E = jnp.asarray(A_h), jnp.asarray(E_h)
                    mh = jax.block_until_ready(multi_hot_of(jnp.asarray(T_h, dtype=jnp.int32), V))
                    step = steps[op]
                    for _ in range(args.warmup):
                        jax.block_until_ready(step(A, E, mh))
                    samples = []
                    for _ in range(args.reps):
                        t0 = time.perf_counter()
                        loss, _ = jax.block_until_ready(step(A, E, mh))
                        samples.append(time.perf_counter() - t0)
                peer_rows.set_times(row, samples)
                row["loss"] = float(loss)
                row["status"] = b"ok"
                peer_rows.set_reason(row, f"{where}, jit(value_and_grad), operand {op}"
                                          f"{' (A, E cast to bf16 in the step, fp32 accumulation)' if op == 'bf16' else ''}")
            except Exception as e:  # XlaRuntimeError RESOURCE_EXHAUSTED: out of memory
                msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                if "RESOURCE_EXHAUSTED" in str(e) or "out of memory" in str(e).lower():
                    row["status"] = b"skipped"
                    peer_rows.set_reason(row, f"OOM: {msg[:120]} ({where})")
                else:
                    row["status"] = b"failed"
                    peer_rows.set_reason(row, f"{type(e).__name__}: {msg[:140]}")
            del A, E, mh
        print(peer_rows.describe(row), flush=True)
        run.append(row, samples)
        rows += 1
    print(f"appended {rows} rows to {args.run}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
