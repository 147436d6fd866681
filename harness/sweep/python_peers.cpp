#include "harness/sweep/python_peers.hpp"

namespace lobench {

const std::vector<PythonPeer>& python_peers() {
  static const std::vector<PythonPeer> peers = {
      {"jax_dense", "lobench.peer_jax_dense:JaxDense", "peer: JAX jit(value_and_grad) over dense [P, V] logits"},
      {"keras_dense", "lobench.peer_keras_dense:KerasDense",
       "peer: Keras 3 binary_crossentropy(from_logits=True) on JAX, dense [P, V] logits"},
      {"jax_chunked", "lobench.peer_jax_chunked:JaxChunked",
       "peer: Cut BCE in plain JAX (lax.scan over vocabulary blocks, custom_vjp recomputing logits)"},
      {"torch_dense", "lobench.peer_torch_dense:TorchDense",
       "peer: PyTorch binary_cross_entropy_with_logits over dense [P, V] logits"},
  };
  return peers;
}

const PythonPeer* find_python_peer(const std::string& name) {
  for (const PythonPeer& p : python_peers())
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace lobench
