#!/usr/bin/env python3
"""Peer baseline: what a PyTorch user runs. Dense BCE with logits over materialized [P, V] logits,
forward and backward (torch.nn.functional.binary_cross_entropy_with_logits on A @ E.T against dense
multi-hot targets, mean reduction as Keras / Cut BCE; gradients for A and E), at the same shapes and
inputs protocol as lobench (A, E ~ N(0, 1) float32, L targets uniform in [0, V)). On the GPU when
torch sees one (CUDA events around each step; peak memory from torch.cuda.max_memory_allocated after
reset_peak_memory_stats), else on the CPU (perf_counter; the process's peak RSS growth over one untimed
step in rss_growth_bytes, no allocator counter: peak_bytes NaN).

Rows are appended to a lobench run file (results/SCHEMA.md) with variant "torch_dense" and backend
"peer". On a GPU `peak_bytes` is the caching allocator's peak above what was allocated before the
multi-hot targets were built: targets, logits, their gradient and dA, dE (A, E and the target ids
excluded). An out-of-memory error is recorded as skipped with the reason; so are points whose dense
working set (3·P·V·4 bytes) exceeds --mem-limit-gib, or on the CPU the run file's mem_limit_bytes.

Threads (--threads N, default 2; CPU): the process is bound to its first N CPUs and OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS, MKL_NUM_THREADS are set to N before torch is imported, then
torch.set_num_threads(N) and set_num_interop_threads(N). The reason records torch's version, the BLAS
library the process actually mapped (Debian's torch calls libblas.so.3, which the alternatives system
points at OpenBLAS or the reference BLAS) and how many threads did the work; torch.__config__.show() and
parallel_info() go to the run file's `peer_torch_config` attribute. Timing and columns as
jax_dense_bce.py's.

Operands (--operand, default fp32,bf16):
  fp32: float32 tensors, torch.backends.cuda.matmul.allow_tf32 = False (no TF32);
  tf32: float32 tensors, allow_tf32 = True (GPU only);
  bf16: automatic mixed precision, torch.autocast(dtype=torch.bfloat16): A and E stay float32 leaves,
        the product runs in bfloat16 (float32 accumulation) and the loss in float32, as autocast
        casts binary_cross_entropy_with_logits; gradients come back in float32.
The multi-hot targets are built on the device, outside the timed step.

If torch cannot be imported the script says so and exits 0 without writing (Debian's torch serves
/usr/bin/python3: run the script with that interpreter, as scripts/table2.sh does).

Usage: python3 harness/peers/torch_dense_bce.py RUN.h5 --B 32 --N 32 --V 100000 --D 128 --L 8
       [--operand fp32,bf16] [--reps N | --min-time 1 --max-reps 20 --max-time 30] [--warmup 1]
       [--mem-limit-gib 20] [--threads 2]
"""
import peer_measure

# First of all, before numpy, h5py or the framework load and size their thread pools: bind the CPUs.
CORES = peer_measure.bind_from_argv() if __name__ == "__main__" else None

import argparse  # noqa: E402
import os
import sys

import peer_rows
import peer_runner


def mapped_blas():
    """The BLAS / LAPACK shared objects this process has mapped (what libblas.so.3 resolved to)."""
    found = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            base = os.path.basename(path)
            if "blas" in base or "mkl" in base:
                found.add(path)
    return ", ".join(sorted(found)) or "none mapped"


class TorchPeer:
    """The PyTorch peer for peer_runner."""

    def __init__(self, torch, threads, cores):
        self.torch = torch
        self.variant = "torch_dense"
        self.on_gpu = torch.cuda.is_available()
        self.dev = torch.device("cuda" if self.on_gpu else "cpu")
        self.threads = 0 if self.on_gpu else threads
        self.cores = cores
        self.device_limit = None
        self.block_v = 0
        self.self_timed = self.on_gpu
        if self.on_gpu:
            self.where = f"torch {torch.__version__}, CUDA {torch.version.cuda} ({torch.cuda.get_device_name(self.dev)})"
        else:
            torch.set_num_threads(threads)
            torch.set_num_interop_threads(threads)
            (torch.ones(64, 64) @ torch.ones(64, 64)).sum()  # maps the BLAS
            blas = os.path.basename(mapped_blas().split(", ")[0])
            blas_dir = os.path.basename(os.path.dirname(mapped_blas().split(", ")[0]))
            self.where = (f"torch {torch.__version__}, CPU, BLAS {blas_dir}/{blas}, "
                          f"set_num_threads({torch.get_num_threads()})")
        self.A = self.E = self.T = self.mh = None

    def skip_reason(self, operand):
        return "tf32 is a GPU matmul mode" if operand == "tf32" and not self.on_gpu else None

    def predicted_bytes(self, P, V, D, L):
        return peer_rows.dense_bytes(P, V)

    def prepare(self, operand, A_h, E_h, T_h, V):
        torch, dev = self.torch, self.dev
        import torch.nn.functional as F
        if self.on_gpu:
            torch.backends.cuda.matmul.allow_tf32 = operand == "tf32"
            torch.backends.cudnn.allow_tf32 = operand == "tf32"
        # Copies (on the CPU too), so that the cached host inputs never become autograd leaves.
        A = self.A = torch.from_numpy(A_h).to(dev, copy=True).requires_grad_()
        E = self.E = torch.from_numpy(E_h).to(dev, copy=True).requires_grad_()
        self.T = torch.from_numpy(T_h).to(dev)
        if self.on_gpu:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            self.base = torch.cuda.memory_allocated()
        mh = self.mh = torch.zeros((A.shape[0], V), dtype=torch.float32, device=dev)
        mh.scatter_(1, self.T, 1.0)

        def loss_and_grads():
            A.grad = E.grad = None
            if operand == "bf16":
                with torch.autocast(device_type=dev.type, dtype=torch.bfloat16):
                    loss = F.binary_cross_entropy_with_logits(A @ E.T, mh)
            else:
                loss = F.binary_cross_entropy_with_logits(A @ E.T, mh)
            loss.backward()
            return loss

        if not self.on_gpu:
            return lambda: float(loss_and_grads())

        def step():  # self-timed: CUDA events give the device time of the step
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            loss = loss_and_grads()
            stop.record()
            stop.synchronize()
            return float(loss), start.elapsed_time(stop) * 1e-3

        return step

    def how(self, operand):
        return {"fp32": "fp32, allow_tf32=False", "tf32": "fp32 tensors, allow_tf32=True",
                "bf16": "autocast bf16 (fp32 leaves, bf16 product, fp32 loss)"}[operand]

    def is_oom(self, e):
        return isinstance(e, getattr(self.torch.cuda, "OutOfMemoryError", ())) or "out of memory" in str(e).lower()

    def after_timing(self, row):
        if self.on_gpu:
            row["peak_bytes"] = self.torch.cuda.max_memory_allocated() - self.base

    def release(self):
        self.A = self.E = self.T = self.mh = None
        if self.on_gpu:
            self.torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    peer_rows.add_common_args(ap, default_operands="fp32,bf16")
    args = peer_rows.parse_args(ap)
    cores = CORES
    try:
        import torch
    except ImportError as e:
        print(f"torch is not importable ({e}): no torch_dense rows written")
        return 0
    peer = TorchPeer(torch, args.threads, cores)
    run = peer_rows.RunFile(args.run)
    run.set_attribute("peer_torch_config", torch.__config__.show() + torch.__config__.parallel_info()
                      + f"\nBLAS mapped: {mapped_blas()}\n")
    peer_runner.run_points(run, args, peer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
