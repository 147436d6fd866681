"""Peer `torch_dense` (`--variants lobench.peer_torch_dense:TorchDense`): what a PyTorch user runs.
torch.nn.functional.binary_cross_entropy_with_logits on dense [P, V] logits A @ Eᵀ against multi-hot
targets, with the position weights as its `weight` and the contract's reduction, forward and backward
for A and E; the cut counts from the logits. On the GPU when torch sees one: self-timed by CUDA events
around the step, its memory torch.cuda.max_memory_allocated above what was allocated before the targets
were built (the row's timing_source `self_timed`, memory_meter `framework_counter`); else the CPU with
torch.set_num_threads(--threads), timed by the engine's clock, its memory the process's RSS growth. Operands: fp32 (no TF32), tf32 (GPU only), bf16 (autocast:
A and E stay float32 leaves, the product runs in bfloat16 with float32 accumulation).

Debian's torch serves /usr/bin/python3 only (docs/peers.md): run `/usr/bin/python3 -m lobench run ...`
for its rows (scripts/table2.sh does); the build tree's lobench is importable there too."""
from lobench._peer_common import multi_hot, operand_skip_reason, reduction_weights
from lobench.python_variants import Variant

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None


class TorchDense(Variant):
    name = "torch_dense"
    description = "peer: PyTorch binary_cross_entropy_with_logits over dense [P, V] logits"

    def __init__(self):
        self.self_timed = torch is not None and torch.cuda.is_available()
        self._base = None  # bytes allocated on the GPU before the working set

    def skip_reason(self, shape, options):
        if torch is None:
            return "torch is not importable here (Debian's python3-torch serves /usr/bin/python3)"
        on_gpu = torch.cuda.is_available()
        if options["operand"] == "tf32" and not on_gpu:
            return "tf32 is a GPU matmul mode"
        return operand_skip_reason(options, ("fp32", "tf32", "bf16"))

    def predicted_bytes(self, shape, options):
        return 3 * shape["P"] * shape["V"] * 4  # logits, multi-hot targets, their gradient: float32

    def prepare(self, A, E, targets, weights, reduction, options):
        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        operand = options["operand"]
        if dev.type == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = operand == "tf32"
        else:
            torch.set_num_threads(options["threads"])
        P, V = A.shape[0], E.shape[0]
        w, scale = reduction_weights(weights, reduction, P, V)
        # Copies: the engine's arrays are read-only and must not become autograd leaves.
        At = torch.tensor(A, device=dev, requires_grad=True)
        Et = torch.tensor(E, device=dev, requires_grad=True)
        if self.self_timed:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            self._base = torch.cuda.memory_allocated()
        y = torch.from_numpy(multi_hot(targets, V)).to(dev)
        wt = torch.from_numpy(w).to(dev)[:, None]

        def loss_and_grads():
            At.grad = Et.grad = None
            with torch.autocast(device_type=dev.type, dtype=torch.bfloat16, enabled=operand == "bf16"):
                x = At @ Et.T
                loss = scale * F.binary_cross_entropy_with_logits(x, y, weight=wt, reduction="sum")
            loss.backward()
            with torch.no_grad():
                pred, pos = x > 0, y > 0
                counts = torch.stack([(pred & pos).sum(1), (pred & ~pos).sum(1), (~pred & pos).sum(1),
                                      (~pred & ~pos).sum(1)], 1)
            return loss, At.grad, Et.grad, counts

        def to_host(outputs):
            return tuple(o.detach().cpu().numpy() for o in outputs)

        def step():
            if not self.self_timed:
                return to_host(loss_and_grads())
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            outputs = loss_and_grads()
            stop.record()
            stop.synchronize()
            return start.elapsed_time(stop) * 1e-3, to_host(outputs)  # seconds on the device, outputs

        return step

    def measured_peak_bytes(self):
        if not self.self_timed:
            return None  # the CPU: no allocator counter; the engine's RSS meter
        return torch.cuda.max_memory_allocated() - self._base
