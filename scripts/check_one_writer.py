#!/usr/bin/env python3
"""lobench writes every HDF5 file through one writer, io::RunFileWriter (harness/io/run_file_writer.hpp):
run files grown row by row, and files written whole (a check's output, a quantized array, a checkpoint,
a table). That is where a file is made in a temporary file and renamed, locked, fsynced, and left as it
was on an error (docs/reliability.md). This check keeps it so: outside tests/ folders, no C++ source
(.hpp/.cpp/.cu/.cuh/.h) may create an HDF5 file or open one for writing (h5::create_file,
h5::open_file_rw, H5Fcreate, H5Fopen with H5F_ACC_RDWR), and no Python file of the package, the scripts
or the plots may open one with h5py for writing (modes w, w-, x, a, r+), except the files listed in
ALLOWED with their role.

Usage: check_one_writer.py [ROOT]    (exit 1 with file:line for each other writer)
       check_one_writer.py --self-test
"""
import os
import re
import sys

import checker_main

# file -> why it may make or open an HDF5 file for writing
ALLOWED = {
    "harness/io/run_file_writer.cpp": "the one writer",
    "harness/io/h5_io.hpp": "declares create_file and open_file_rw, which only the writer calls",
    "harness/io/h5_io.cpp": "defines them (H5Fcreate, H5Fopen read-write)",
}

CPP_ROOTS = ["precision_sim", "datasets", "variants", "harness", "examples"]
PY_ROOTS = ["harness/python", "plots", "scripts", "examples"]
CPP_SUFFIXES = (".hpp", ".cpp", ".cu", ".cuh", ".h")
CPP_WRITE = re.compile(r"\b(create_file|open_file_rw|H5Fcreate)\s*\(|H5F_ACC_RDWR")
PY_WRITE = re.compile(r"""h5py\.File\s*\([^)]*?(?:mode\s*=\s*)?["'](w|w-|x|a|r\+)["']""")
THIS = "scripts/check_one_writer.py"  # names the calls to forbid them


def files(root, tops, suffixes):
    for top in tops:
        for folder, dirs, names in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "build")) and d not in ("tests", "__pycache__"))
            for n in sorted(names):
                if n.endswith(suffixes):
                    yield os.path.relpath(os.path.join(folder, n), root)


def check(root):
    """Lines `file:line: ...` for each write outside ALLOWED, and for each ALLOWED file that writes none."""
    errors, writers = [], set()
    sources = [(p, CPP_WRITE) for p in files(root, CPP_ROOTS, CPP_SUFFIXES)]
    sources += [(p, PY_WRITE) for p in files(root, PY_ROOTS, (".py",)) if p != THIS]
    for path, pattern in sources:
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                code = line.split("//")[0] if path.endswith(CPP_SUFFIXES) else line.split("#")[0]
                m = pattern.search(code)
                if not m:
                    continue
                writers.add(path)
                if path not in ALLOWED:
                    errors.append(f"{path}:{lineno}: writes an HDF5 file itself ({m.group(0).strip()}); write it "
                                  "through io::RunFileWriter (create(), or begin_whole() and write_whole())")
    for path in sorted(set(ALLOWED) - writers):
        if os.path.exists(os.path.join(root, path)):
            errors.append(f"{THIS}: {path} is listed in ALLOWED but writes no HDF5 file any more: remove it")
    return errors


def self_test():
    import tempfile
    tree = {
        "harness/io/run_file_writer.cpp": "file_ = h5::create_file(temp);\n",
        "harness/io/h5_io.hpp": "Handle create_file(const std::string& path);\nHandle open_file_rw(const std::string&);\n",
        "harness/io/h5_io.cpp": "hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, 0, 0);\n",
        "harness/check.cpp": "// h5::create_file( in a comment is no write\n  auto f = h5::create_file(out);\n",
        "harness/train/bench/b.cpp": "x = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);\n",
        "harness/seqrec/tests/t.cpp": "auto f = h5::create_file(fixture);\n",  # tests write their inputs
        "harness/seqrec/reader.cpp": "auto f = h5::open_file_read(p);\n",
        "plots/fig.py": "with h5py.File(path, 'r') as f:\n    pass\nwith h5py.File(out, mode=\"a\") as g:\n    pass\n",
        "harness/python/lobench/x.py": "h5py.File(p)  # read\n",
    }
    with tempfile.TemporaryDirectory() as root:
        for path, text in tree.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as fh:
                fh.write(text)
        errors = check(root)
        joined = "\n".join(errors)
        assert "harness/check.cpp:2: writes an HDF5 file itself (create_file(" in joined, joined
        assert "harness/train/bench/b.cpp:1: writes an HDF5 file itself (H5F_ACC_RDWR)" in joined, joined
        assert "plots/fig.py:3: writes an HDF5 file itself" in joined, joined
        assert len(errors) == 3, errors
        os.remove(os.path.join(root, "harness/io/h5_io.cpp"))
        with open(os.path.join(root, "harness/io/h5_io.cpp"), "w") as fh:
            fh.write("// nothing\n")
        assert any("h5_io.cpp is listed in ALLOWED but writes no HDF5 file" in e for e in check(root))
    print("self-test passed")
    return 0


def main(argv):
    return checker_main.run(argv, check, self_test, "{n} HDF5 writer(s) outside io::RunFileWriter", "every HDF5 file is written through io::RunFileWriter")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
