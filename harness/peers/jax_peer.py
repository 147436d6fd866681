"""What the JAX peers (jax_dense_bce.py, keras_dense_bce.py, jax_chunked_bce.py) share: JAX started on the
bound CPUs, its device and memory limit, the operand precisions, and the peer object peer_runner.run_points
measures.

Threads: XLA sizes its CPU thread pool from the CPUs the process may run on and has no flag for it (the
XLA_FLAGS word `intra_op_parallelism_threads=N` is not an XLA flag: without `--` it is silently ignored, with
`--` XLA aborts on an unknown flag). So each JAX peer script binds the process to its first N CPUs before
anything is imported (peer_measure.bind_from_argv); each row's reason says which CPUs and how many threads
did the work.
"""
import os

PRECISION = {"fp32": "float32", "tf32": "tensorfloat32", "bf16": "float32"}


def start_jax():
    """Imports JAX (the CPUs already bound: peer_measure.bind_from_argv); returns the module, or None if it is
    not installed."""
    # Allocate on demand, not 75 % of a GPU up front: the limit is the device's, and an out-of-memory
    # point fails alone.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax
    except ImportError:
        return None
    return jax


class JaxPeer:
    """A JAX peer for peer_runner: `make_step(operand, A, E, T, V)` returns a function of no arguments that
    runs one jitted loss-and-gradient step and returns its (loss, grads) without blocking."""

    def __init__(self, jax, variant, cores, threads, make_step, predicted_bytes, how, operands=("fp32", "tf32", "bf16"),
                 block_v=0, framework=""):
        self.jax = jax
        self.variant = variant
        backend = jax.default_backend()
        device = jax.devices()[0]
        self.on_gpu = backend in ("gpu", "cuda", "rocm")
        self.threads = 0 if self.on_gpu else threads
        self.cores = cores
        self.device_limit = None
        if self.on_gpu:
            stats = device.memory_stats() or {}
            self.device_limit = float(stats["bytes_limit"]) if "bytes_limit" in stats else None
        self.where = (f"{framework}jax {jax.__version__}, XLA {backend} "
                      f"({getattr(device, 'device_kind', device.platform)})")
        self.block_v = block_v
        self._make_step, self._predicted, self._how, self._operands = make_step, predicted_bytes, how, operands

    def skip_reason(self, operand):
        if operand not in self._operands:
            return f"operand {operand} not implemented by this peer"
        if operand == "tf32" and not self.on_gpu:
            return "tf32 is a GPU matmul mode"
        return None

    def predicted_bytes(self, P, V, D, L):
        return self._predicted(P, V, D, L)

    def prepare(self, operand, A, E, T, V):
        jax = self.jax
        with jax.default_matmul_precision(PRECISION[operand]):
            run = self._make_step(operand, A, E, T, V)

        def step():
            with jax.default_matmul_precision(PRECISION[operand]):
                loss, _ = jax.block_until_ready(run())
            return loss

        return step

    def how(self, operand):
        return self._how(operand)

    def is_oom(self, e):
        return "RESOURCE_EXHAUSTED" in str(e) or "out of memory" in str(e).lower()

    def after_timing(self, row):
        pass

    def release(self):
        pass


def dense_multi_hot(jax, T, V):
    """The dense targets a framework user builds: [P, V] float32, 1 at each valid id (padding dropped,
    a repeated id once), on the device, outside the timed step."""
    import jax.numpy as jnp
    T = jnp.asarray(T, dtype=jnp.int32)
    rows = jnp.arange(T.shape[0])[:, None]
    valid = (T >= 0) & (T < V)
    return jax.block_until_ready(
        jnp.zeros((T.shape[0], V), jnp.float32).at[rows, jnp.where(valid, T, V)].set(1.0, mode="drop"))
