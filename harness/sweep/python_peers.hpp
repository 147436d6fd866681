// The framework peers: implementations of the step in JAX, Keras and PyTorch that are Python variants of
// the package lobench (harness/python/lobench/peer_*.py, docs/peers.md). They run only inside Python's
// engine (`python -m lobench run`), but they are known here by name, so that `lobench list` shows them
// and `--variants jax_dense` takes their short name: Python's engine loads the class a short name
// names (lobench/engine.py, through lobench._engine.python_peers()), and the C++ program, which cannot
// run them, says where they run. harness/python/tests/test_python_peers.py holds this table to the
// classes (each name, description and module) and to the peer modules (none missing).
#pragma once

#include <string>
#include <vector>

namespace lobench {

struct PythonPeer {
  std::string name;         // the variant's name (the class's `name`), what --variants takes
  std::string spec;         // module:Class, what Python's engine loads
  std::string description;  // the class's `description`
};

const std::vector<PythonPeer>& python_peers();
// The peer called `name`, or nullptr.
const PythonPeer* find_python_peer(const std::string& name);

}  // namespace lobench
