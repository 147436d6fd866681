"""A front end whose framework is missing says which front end and how to get it (lobench/_needs.py)."""
import importlib
import sys

import pytest


@pytest.mark.parametrize("front_end, missing, hint", [
    ("lobench.jax", "jax", "lobench[jax]"),
    ("lobench.torch", "torch", "pip install torch"),
    ("lobench.nn", "torch", "pip install torch"),
    ("lobench.results", "h5py", "lobench[results]"),
])
def test_a_missing_framework_is_named_with_the_command(monkeypatch, front_end, missing, hint):
    monkeypatch.setitem(sys.modules, missing, None)  # `import missing` now fails as if not installed
    for name in (front_end, "lobench.torch"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    with pytest.raises(ModuleNotFoundError) as e:
        importlib.import_module(front_end)
    assert front_end in str(e.value) and missing in str(e.value) and hint in str(e.value)
