#!/usr/bin/env python3
"""The dependency arrows of lobench's sources point down only: C++ includes and the Python package's imports.

The folders are stacked from low to high (LAYERS below); a file may include (or import) files of its own
layer and of lower ones, never of a higher one. Every `#include "..."` of every .hpp/.cpp/.cu/.cuh/.h file
under the listed roots is read, and every import of the package `lobench` (`import lobench.X`,
`from lobench import X`, `from . import X`, imports inside functions too) of every .py file there: an
arrow that points up is printed as `file:line: includes (or imports) X (layer L), above its own layer K` and the
script exits with status 1. The Python package's compiled modules are their C++ sources (`lobench._ext`
is harness/python/lobench_ext.cpp). A file or an included path under none of the layers' folders is
reported too (a new folder must be given its place). PENDING lists the arrows known to point up today,
each with the issue that removes it: they are reported as warnings, and so is an entry that no longer
matches any include (remove it once its arrow is gone).

Usage: check_layers.py [ROOT]   (ROOT: the repository, default: this script's parent folder's parent)
       check_layers.py --self-test  (the checker on a made-up tree with arrows pointing up)
"""
import ast
import os
import re
import sys

# Low to high. Each layer is a list of path prefixes (a folder ending in '/', or a file stem such as
# 'harness/measure.' for harness/measure.hpp and harness/measure.cpp). A file's layer is that of its
# longest matching prefix. Tests and benches (a 'tests/' or 'bench/' folder) sit in their folder's layer.
PY = "harness/python/lobench/"  # the Python package's modules
LAYERS = [
    ("numbers", ["precision_sim/"]),
    ("data", ["datasets/"]),
    ("variants", ["variants/"]),
    # loading plug-ins needs only the contract (and datasets' SHA-256): no engine, no command line
    ("plug-in loading", ["harness/plugin/"]),
    # the engine's base: timing rule, meters, memory, configuration checks, where a result came from
    ("engine base", ["harness/measure.", "harness/system_memory.", "harness/provenance.", "harness/config/",
                     "harness/meters/"]),
    ("engine io", ["harness/io/"]),
    ("engine driver", ["harness/sweep/"]),
    # the applications built on the engine
    ("applications", ["harness/train/", "harness/seqrec/", "harness/shard/", "harness/check.", "harness/gpu/"]),
    # the command line: parsing, the shared option table, the commands and their dispatch
    ("command line", ["harness/cli/"]),
    # the Python package: its compiled modules (the step library _ext, the engine _engine: C++ over the
    # command line), then its own modules from the helpers up to `python -m lobench`
    ("python extensions", ["harness/python/"]),
    ("python support", [PY + "_version.", PY + "_needs.", PY + "_validate.", PY + "_jax_blocked.",
                        PY + "_torch_blocked.", PY + "_peer_common.", PY + "jax_cut_bce.", PY + "python_variants."]),
    ("python front ends", [PY]),  # lobench (NumPy), lobench.torch, .nn, .jax, the framework peers
    ("python command line", [PY + "engine.", PY + "__main__."]),
    # suites and examples over everything
    ("suites", ["harness/tests/", "harness/python/tests/", "harness/python/bench/", "examples/"]),
]

ROOTS = ["precision_sim", "datasets", "variants", "harness", "examples"]
SOURCE_SUFFIXES = (".hpp", ".cpp", ".cu", ".cuh", ".h", ".py")
# The package's compiled modules, by the C++ source that makes each.
EXTENSIONS = {"_ext": "harness/python/lobench_ext.cpp", "_engine": "harness/python/engine_ext.cpp"}

# (including file, included path) -> why it still points up and which issue removes it.
PENDING = {}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    """(index, name) of the layer whose longest prefix matches path, or None."""
    best = None
    for i, (name, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if path.startswith(p) and (best is None or len(p) > best[2]):
                best = (i, name, len(p))
    return None if best is None else best[:2]


def sources(root):
    for top in ROOTS:
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "build")) and d != "__pycache__")
            for f in sorted(files):
                if f.endswith(SOURCE_SUFFIXES):
                    yield os.path.relpath(os.path.join(folder, f), root)


def cpp_includes(text):
    """(line, included path) of each path-qualified #include (a file beside it, or a generated header,
    has no '/' and is skipped)."""
    for lineno, line in enumerate(text.splitlines(), 1):
        m = INCLUDE.match(line)
        if m and "/" in m.group(1):
            yield lineno, m.group(1)


def python_module_file(root, name):
    """The file that makes lobench's module `name` ("lobench", "lobench.jax", "lobench._ext"), or None."""
    parts = name.split(".")
    if parts[0] != "lobench":
        return None
    if len(parts) == 1:
        return PY + "__init__.py"
    if parts[1] in EXTENSIONS:
        return EXTENSIONS[parts[1]]
    candidate = PY + parts[1] + ".py"
    return candidate if os.path.isfile(os.path.join(root, candidate)) else None


def python_imports(root, path, text):
    """(line, file) of each module of the package `lobench` that a Python file imports. `from lobench
    import X` is the module X when there is one, else the package itself; a relative import counts in
    the package's own files only."""
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as e:
        raise ValueError(f"{path}:{e.lineno}: not Python this checker can read: {e.msg}") from e
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if not path.startswith(PY) or node.level > 1:
                    continue
                base = "lobench" + ("." + node.module if node.module else "")
            else:
                base = node.module or ""
            names = [(base, [a.name for a in node.names])]
        else:
            continue
        for module, members in names:
            files = [python_module_file(root, f"{module}.{m}") for m in members if module == "lobench"]
            files = [f for f in files if f] or [python_module_file(root, module)]
            for f in files:
                if f and f != path:
                    yield node.lineno, f


def arrows(root, path):
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    return python_imports(root, path, text) if path.endswith(".py") else cpp_includes(text)


def check(root):
    """Returns (errors, warnings): lines to print."""
    errors, warnings, seen_pending = [], [], set()
    for path in sources(root):
        own = layer_of(path)
        if own is None:
            errors.append(f"{path}: in no layer (add its folder to LAYERS in scripts/check_layers.py)")
            continue
        try:
            found = list(arrows(root, path))
        except ValueError as e:
            errors.append(str(e))
            continue
        verb = "imports" if path.endswith(".py") else "includes"
        for lineno, target in found:
            theirs = layer_of(target)
            if theirs is None:
                if target.split("/")[0] in ROOTS:
                    errors.append(f"{path}:{lineno}: {verb} {target}, which is in no layer")
                continue
            if theirs[0] <= own[0]:
                continue
            msg = f"{path}:{lineno}: {verb} {target} ({theirs[1]}), above its own layer ({own[1]})"
            if (path, target) in PENDING:
                seen_pending.add((path, target))
                warnings.append(f"{msg} [pending: {PENDING[(path, target)]}]")
            else:
                errors.append(msg)
    for key in sorted(set(PENDING) - seen_pending):  # a warning, so that the change removing an arrow passes
        warnings.append(f"scripts/check_layers.py: PENDING entry {key[0]} -> {key[1]} matches no include any "
                        "more: remove it")
    return errors, warnings


def self_test():
    """The checker on a made-up tree: an include or import pointing up is named by file:line (the
    plug-in loader including the command line among them), one pointing down and a pending one pass, an
    unplaced folder is reported, a stale pending entry is a warning."""
    import tempfile
    files = {
        "harness/sweep/driver.cpp": '#include "harness/sweep/driver.hpp"\n// x\n#include "harness/cli/options.hpp"\n',
        "harness/cli/options.cpp": '#include "harness/sweep/driver.hpp"\n#include "variants/variant.hpp"\n',
        "harness/sweep/axes.cpp": '#include "harness/cli/numbers.hpp"\n',
        "harness/newfolder/a.cpp": '#include <vector>\n',
        # the arrow of issue 42: the plug-in folder including the command line's option table
        "harness/plugin/plugin_option.cpp": '#include "harness/plugin/plugin_option.hpp"\n#include "harness/cli/options.hpp"\n',
        "harness/plugin/plugin_loader.cpp": '#include "variants/plugin_api.hpp"\n#include "datasets/sha256.hpp"\n',
        # Python: support below front ends below the command line; relative, absolute and lazy imports
        PY + "__init__.py": "from . import _ext\nfrom ._version import __version__\n",
        PY + "_version.py": "__version__ = '1'\n",
        PY + "python_variants.py": "import os\n\ndef f():\n    from . import engine\n",
        PY + "engine.py": "from . import python_variants as pv\nfrom . import _engine\n",
        PY + "peer_x.py": "from lobench.python_variants import Variant\nimport lobench.engine\n",
        PY + "jax.py": "import lobench\nfrom lobench import _validate, peer_x\n",
        PY + "_validate.py": "import numbers\n",
        "harness/python/engine_ext.cpp": '#include "harness/cli/commands.hpp"\n',
        "harness/python/lobench_ext.cpp": '#include "variants/variant.hpp"\n',
        "examples/python/v.py": "from lobench.python_variants import Variant\n",
    }
    stale = ("harness/sweep/gone.cpp", "harness/cli/gone.hpp")
    pending = ("harness/sweep/axes.cpp", "harness/cli/numbers.hpp")
    PENDING[stale] = "self-test: an entry whose include is gone"
    PENDING[pending] = "self-test: a known upward arrow"
    try:
        with tempfile.TemporaryDirectory() as root:
            for path, text in files.items():
                os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
                with open(os.path.join(root, path), "w") as fh:
                    fh.write(text)
            errors, warnings = check(root)
    finally:
        del PENDING[stale], PENDING[pending]
    joined = "\n".join(errors)
    assert "harness/sweep/driver.cpp:3: includes harness/cli/options.hpp (command line)" in joined, joined
    assert "harness/plugin/plugin_option.cpp:2: includes harness/cli/options.hpp (command line), above its own " \
           "layer (plug-in loading)" in joined, joined
    assert f"{PY}python_variants.py:4: imports {PY}engine.py (python command line), above its own layer " \
           "(python support)" in joined, joined
    assert f"{PY}peer_x.py:2: imports {PY}engine.py (python command line)" in joined, joined
    assert "harness/cli/options.cpp" not in joined and "plugin_loader" not in joined, joined
    assert "harness/newfolder/a.cpp: in no layer" in joined, joined
    assert any("harness/sweep/axes.cpp:1" in w and "pending" in w for w in warnings), warnings
    assert any("harness/sweep/gone.cpp -> harness/cli/gone.hpp matches no include" in w for w in warnings), warnings
    # the upward include, the plug-in's, the two upward imports and the unplaced folder: nothing else
    assert len(errors) == 5, errors
    print("self-test passed")
    return 0


def main(argv):
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    errors, warnings = check(root)
    for w in warnings:
        print("warning:", w)
    for e in errors:
        print("error:", e)
    if errors:
        print(f"{len(errors)} include(s) point up or are unplaced; the layers, low to high: "
              + " < ".join(name for name, _ in LAYERS))
        return 1
    print(f"include arrows point down ({len(warnings)} pending)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
