"""What an optional front end needs, said when it is missing.

`pip install .` installs lobench's core only (NumPy); lobench.torch and lobench.nn need PyTorch,
lobench.jax JAX, lobench.results h5py and pandas (pyproject.toml's extras `jax`, `results`, `plots`).
Without this, importing them failed with a bare "No module named 'torch'" that named neither the front
end nor how to get what it needs.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import os
import re


def require(module: str, front_end: str, how: str) -> None:
    """Imports `module`, or raises ModuleNotFoundError naming the front end that needs it and `how`."""
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError(f"{front_end} needs {module}, which is not installed: {how}", name=e.name) from e


def extra(name: str) -> str:
    """The command that adds the packages of lobench's extra `name` (pyproject.toml) to this environment:
    `pip install` of the pinned Python packages themselves, never of lobench (`pip install '.[results]'`
    from a checkout builds lobench's C++ again, minutes for what needs seconds)."""
    pins = _pins_from_metadata(name) or _pins_from_pyproject(name)
    if not pins:
        return f"pip install the packages of lobench's '{name}' extra (pyproject.toml)"
    return f"pip install {' '.join(pins)} (lobench's '{name}' extra: Python packages only, lobench is not rebuilt)"


def _pins_from_metadata(name: str) -> list:
    """The extra's requirements as the installed wheel's metadata lists them (an installed lobench)."""
    try:
        requires = importlib.metadata.requires("lobench") or []
    except importlib.metadata.PackageNotFoundError:
        return []
    return [r.split(";")[0].strip() for r in requires if re.search(r"extra\s*==\s*['\"]" + re.escape(name) + "['\"]", r)]


def _pins_from_pyproject(name: str) -> list:
    """The extra's requirements from the checkout's pyproject.toml (the build tree's package links here)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))
    try:
        with open(os.path.join(root, "pyproject.toml"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return []
    m = re.search(r"^" + re.escape(name) + r"\s*=\s*\[([^\]]*)\]", text, re.MULTILINE)
    return re.findall(r'"([^"]+)"', m.group(1)) if m else []


TORCH = "install PyTorch (pip install torch; on Debian, python3-torch for /usr/bin/python3)"
JAX = extra("jax")
