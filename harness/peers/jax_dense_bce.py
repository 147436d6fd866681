#!/usr/bin/env python3
"""Peer baseline: what a JAX user runs. Dense BCE-with-logits over materialized [P, V] logits, jitted,
with its gradient w.r.t. A and E, timed on the CPU at the same shapes and inputs protocol as lobench
(A, E ~ N(0, 1) float32, L targets uniform in [0, V), mean reduction as Keras / Cut BCE).

Rows are appended to a lobench run file (the /results table of results/SCHEMA.md) with variant
"jax_dense" and backend "peer", so tables and figures show lobench's variants and the peer together.
Points whose dense working set (logits, multi-hot targets, gradient: 3·P·V·4 bytes) exceeds the
memory limit are recorded as skipped, as lobench does.

Usage: python3 harness/peers/jax_dense_bce.py RUN.h5 --B 32 --N 32 --V 100000 --D 128 --L 8
       [--reps 3] [--warmup 1] [--mem-limit-gib 20] [--threads 2]
"""
import argparse
import datetime
import math
import os
import sys
import time


def parse_list(s):
    return [int(x) for x in s.split(",")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="lobench run file to append to (created by `lobench run`)")
    for axis in ("B", "N", "V", "D", "L"):
        ap.add_argument(f"--{axis}", type=parse_list, required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2, help="XLA CPU threads (set before JAX starts)")
    ap.add_argument("--mem-limit-gib", type=float, default=None,
                    help="skip points whose dense working set exceeds this (default: the run file's mem_limit_bytes)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    os.environ.setdefault("XLA_FLAGS", f"--xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads={args.threads}")
    import h5py
    import numpy as np
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        sys.exit("jax is not installed: python3 -m pip install jax")

    with h5py.File(args.run, "r") as f:
        dtype = f["results"].dtype
        limit = args.mem_limit_gib * 2**30 if args.mem_limit_gib else float(f.attrs.get("mem_limit_bytes", 20 * 2**30))
        gemm_by_shape = {}
        for r in f["results"][:]:
            gemm_by_shape[(int(r["P"]), int(r["D"]))] = float(r["gemm_gflops"])

    def loss_fn(A, E, multi_hot):
        x = A @ E.T
        # Keras binary_crossentropy(from_logits=True): mean over V of softplus(x) - y·x, then mean over P
        element = jnp.maximum(x, 0) - x * multi_hot + jnp.log1p(jnp.exp(-jnp.abs(x)))
        return jnp.mean(element)

    step = jax.jit(jax.value_and_grad(loss_fn, argnums=(0, 1)))

    rows = []
    for B in args.B:
        for N in args.N:
            for D in args.D:
                for L in args.L:
                    for V in args.V:
                        P = B * N
                        row = np.zeros((), dtype=dtype)
                        row["variant"], row["backend"], row["reduction"] = b"jax_dense", b"peer", b"mean"
                        for k, v in dict(B=B, N=N, P=P, V=V, D=D, L=L, threads=args.threads, seed=args.seed,
                                         warmup=args.warmup, reps=args.reps).items():
                            row[k] = v
                        row["flops"] = 6.0 * P * V * D
                        row["time_samples_s"][:] = math.nan
                        for k in ("rel_loss_err", "rel_dA_err", "rel_dE_err", "ref_loss"):
                            row[k] = math.nan
                        row["counts_mismatch"] = -1
                        row["predicted_bytes"] = 3 * P * V * 4
                        row["gemm_gflops"] = gemm_by_shape.get((P, D), math.nan)
                        row["utc"] = datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ").encode()
                        if row["predicted_bytes"] > limit:
                            row["status"] = b"skipped"
                            row["reason"] = (f"OOM predicted: {row['predicted_bytes'] / 2**30:.2f} GiB > "
                                             f"limit {limit / 2**30:.2f} GiB").encode()
                        else:
                            rng = np.random.default_rng(args.seed)
                            A = jnp.asarray(rng.standard_normal((P, D), dtype=np.float32))
                            E = jnp.asarray(rng.standard_normal((V, D), dtype=np.float32))
                            T = rng.integers(0, V, size=(P, L))
                            mh = np.zeros((P, V), dtype=np.float32)
                            np.put_along_axis(mh, T, 1.0, axis=1)
                            mh = jnp.asarray(mh)
                            for _ in range(args.warmup):
                                jax.block_until_ready(step(A, E, mh))
                            samples = []
                            for _ in range(args.reps):
                                t0 = time.perf_counter()
                                loss, _ = jax.block_until_ready(step(A, E, mh))
                                samples.append(time.perf_counter() - t0)
                            med = float(np.median(samples))
                            row["time_samples_s"][: len(samples)] = samples
                            row["time_median_s"], row["time_min_s"], row["time_max_s"] = med, min(samples), max(samples)
                            row["effective_gflops"] = row["flops"] / med / 1e9
                            row["gemm_fraction"] = row["effective_gflops"] / row["gemm_gflops"]
                            row["loss"] = float(loss)
                            row["status"] = b"ok"
                            row["reason"] = f"jax {jax.__version__}, XLA CPU, jit(value_and_grad)".encode()
                            del A, E, mh
                        print(f"jax_dense B={B} N={N} V={V} D={D} L={L}: {row['status'].item().decode()} "
                              f"{float(row['time_median_s']) * 1e3:.1f} ms, {float(row['effective_gflops']):.1f} GFLOP/s "
                              f"({100 * float(row['gemm_fraction']):.0f}% of the run's SGEMM) {row['reason'].item().decode()}",
                              flush=True)
                        rows.append(row)
                        with h5py.File(args.run, "a") as f:  # appended and flushed per row, like lobench
                            ds = f["results"]
                            n = ds.shape[0]
                            row["row_id"] = n
                            ds.resize((n + 1,))
                            ds[n] = row
    print(f"appended {len(rows)} rows to {args.run}")


if __name__ == "__main__":
    main()
