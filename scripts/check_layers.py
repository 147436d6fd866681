#!/usr/bin/env python3
"""The include arrows of lobench's C++ sources point down only.

The folders are stacked from low to high (LAYERS below); a file may include files of its own layer and of
lower ones, never of a higher one. Every `#include "..."` of every .hpp/.cpp/.cu/.cuh/.h file under the
listed roots is read; an include that points up is printed as `file:line: includes X (layer L), above
its own layer K` and the script exits with status 1. A file or an included path under none of the
layers' folders is reported too (a new folder must be given its place). PENDING lists the arrows known
to point up today, each with the issue that removes it: they are reported as warnings, and so is an
entry that no longer matches any include (remove it once its arrow is gone).

Usage: check_layers.py [ROOT]   (ROOT: the repository, default: this script's parent folder's parent)
       check_layers.py --self-test  (the checker on a made-up tree with an include pointing up)
"""
import os
import re
import sys

# Low to high. Each layer is a list of path prefixes (a folder ending in '/', or a file stem such as
# 'harness/measure.' for harness/measure.hpp and harness/measure.cpp). A file's layer is that of its
# longest matching prefix. Tests and benches (a 'tests/' or 'bench/' folder) sit in their folder's layer.
LAYERS = [
    ("numbers", ["precision_sim/"]),
    ("data", ["datasets/"]),
    ("variants", ["variants/"]),
    # the engine's base: timing rule, meters, memory, configuration checks, where a result came from
    ("engine base", ["harness/measure.", "harness/system_memory.", "harness/provenance.", "harness/config/",
                     "harness/meters/"]),
    ("engine io", ["harness/io/"]),
    ("engine driver", ["harness/sweep/"]),
    # the applications built on the engine
    ("applications", ["harness/train/", "harness/seqrec/", "harness/shard/", "harness/check.", "harness/gpu/"]),
    # the command line: parsing and dispatch, and what loads plug-ins for it
    ("command line", ["harness/cli/", "harness/plugin/"]),
    # front ends and suites over everything
    ("front ends", ["harness/python/", "harness/tests/", "examples/"]),
]

ROOTS = ["precision_sim", "datasets", "variants", "harness", "examples"]
SOURCE_SUFFIXES = (".hpp", ".cpp", ".cu", ".cuh", ".h")

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


def check(root):
    """Returns (errors, warnings): lines to print."""
    errors, warnings, seen_pending = [], [], set()
    for path in sources(root):
        own = layer_of(path)
        if own is None:
            errors.append(f"{path}: in no layer (add its folder to LAYERS in scripts/check_layers.py)")
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                if "/" not in target:
                    continue  # a file beside it, or a generated header
                theirs = layer_of(target)
                if theirs is None:
                    if target.split("/")[0] in ROOTS:
                        errors.append(f"{path}:{lineno}: includes {target}, which is in no layer")
                    continue
                if theirs[0] <= own[0]:
                    continue
                msg = f"{path}:{lineno}: includes {target} ({theirs[1]}), above its own layer ({own[1]})"
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
    """The checker on a made-up tree: an include pointing up is named by file:line, one pointing down
    and a pending one pass, an unplaced folder is reported, a stale pending entry is a warning."""
    import tempfile
    files = {
        "harness/sweep/driver.cpp": '#include "harness/sweep/driver.hpp"\n// x\n#include "harness/cli/options.hpp"\n',
        "harness/cli/options.cpp": '#include "harness/sweep/driver.hpp"\n#include "variants/variant.hpp"\n',
        "harness/sweep/axes.cpp": '#include "harness/cli/numbers.hpp"\n',
        "harness/newfolder/a.cpp": '#include <vector>\n',
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
    assert "harness/cli/options.cpp" not in joined, joined
    assert "harness/newfolder/a.cpp: in no layer" in joined, joined
    assert any("harness/sweep/axes.cpp:1" in w and "pending" in w for w in warnings), warnings
    assert any("harness/sweep/gone.cpp -> harness/cli/gone.hpp matches no include" in w for w in warnings), warnings
    assert len(errors) == 2, errors  # the upward include and the unplaced folder
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
