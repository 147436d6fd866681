#!/usr/bin/env python3
"""Benchmarks of the Python front ends (issue 15), each case in its own process so that its peak RSS
is its own:

  overhead  lobench.bce's wall time against the C++ step it runs (BCEResult.step_seconds: the variant's
            run() alone, timed in C++), at B = N = 32 (P = 1024), V = 100k, D = 128, L = 8. The
            difference is the front end: argument checks, the finite scan of A and E, allocating the
            outputs, the GIL round trip.
  torch     one training step (forward + backward) with lobench.torch.binary_cross_entropy against
            F.binary_cross_entropy_with_logits(A @ E.T, multi_hot) at V = 1M: median time and peak RSS.
  jax       the same with lobench.jax.cut_binary_cross_entropy against a jitted dense BCE (jax.grad).

Dense points whose working set (factor × P × V × 4 bytes, see DENSE_FACTOR) exceeds the memory available
now minus 2 GiB are reported as skipped, not run: the machine is shared.

Usage: python3 harness/python/bench/bench_python.py [--reps 5] [--threads 2] [--V 1000000]
       [--torch-python /usr/bin/python3] [--cases overhead,torch,jax] [--json out.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

B, N, D, L = 32, 32, 128, 8
P = B * N
# Dense working set in units of P·V·4 bytes (logits, multi-hot targets, the logit gradient and the
# framework's temporaries); a guard only, the measured peak RSS is what is reported.
DENSE_FACTOR = {"torch": 5, "jax": 4}


def rss_mib():
    """The resident set now, by lobench's own meter (harness/meters/peak_rss.hpp), in MiB."""
    from lobench import _ext
    b = _ext.resident_bytes()
    return b / 2**20 if b >= 0 else float("nan")


def peak_rss_mib():
    """The process's peak resident set (VmHWM), by lobench's own meter, in MiB."""
    from lobench import _ext
    b = _ext.peak_resident_bytes()
    return b / 2**20 if b >= 0 else float("nan")


def available_bytes():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def inputs(V, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((P, D), dtype=np.float32)
    E = rng.standard_normal((V, D), dtype=np.float32)
    T = rng.integers(0, V, (P, L)).astype(np.int32)
    return A, E, T


def summary(times):
    times = sorted(times)
    return {"median_s": statistics.median(times), "min_s": times[0], "max_s": times[-1], "reps": len(times)}


def case_overhead(args):
    import lobench
    A, E, T = inputs(args.V)
    lobench.bce(A, E, T, threads=args.threads)  # warm-up
    calls, steps = [], []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        r = lobench.bce(A, E, T, threads=args.threads)
        calls.append(time.perf_counter() - t0)
        steps.append(r.step_seconds)
        del r
    ratios = [c / s - 1 for c, s in zip(calls, steps)]
    return {"case": "overhead", "V": args.V, "call": summary(calls), "step": summary(steps),
            "overhead_median": statistics.median(ratios), "overhead_min": min(ratios), "overhead_max": max(ratios)}


def case_torch(args, which):
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(args.threads)
    import lobench.torch as lbt
    A0, E0, T0 = inputs(args.V)
    A = torch.from_numpy(A0).requires_grad_(True)
    E = torch.from_numpy(E0).requires_grad_(True)
    T = torch.from_numpy(T0).long()
    base = rss_mib()

    def step():
        A.grad = E.grad = None
        if which == "lobench":
            loss = lbt.binary_cross_entropy(A, E, T)
        else:
            Y = torch.zeros(P, args.V).scatter_(1, T, 1.0)  # what a user builds every step
            loss = F.binary_cross_entropy_with_logits(A @ E.T, Y)
        loss.backward()
        return loss.item()

    return run_steps(args, step, base, f"torch_{which}", torch.__version__)


def case_jax(args, which):
    import jax
    import jax.numpy as jnp
    from lobench.jax import cut_binary_cross_entropy
    A0, E0, T0 = inputs(args.V)
    A, E, T = jnp.asarray(A0), jnp.asarray(E0), jnp.asarray(T0)
    V = args.V

    def dense(a, e, t):
        x = a @ e.T
        y = jnp.zeros((P, V), jnp.float32).at[jnp.arange(P)[:, None], t].set(1.0)
        return jnp.mean(jnp.maximum(x, 0) - x * y + jnp.log1p(jnp.exp(-jnp.abs(x))))

    fn = dense if which == "dense" else (lambda a, e, t: cut_binary_cross_entropy(a, e, t, threads=args.threads))
    grad = jax.jit(jax.value_and_grad(fn, argnums=(0, 1)))
    base = rss_mib()

    def step():
        loss, (gA, gE) = grad(A, E, T)
        jax.block_until_ready((gA, gE))
        return float(loss)

    return run_steps(args, step, base, f"jax_{which}", jax.__version__)


def run_steps(args, step, base_rss, name, version):
    first = time.perf_counter()
    loss = step()  # warm-up (jit compile for JAX)
    first = time.perf_counter() - first
    times = []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return {"case": name, "V": args.V, "version": version, "loss": loss, "first_step_s": first, "step": summary(times),
            "rss_before_step_mib": base_rss, "peak_rss_mib": peak_rss_mib()}


def child(args):
    kind, _, which = args.child.partition(":")
    if kind == "overhead":
        out = case_overhead(args)
    elif kind == "torch":
        out = case_torch(args, which)
    else:
        out = case_jax(args, which)
    print("RESULT " + json.dumps(out))


def spawn(args, interp, case):
    kind, _, which = case.partition(":")
    if which == "dense":
        need = DENSE_FACTOR[kind] * P * args.V * 4
        avail = available_bytes() - 2 * 2**30
        if need > avail:
            return {"case": f"{kind}_dense", "V": args.V,
                    "skipped": f"OOM predicted: {need / 2**30:.1f} GiB > {avail / 2**30:.1f} GiB available"}
    cmd = [interp, os.path.abspath(__file__), "--child", case, "--V", str(args.V), "--reps", str(args.reps),
           "--threads", str(args.threads)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"case": case, "V": args.V, "failed": (p.stderr or p.stdout)[-800:]}


def show(r):
    if "skipped" in r or "failed" in r:
        print(f"{r['case']:>16}  V={r['V']:>8}  {r.get('skipped') or 'FAILED: ' + r['failed']}")
    elif r["case"] == "overhead":
        print(f"{'overhead':>16}  V={r['V']:>8}  call {r['call']['median_s'] * 1e3:8.1f} ms  C++ step "
              f"{r['step']['median_s'] * 1e3:8.1f} ms  overhead median {r['overhead_median'] * 100:5.2f} % "
              f"(min {r['overhead_min'] * 100:.2f} %, max {r['overhead_max'] * 100:.2f} %, {r['call']['reps']} reps)")
    else:
        s = r["step"]
        print(f"{r['case']:>16}  V={r['V']:>8}  step median {s['median_s']:7.3f} s (min {s['min_s']:.3f}, max "
              f"{s['max_s']:.3f}, {s['reps']} reps)  peak RSS {r['peak_rss_mib']:8.0f} MiB (before the step "
              f"{r['rss_before_step_mib']:.0f} MiB)  loss {r['loss']:.6f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--V", type=int, default=None, help="vocabulary (default 100k for overhead, 1M for training)")
    ap.add_argument("--torch-python", default="/usr/bin/python3", help="interpreter that has torch")
    ap.add_argument("--cases", default="overhead,torch,jax")
    ap.add_argument("--json", default=None, help="also write the results here")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    results = []
    for kind in args.cases.split(","):
        interp = args.torch_python if kind == "torch" else sys.executable
        sub = argparse.Namespace(**vars(args))
        if kind == "overhead":
            sub.V = args.V or 100_000
            results.append(spawn(sub, interp, "overhead"))
            show(results[-1])
            continue
        sub.V = args.V or 1_000_000
        for which in ("lobench", "dense"):
            results.append(spawn(sub, interp, f"{kind}:{which}"))
            show(results[-1])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
