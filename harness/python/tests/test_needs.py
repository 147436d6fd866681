"""A front end whose framework is missing says which front end and how to get it (lobench/_needs.py)."""
import importlib
import sys

import pytest


@pytest.mark.parametrize("front_end, missing, hint", [
    ("lobench.jax", "jax", "pip install jax=="),
    ("lobench.torch", "torch", "pip install torch"),
    ("lobench.nn", "torch", "pip install torch"),
    ("lobench.results", "h5py", "pip install h5py=="),
])
def test_a_missing_framework_is_named_with_the_command(monkeypatch, front_end, missing, hint):
    monkeypatch.setitem(sys.modules, missing, None)  # `import missing` now fails as if not installed
    for name in (front_end, "lobench.torch"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    with pytest.raises(ModuleNotFoundError) as e:
        importlib.import_module(front_end)
    assert front_end in str(e.value) and missing in str(e.value) and hint in str(e.value)


@pytest.mark.parametrize("name", ["results", "jax", "plots"])
def test_an_extras_advice_installs_its_pinned_packages_not_lobench(name):
    # issue 43: `pip install '.[results]'` from a checkout rebuilt the whole C++ program to add h5py and pandas
    from lobench import _needs
    how = _needs.extra(name)
    command = how.split(" (")[0].split()
    assert command[:2] == ["pip", "install"] and len(command) > 2
    assert all("==" in p and not p.startswith((".", "lobench")) for p in command[2:]), how
