"""The loop every peer runs: for each point of its command line (peer_rows.points), one row of the run file's
own type, appended and flushed before the next point, measured the way lobench measures (peer_measure.py).

A peer is an object with:
  variant, where (framework, version and device, for the reason), on_gpu, threads (the row's `threads`:
  the CPUs the process is bound to, 0 on a GPU), cores (the CPUs bound, or None), device_limit (bytes, or
  None for the run file's mem_limit_bytes), block_v (recorded in the row; 0: not a tiled peer);
  skip_reason(operand) -> text or None; predicted_bytes(P, V, D, L) -> its working set (what the skip by
  memory compares; for a dense peer 3·P·V·4); prepare(operand, A, E, T, V) -> a step callable that runs one
  loss-and-gradient step, blocks until it is done and returns the loss (inputs are moved to the device
  there, untimed); how(operand) -> text; is_oom(exception) -> bool; after_timing(row) (extra columns, e.g. a
  GPU allocator's peak); release() (drop the point's buffers); optionally self_timed (True: the step returns
  (loss, seconds), e.g. from CUDA events).
"""
import gc
import math
import os
import sys

import peer_measure
import peer_rows


def _threads_note(peer, meter, samples):
    """Which CPUs, how many threads did the work and the CPU time per wall second of the timed steps (at most
    the CPUs bound; less when the machine is shared)."""
    if peer.on_gpu:
        return ""
    cores = ",".join(map(str, peer.cores)) if peer.cores else "?"
    if meter.total_ticks < 20:  # under 0.2 s of CPU time: too few clock ticks to tell
        return f"; CPUs {cores} (sched_setaffinity)"
    per_wall = meter.total_ticks / os.sysconf("SC_CLK_TCK") / sum(samples)
    return f"; CPUs {cores} (sched_setaffinity), {meter.busy} threads worked, CPU/wall {per_wall:.2f}"


def _set_yardsticks(run, peer, row, P, D, op):
    """The run's GEMM rate (and FMA peak) for the row; returns a note when there is none."""
    if peer.on_gpu:
        row["gemm_gflops"] = run.gpu_gemm_gflops(P, D, op)
        return ""
    gemm, fma, source = run.cpu_yardsticks(peer.threads, P, D)
    row["gemm_gflops"] = gemm
    if "fma_peak_gflops" in row.dtype.names:
        row["fma_peak_gflops"] = fma
    return "" if math.isfinite(gemm) else f"; {source}"


def _measure(peer, row, args, repetitions, point, yardstick_note):
    """Times one point into the row (status ok) and returns its samples; raises what the framework raises."""
    B, N, D, L, V, op = point
    P = B * N
    A, E, T = peer_rows.inputs(args.seed, P, V, D, L)
    step = peer.prepare(op, A, E, T, V)
    for _ in range(args.warmup):
        step()
    with peer_measure.ThreadMeter() as meter:
        samples, loss = peer_measure.time_steps(step, 0, repetitions, self_timed=getattr(peer, "self_timed", False))
    # The memory meter: one more, untimed step after the allocator's freed memory is returned, so that
    # buffers kept from the previous steps neither hide this step's peak nor slow the timed ones.
    rss_note = ""
    if not peer.on_gpu:  # a GPU peer's memory is the device's (after_timing)
        with peer_measure.RssMeter(trim=True) as rss:
            step()
        if "rss_growth_bytes" in row.dtype.names:
            row["rss_growth_bytes"] = rss.growth
        rss_note = f"; {rss.note}" if rss.note else ""
    peer_rows.set_times(row, samples)
    row["loss"] = float(loss)
    peer.after_timing(row)
    row["output_bytes"] = (P * D + V * D) * 4 + 8
    row["status"] = b"ok"
    peer_rows.set_reason(row, f"{peer.where}, {peer.how(op)}{_threads_note(peer, meter, samples)}"
                              f"{yardstick_note}{rss_note}")
    return samples


def _package_versions():
    """The versions of the Python packages that can change a peer's numbers, as imported in this process
    ("jax 0.10.2; jaxlib 0.10.2; ..."): the run file's provenance of its framework rows."""
    import importlib.metadata
    found = []
    for module, dist in (("numpy", "numpy"), ("ml_dtypes", "ml-dtypes"), ("jax", "jax"), ("jaxlib", "jaxlib"),
                         ("keras", "keras"), ("torch", "torch")):
        if module in sys.modules:
            version = getattr(sys.modules[module], "__version__", None)
            if version is None:
                try:
                    version = importlib.metadata.version(dist)
                except importlib.metadata.PackageNotFoundError:
                    version = "unknown"
            found.append(f"{module} {version}")
    return "; ".join(found)


def run_points(run, args, peer):
    """Measures every point and appends its row; returns the number of rows appended."""
    run.set_attribute(f"peer_{peer.variant}_packages", f"python {sys.version.split()[0]}; {_package_versions()}")
    limit = args.mem_limit_gib * 2**30 if args.mem_limit_gib else (peer.device_limit or run.mem_limit)
    repetitions = peer_measure.repetitions_of(args)
    rows = 0
    for point in peer_rows.points(args):
        B, N, D, L, V, op = point
        P = B * N
        if args.skip_existing and run.has_row(peer.variant, B, N, D, L, V, op, peer.threads, args.seed, peer.block_v):
            print(f"{peer.variant} B={B} N={N} V={V} D={D} L={L} {op}: already in {args.run}, left out", flush=True)
            continue
        row = run.new_row(peer.variant, B, N, D, L, V, op, peer.threads, args)
        row["predicted_bytes"] = peer.predicted_bytes(P, V, D, L)
        row["block_v"] = peer.block_v
        yardstick_note = _set_yardsticks(run, peer, row, P, D, op)
        samples = []
        why = peer.skip_reason(op)
        if why:
            row["status"] = b"skipped"
            peer_rows.set_reason(row, f"{why} ({peer.where})")
        elif row["predicted_bytes"] > limit:
            row["status"] = b"skipped"
            peer_rows.set_reason(row, f"OOM predicted: {row['predicted_bytes'] / 2**30:.2f} GiB > "
                                      f"{'GPU ' if peer.on_gpu else ''}limit {limit / 2**30:.2f} GiB ({peer.where})")
        else:
            try:
                samples = _measure(peer, row, args, repetitions, point, yardstick_note)
            except Exception as e:  # an out-of-memory error at run time is recorded as lobench records OOM
                samples = []
                text = str(e).strip()
                first = text.splitlines()[0] if text else type(e).__name__
                if peer.is_oom(e):
                    row["status"] = b"skipped"
                    peer_rows.set_reason(row, f"OOM: {first[:110]} ({peer.where})")
                else:
                    row["status"] = b"failed"
                    peer_rows.set_reason(row, f"{type(e).__name__}: {first[:150]}")
            finally:
                peer.release()
                gc.collect()
        print(peer_rows.describe(row), flush=True)
        run.append(row, samples)
        rows += 1
    print(f"appended {rows} {peer.variant} rows to {args.run}")
    return rows
