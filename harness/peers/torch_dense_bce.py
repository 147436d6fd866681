#!/usr/bin/env python3
"""Peer baseline: what a PyTorch user runs. Dense BCE with logits over materialized [P, V] logits,
forward and backward (torch.nn.functional.binary_cross_entropy_with_logits on A @ E.T against dense
multi-hot targets, mean reduction as Keras / Cut BCE; gradients for A and E), at the same shapes and
inputs protocol as lobench (A, E ~ N(0, 1) float32, L targets uniform in [0, V)). On the GPU when
torch sees one (CUDA events around each step; peak memory from torch.cuda.max_memory_allocated after
reset_peak_memory_stats), else on the CPU (perf_counter; peak memory not measured).

Rows are appended to a lobench run file (results/SCHEMA.md) with variant "torch_dense" and backend
"peer". `peak_bytes` is the caching allocator's peak above what was allocated before the multi-hot
targets were built: targets, logits, their gradient and dA, dE (A, E and the target ids excluded).
An out-of-memory error is recorded as skipped with the reason; so are points whose dense working set
(3·P·V·4 bytes) exceeds --mem-limit-gib, or on the CPU the run file's mem_limit_bytes.

Operands (--operand, default fp32,bf16):
  fp32: float32 tensors, torch.backends.cuda.matmul.allow_tf32 = False (no TF32);
  tf32: float32 tensors, allow_tf32 = True (GPU only);
  bf16: automatic mixed precision, torch.autocast(dtype=torch.bfloat16): A and E stay float32 leaves,
        the product runs in bfloat16 (float32 accumulation) and the loss in float32, as autocast
        casts binary_cross_entropy_with_logits; gradients come back in float32.
The multi-hot targets are built on the device, outside the timed step.

If torch cannot be imported the script says so and exits 0 without writing.

Usage: python3 harness/peers/torch_dense_bce.py RUN.h5 --B 32 --N 32 --V 100000 --D 128 --L 8
       [--operand fp32,bf16] [--reps 3] [--warmup 1] [--mem-limit-gib 20] [--threads 2]
"""
import argparse
import sys
import time

import peer_rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    peer_rows.add_common_args(ap, default_operands="fp32,bf16")
    ap.add_argument("--threads", type=int, default=2, help="CPU threads (torch.set_num_threads) when no GPU")
    args = ap.parse_args()

    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(f"torch is not importable ({e}): no torch_dense rows written")
        return 0

    run = peer_rows.RunFile(args.run)
    on_gpu = torch.cuda.is_available()
    dev = torch.device("cuda" if on_gpu else "cpu")
    if on_gpu:
        where = f"torch {torch.__version__}, CUDA {torch.version.cuda} ({torch.cuda.get_device_name(dev)})"
    else:
        torch.set_num_threads(args.threads)
        where = f"torch {torch.__version__}, CPU ({args.threads} threads)"
    limit = args.mem_limit_gib * 2**30 if args.mem_limit_gib else (None if on_gpu else run.mem_limit)

    def step(A, E, mh, operand):
        A.grad = E.grad = None
        if operand == "bf16":
            with torch.autocast(device_type=dev.type, dtype=torch.bfloat16):
                loss = F.binary_cross_entropy_with_logits(A @ E.T, mh)
        else:
            loss = F.binary_cross_entropy_with_logits(A @ E.T, mh)
        loss.backward()
        return loss

    def timed(A, E, mh, operand):
        if not on_gpu:
            t0 = time.perf_counter()
            loss = step(A, E, mh, operand)
            return loss, time.perf_counter() - t0
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        loss = step(A, E, mh, operand)
        stop.record()
        stop.synchronize()
        return loss, start.elapsed_time(stop) * 1e-3

    rows = 0
    for B, N, D, L, V, op in peer_rows.points(args):
        P = B * N
        row = run.new_row("torch_dense", B, N, D, L, V, op, 0 if on_gpu else args.threads, args)
        samples = []
        row["gemm_gflops"] = run.gemm_gflops(P, D, op, on_gpu)
        how = {"fp32": "fp32, allow_tf32=False", "tf32": "fp32 tensors, allow_tf32=True",
               "bf16": "autocast bf16 (fp32 leaves, bf16 product, fp32 loss)"}[op]
        if op == "tf32" and not on_gpu:
            row["status"] = b"skipped"
            peer_rows.set_reason(row, f"tf32 is a GPU matmul mode ({where})")
        elif limit is not None and row["predicted_bytes"] > limit:
            row["status"] = b"skipped"
            peer_rows.set_reason(row, f"OOM predicted: {row['predicted_bytes'] / 2**30:.2f} GiB > "
                                      f"limit {limit / 2**30:.2f} GiB ({where})")
        else:
            if on_gpu:
                torch.backends.cuda.matmul.allow_tf32 = op == "tf32"
                torch.backends.cudnn.allow_tf32 = op == "tf32"
            A_h, E_h, T_h = peer_rows.inputs(args.seed, P, V, D, L)
            A = E = T = mh = loss = None
            try:
                # Copies (on the CPU too), so that the cached host inputs never become autograd leaves.
                A = torch.from_numpy(A_h).to(dev, copy=True).requires_grad_()
                E = torch.from_numpy(E_h).to(dev, copy=True).requires_grad_()
                T = torch.from_numpy(T_h).to(dev)
                if on_gpu:
                    torch.cuda.synchronize()
                    torch.cuda.reset_peak_memory_stats()
                    base = torch.cuda.memory_allocated()
                mh = torch.zeros((P, V), dtype=torch.float32, device=dev)
                mh.scatter_(1, T, 1.0)
                for _ in range(args.warmup):
                    timed(A, E, mh, op)
                samples = []
                for _ in range(args.reps):
                    loss, seconds = timed(A, E, mh, op)
                    samples.append(seconds)
                peer_rows.set_times(row, samples)
                row["loss"] = float(loss)
                if on_gpu:
                    row["peak_bytes"] = torch.cuda.max_memory_allocated() - base
                row["output_bytes"] = (P * D + V * D) * 4 + 8
                row["status"] = b"ok"
                peer_rows.set_reason(row, f"{where}, {how}"
                                          f"{', CUDA events' if on_gpu else ', perf_counter; peak not measured'}")
            except torch.cuda.OutOfMemoryError as e:
                row["status"] = b"skipped"
                first = str(e).strip().splitlines()[0] if str(e).strip() else "out of memory"
                peer_rows.set_reason(row, f"OOM: {first[:110]} ({where})")
            except RuntimeError as e:  # an allocator failure on the CPU, or anything else
                row["status"] = b"skipped" if "out of memory" in str(e).lower() else b"failed"
                peer_rows.set_reason(row, f"{type(e).__name__}: {str(e).strip()[:150]}")
            del A, E, T, mh, loss
            if on_gpu:
                torch.cuda.empty_cache()
        print(peer_rows.describe(row), flush=True)
        run.append(row, samples)
        rows += 1
    print(f"appended {rows} rows to {args.run}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
