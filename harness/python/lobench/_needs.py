"""What an optional front end needs, said when it is missing.

`pip install .` installs lobench's core only (NumPy); lobench.torch and lobench.nn need PyTorch,
lobench.jax JAX, lobench.results h5py and pandas (pyproject.toml's extras `jax`, `results`, `plots`).
Without this, importing them failed with a bare "No module named 'torch'" that named neither the front
end nor how to get what it needs.
"""
from __future__ import annotations

import importlib


def require(module: str, front_end: str, how: str) -> None:
    """Imports `module`, or raises ModuleNotFoundError naming the front end that needs it and `how`."""
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError(f"{front_end} needs {module}, which is not installed: {how}", name=e.name) from e


TORCH = "install PyTorch (pip install torch; on Debian, python3-torch for /usr/bin/python3)"
JAX = "pip install 'lobench[jax]' (from a checkout: pip install '.[jax]')"
