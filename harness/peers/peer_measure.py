"""How the peers measure, the same way lobench does (results/SCHEMA.md): threads bound for real, adaptive
repetitions, the process's peak RSS growth over a step, and the flags of an untrustworthy row.

Threads. XLA has no flag for the size of its CPU thread pool (XLA_FLAGS rejects
`--intra_op_parallelism_threads`, and without the `--` the word is silently ignored); its pool, like
OpenBLAS's, OpenMP's and PyTorch's defaults, is sized from the CPUs the process may run on. So a peer
binds itself to its first N allowed CPUs with os.sched_setaffinity before numpy or the framework is imported
(bind_from_argv, first thing in each peer script), sets the usual thread variables to N, and, where the framework has a call for it (PyTorch's
set_num_threads), uses that too. ThreadMeter then counts, from /proc/self/task, how many threads did the
work of the timed steps: what the row's reason reports beside the bound.
"""
import math
import os
import time

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def bind_cores(threads):
    """Binds this process to its first `threads` allowed CPUs (before any framework starts its pools) and
    sets the thread variables; returns the CPUs bound. Fewer CPUs than asked is an error: the row would
    claim threads it never had."""
    allowed = sorted(os.sched_getaffinity(0))
    if threads < 1 or threads > len(allowed):
        raise ValueError(f"--threads {threads}: this process may run on {len(allowed)} CPUs ({allowed})")
    cores = allowed[:threads]
    os.sched_setaffinity(0, cores)
    for name in THREAD_VARIABLES:
        os.environ[name] = str(threads)
    return cores


def bind_from_argv(argv=None, default=2):
    """bind_cores for the --threads of a peer's command line, to be called before numpy, h5py or any
    framework is imported (OpenBLAS, OpenMP and XLA size their pools when they load). Returns the CPUs bound,
    or None for a value the argument parser will reject later."""
    import sys
    argv = sys.argv[1:] if argv is None else argv
    value = str(default)
    for i, word in enumerate(argv):
        if word == "--threads" and i + 1 < len(argv):
            value = argv[i + 1]
        elif word.startswith("--threads="):
            value = word.split("=", 1)[1]
    try:
        return bind_cores(int(value))
    except ValueError:
        return None


def _thread_ticks():
    """CPU clock ticks (user + system) of every thread of this process, by thread id."""
    ticks = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ticks[tid] = int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15 of proc(5))
        except (OSError, IndexError, ValueError):
            pass  # a thread that ended meanwhile
    return ticks


class ThreadMeter:
    """Threads that worked during the timed steps: those with at least a tenth of the busiest one's CPU time
    (clock ticks of 10 ms, so only a rough count for steps shorter than a second)."""

    def __enter__(self):
        self.before = _thread_ticks()
        return self

    def __exit__(self, *exc):
        after = _thread_ticks()
        used = sorted((t - self.before.get(tid, 0) for tid, t in after.items()), reverse=True)
        self.total_ticks = sum(used)
        self.busy = sum(1 for u in used if used and u >= max(1, used[0] / 10)) if used and used[0] > 0 else 0
        return False


def _status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def release_free_heap():
    """glibc's malloc_trim(0): returns the freed heap memory the allocator keeps (a dense step's [P, V] buffers,
    freed after the warm-up, stay resident otherwise and would hide the next step's peak); False where there
    is no glibc."""
    import ctypes
    try:
        return bool(ctypes.CDLL("libc.so.6").malloc_trim(0) >= 0)
    except (OSError, AttributeError):
        return False


class RssMeter:
    """The process's peak resident memory during a block minus its resident memory before it, in bytes: the
    peak (VmHWM) is reset by writing "5" to /proc/self/clear_refs; where that is refused, growth is NaN and
    `note` says why. With trim, freed heap memory is returned to the system first (release_free_heap)."""

    def __init__(self, trim=False):
        self.trim = trim

    def __enter__(self):
        self.note = ""
        self.growth = math.nan
        if self.trim and not release_free_heap():
            self.note = "malloc_trim unavailable: RSS growth may miss memory the allocator kept"
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            self.reset = True
        except OSError as e:
            self.reset = False
            self.note = f"RSS peak not reset ({e.strerror or e}): rss_growth_bytes not measured"
        self.rss_before = _status_kib("VmRSS") * 1024
        return self

    def __exit__(self, *exc):
        if self.reset:
            self.growth = float(_status_kib("VmHWM") * 1024 - self.rss_before)
        return False


class Repetitions:
    """When to stop timing, as lobench's default: at least `min_reps` timed runs, continuing until their total
    reaches min_time and their CV is at most cv_target, at most max_reps, and stopping once the total reaches
    max_time (after min_reps). A fixed count (`reps`) overrides all of it."""

    def __init__(self, reps=None, min_time=1.0, max_reps=20, max_time=30.0, cv_target=0.05, min_reps=3):
        if reps is not None and reps < 1:
            raise ValueError(f"--reps {reps}: needs at least 1")
        if max_reps < min_reps:
            raise ValueError(f"--max-reps {max_reps}: needs at least {min_reps}")
        self.reps, self.min_time, self.max_reps, self.max_time = reps, min_time, max_reps, max_time
        self.cv_target, self.min_reps = cv_target, min_reps

    def done(self, samples):
        n = len(samples)
        if self.reps is not None:
            return n >= self.reps
        if n < self.min_reps:
            return False
        total = sum(samples)
        return n >= self.max_reps or total >= self.max_time or (total >= self.min_time and cv(samples) <= self.cv_target)

    def describe(self):
        if self.reps is not None:
            return f"{self.reps} fixed reps"
        return (f"adaptive reps (>= {self.min_reps}, total >= {self.min_time:g} s and CV <= {100 * self.cv_target:g} %, "
                f"<= {self.max_reps}, stop at {self.max_time:g} s)")


def cv(samples):
    """Coefficient of variation (sample standard deviation / mean); NaN for fewer than 2 samples."""
    n = len(samples)
    if n < 2:
        return math.nan
    mean = sum(samples) / n
    var = sum((x - mean) ** 2 for x in samples) / (n - 1)
    return math.sqrt(var) / mean if mean > 0 else math.nan


def time_steps(step, warmup, repetitions, clock=time.perf_counter, self_timed=False):
    """Runs `step` (which must block until its result is ready) `warmup` times untimed, then timed until
    `repetitions` says done; returns (samples in seconds, the last step's result). A self-timed step returns
    (result, seconds) itself (a GPU step timed by device events)."""
    result = None
    for _ in range(warmup):
        result = step()
    samples = []
    while not repetitions.done(samples):
        t0 = clock()
        result = step()
        seconds = clock() - t0
        if self_timed:
            result, seconds = result
        samples.append(seconds)
    return samples, result


def flags_of(time_cv, gemm_fraction, busy=False):
    """The row's `flags`: what makes it untrustworthy (comma-separated; empty when nothing does)."""
    out = []
    if busy:
        out.append("busy")
    if math.isfinite(time_cv) and time_cv > 0.05:
        out.append("noisy")
    if math.isfinite(gemm_fraction) and gemm_fraction > 1:
        out.append("above_yardstick")
    return ",".join(out)


def add_timing_args(ap):
    ap.add_argument("--reps", type=int, default=None,
                    help="fixed number of timed runs (default: adaptive, as lobench: see --min-time, --max-reps, --max-time)")
    ap.add_argument("--min-time", type=float, default=1.0, help="adaptive: total timed seconds to reach (default 1)")
    ap.add_argument("--max-reps", type=int, default=20, help="adaptive: at most this many timed runs (default 20)")
    ap.add_argument("--max-time", type=float, default=30.0,
                    help="adaptive: stop once the timed runs total this many seconds, after 3 (default 30)")
    ap.add_argument("--warmup", type=int, default=1)


def repetitions_of(args):
    return Repetitions(args.reps, args.min_time, args.max_reps, args.max_time)
