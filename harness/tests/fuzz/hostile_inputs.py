#!/usr/bin/env python3
"""The hostile-input suite (issue 11): generated bad inputs for every reader and bad values for every
numeric option of every command, each run under a time limit in a folder of its own.

A case passes when the command exits with status 2, its stderr names the input and the problem (every
substring the case lists), nothing new is left in its folder and every file that was there before is
byte-for-byte the same (SHA-256) and of the same kind (a FIFO stays a FIFO, a symlink stays a symlink).
Cases marked `may_accept` (random corruption that may leave a file valid) pass on exit 0 too, as long as
nothing crashed, hung or was changed. `accept` cases are positive controls: exit 0 expected.

Outcomes: refused (pass), accepted (exit 0 where a refusal was expected), crash (a signal, or a
sanitizer report), hang (over the time limit), wrong_exit (another status), unclear_message,
left_output, changed_file.

Cases concerning `run` (its options, --out, --resume) are tagged needs_run_wiring: they run and are
reported separately, and do not fail the suite until `--strict-run` is given (the lead's switch once the
run command calls harness/cli/option_checks and harness/io/output_path). Cases where CLI11 itself
rejects a value (not a number at all) are tagged needs_cli_exit_mapping: main.cpp maps CLI11's exit
codes to 2 (issue 10); until then they are reported separately too (`--strict-cli` makes them count).

Tiers (issue 43): `--tier fast` (ctest hostile_inputs, what CI runs) is every case but the later members
of the generated families in FULL_TIER_FAMILIES (the same check again with another value, dtype or seed)
and the cases tagged `slow`; every group keeps at least one case. `--tier full` (the default; ctest
hostile_inputs_full, label slow) runs them all. A new case is in the fast tier unless tagged `slow` or
another member of one of those families (another bad value of an option that already has one).

Usage: hostile_inputs.py --lobench build/lobench --driver build/harness/fuzz_read_file [--jobs 2]
                         [--timeout 30 (or $LOBENCH_FUZZ_TIMEOUT)] [--filter SUBSTRING] [--tier fast|full] [--strict-run] [--strict-cli]
                         [--list]
"""
import argparse
import concurrent.futures as futures
import hashlib
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

# The cases' setups write and reopen HDF5 files with h5py here while the other worker thread starts
# lobench: a forked child holds a copy of every open descriptor, and with it the HDF5 file's flock,
# until it execs, so a setup reopening the file it has just closed could find it locked (EAGAIN; one
# setup_error in 712 cases under load; a two-thread loop of write, reopen and subprocess.run('true')
# failed 262 times in 3,000 with locking, 0 without). The setups' private files need no lock; lobench's
# own processes keep HDF5's default (CHILD_ENV drops the variable), so the cases test what users get.
os.environ["HDF5_USE_FILE_LOCKING"] = "FALSE"
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "HDF5_USE_FILE_LOCKING"}

import h5py  # noqa: E402  (after the variable above: HDF5 reads it)
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import surfaces  # noqa: E402  (the issue-23 surfaces: training commands, merge, MPI, full disk, writers, h5py)
import run_surfaces  # noqa: E402  (issue 37: plug-in paths, isolation and size options, data files)
from surfaces import with_opt  # noqa: E402  (one copy, shared by both case files)

CASES = []


def case(name, group, tokens, argv, setup=None, tags=(), may_accept=False, accept=False, env=None, runner=None,
         allow_new=False, failed_run_ok=False):
    """Registers a case. argv: list of strings where '{d}' is the case folder; setup(d) writes files.
    env: variables added to the command's environment. runner(d, cmd, env, timeout) -> (rc, text): runs
    the case itself (concurrent writers, mpirun, a full disk; surfaces.py); rc None means it hung.
    allow_new: files the case is meant to create (a first writer's output) are not leftovers.
    failed_run_ok: exit 1 (a sweep that ran and recorded a failed point, e.g. on a full disk) counts as a
    refusal, with the same checks of its message and files."""
    CASES.append(dict(name=name, group=group, tokens=tokens, argv=argv, setup=setup, tags=set(tags),
                      may_accept=may_accept, accept=accept, env=env, runner=runner, allow_new=allow_new,
                      failed_run_ok=failed_run_ok))


# ---------------------------------------------------------------------------------------------------
# HDF5 builders


def write_check_input(path, P=6, V=9, D=4, L=2, skip=(), override=None, reduction="mean", weights=False, attrs=None):
    rng = np.random.default_rng(0)
    data = {
        "A": rng.standard_normal((P, D)).astype(np.float32),
        "E": rng.standard_normal((V, D)).astype(np.float32),
        "targets": rng.integers(-1, V + 1, size=(P, L)).astype(np.int32),
    }
    if weights:
        data["weights"] = rng.uniform(0.5, 2, size=P).astype(np.float32)
    with h5py.File(path, "w") as f:
        for k, v in data.items():
            if k in skip:
                continue
            if override and k in override:
                override[k](f, k)
            else:
                f[k] = v
        if override:
            for k in override:
                if k not in data:
                    override[k](f, k)
        if reduction is not None:
            f.attrs["reduction"] = reduction
        for k, v in (attrs or {}).items():
            f.attrs[k] = v


def huge(shape, dtype=np.float32, chunks=None):
    """A dataset whose header claims `shape` but whose file stores (almost) nothing: chunked, never written."""
    def make(f, k):
        f.create_dataset(k, shape=shape, dtype=dtype, chunks=chunks or tuple(1 for _ in shape))
    return make


def value(x):
    def make(f, k):
        f[k] = x
    return make


def group(f, k):
    f.create_group(k)


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def snapshot(d):
    """Every entry under d: kind, and the content hash of regular files (symlinks not followed)."""
    out = {}
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            p = os.path.join(root, n)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[p] = ("link", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                out[p] = ("file", sha(p))
            elif stat.S_ISDIR(st.st_mode):
                out[p] = ("dir", None)
            elif stat.S_ISFIFO(st.st_mode):
                out[p] = ("fifo", None)
            else:
                out[p] = ("other", st.st_mode)
    return out


# ---------------------------------------------------------------------------------------------------
# check: HDF5 inputs

CHECK = ["check", "--variant", "chunked", "--in", "{d}/in.h5", "--out", "{d}/out.h5", "--threads", "1"]
DTYPES = {
    "float64": np.float64, "float16": np.float16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
    "int8": np.int8, "uint32": np.uint32, "uint64": np.uint64,
}
EXPECTED = {"A": "float32", "E": "float32", "targets": "int32", "weights": "float32"}


def register_check_cases():
    shapes = {"A": (6, 4), "E": (9, 4), "targets": (6, 2), "weights": (6,)}
    for ds in ["A", "E", "targets"]:
        case(f"check missing {ds}", "check-h5", [f"'{ds}'", "missing"], CHECK,
             lambda d, ds=ds: write_check_input(f"{d}/in.h5", skip=(ds,)))
        case(f"check {ds} is a group", "check-h5", [f"'{ds}'", "not a dataset"], CHECK,
             lambda d, ds=ds: write_check_input(f"{d}/in.h5", override={ds: group}))
    for ds in ["A", "E", "targets", "weights"]:
        for tname, t in DTYPES.items():
            if tname == EXPECTED[ds]:
                continue
            case(f"check {ds} dtype {tname}", "check-h5", [f"'{ds}'", tname, EXPECTED[ds]], CHECK,
                 lambda d, ds=ds, t=t: write_check_input(
                     f"{d}/in.h5", weights=True, override={ds: value(np.ones(shapes[ds], dtype=t))}))
        case(f"check {ds} fixed strings", "check-h5", [f"'{ds}'", "string"], CHECK,
             lambda d, ds=ds: write_check_input(f"{d}/in.h5", weights=True,
                                                override={ds: value(np.full(shapes[ds], b"ab", dtype="S2"))}))
        case(f"check {ds} vlen strings", "check-h5", [f"'{ds}'", "string"], CHECK,
             lambda d, ds=ds: write_check_input(f"{d}/in.h5", weights=True, override={ds: value(
                 np.array(["x"] * int(np.prod(shapes[ds])), dtype=h5py.string_dtype()).reshape(shapes[ds]))}))
        case(f"check {ds} compound", "check-h5", [f"'{ds}'", "compound"], CHECK,
             lambda d, ds=ds: write_check_input(f"{d}/in.h5", weights=True, override={ds: value(
                 np.zeros(shapes[ds], dtype=[("a", "<f4"), ("b", "<i4")]))}))
        case(f"check {ds} bool", "check-h5", [f"'{ds}'"], CHECK,
             lambda d, ds=ds: write_check_input(f"{d}/in.h5", weights=True,
                                                override={ds: value(np.ones(shapes[ds], dtype=bool))}))
        rank = len(shapes[ds])
        t = np.int32 if ds == "targets" else np.float32
        for bad_shape in [(), (3,) * (rank + 1), (24,) if rank == 2 else (6, 1)]:
            case(f"check {ds} rank {len(bad_shape)}", "check-h5", [f"'{ds}'", "rank"], CHECK,
                 lambda d, ds=ds, s=bad_shape, t=t: write_check_input(f"{d}/in.h5", weights=True,
                                                                      override={ds: value(np.ones(s, dtype=t))}))
    # zero and mismatched dimensions
    for name, ov, tok in [
        ("A zero rows", {"A": value(np.ones((0, 4), np.float32))}, ["'A'", "empty"]),
        ("A zero columns", {"A": value(np.ones((6, 0), np.float32))}, ["'A'", "empty"]),
        ("E zero rows", {"E": value(np.ones((0, 4), np.float32))}, ["'E'", "empty"]),
        ("E wrong D", {"E": value(np.ones((9, 5), np.float32))}, ["'E'", "D = 5"]),
        ("targets wrong rows", {"targets": value(np.ones((5, 2), np.int32))}, ["'targets'", "rows"]),
        ("targets zero columns", {"targets": value(np.ones((6, 0), np.int32))}, ["'targets'", "L must"]),
        ("weights wrong length", {"weights": value(np.ones(5, np.float32))}, ["'weights'", "5 entries"]),
        ("weights negative", {"weights": value(-np.ones(6, np.float32))}, ["'weights'", ">= 0"]),
        ("weights nan", {"weights": value(np.full(6, np.nan, np.float32))}, ["'weights'", "finite"]),
        ("weights inf", {"weights": value(np.full(6, np.inf, np.float32))}, ["'weights'", "finite"]),
        ("A nan", {"A": value(np.full((6, 4), np.nan, np.float32))}, ["'A'", "non-finite"]),
        ("A inf", {"A": value(np.full((6, 4), -np.inf, np.float32))}, ["'A'", "non-finite"]),
        ("E nan", {"E": value(np.full((9, 4), np.nan, np.float32))}, ["'E'", "non-finite"]),
        ("E inf", {"E": value(np.full((9, 4), np.inf, np.float32))}, ["'E'", "non-finite"]),
        ("logits overflow float32", {"A": value(np.full((6, 4), 1e20, np.float32)),
                                     "E": value(np.full((9, 4), 1e20, np.float32))}, ["overflow float32"]),
        ("A null dataspace", {"A": lambda f, k: f.create_dataset(k, dtype=np.float32, data=h5py.Empty("f4"))},
         ["'A'"]),
    ]:
        case(f"check {name}", "check-h5", tok, CHECK, lambda d, ov=ov: write_check_input(f"{d}/in.h5", override=ov))
    # overflowing and forged dimensions: a small file whose headers claim huge shapes
    for name, ov, tok in [
        ("A and E claim D = 2^62", {"A": huge((1, 2**62)), "E": huge((1, 2**62))}, ["'A'", "overflows"]),
        ("A claims 2^40 x 2^40", {"A": huge((2**40, 2**40))}, ["'A'", "overflows"]),
        ("E claims 2^32 x 2^32 x 2^2", {"E": huge((2**32, 2**32, 4))}, ["'E'", "overflows"]),
        ("A claims 2^20 x 2^12 unwritten", {"A": huge((2**20, 2**12), chunks=(1024, 64))}, ["'A'", "stores only"]),
        ("E claims V = 2^31", {"E": huge((2**31, 4), chunks=(4096, 4))}, ["'E'", "stores only"]),
        ("targets claims 2^62 columns", {"targets": huge((6, 2**62), np.int32)}, ["'targets'"]),
        ("weights claims 2^63 entries", {"weights": huge((2**63 - 1,))}, ["'weights'", "overflows"]),
    ]:
        case(f"check {name}", "check-h5", tok, CHECK, lambda d, ov=ov: write_check_input(f"{d}/in.h5", override=ov))
    # compressed but huge: the storage check cannot apply, the memory limit does
    case("check gzip A of 2^16 x 2^16 above the memory limit", "check-h5", ["memory limit"],
         CHECK + ["--mem-limit", "1G"],
         lambda d: write_check_input(f"{d}/in.h5", override={
             "A": lambda f, k: f.create_dataset(k, shape=(2**16, 2**16), dtype=np.float32, chunks=(256, 256),
                                                compression="gzip"),
             "E": lambda f, k: f.create_dataset(k, shape=(9, 2**16), dtype=np.float32, chunks=(9, 256),
                                                compression="gzip"),
             "targets": value(np.zeros((2**16, 2), np.int32))}))
    case("check 1-byte memory limit", "check-h5", ["memory limit"], CHECK + ["--mem-limit", "1"],
         lambda d: write_check_input(f"{d}/in.h5"))
    # the reduction attribute, and other attributes, of every type and shape
    for name, v, tok in [
        ("array of 2 strings", np.array([b"sum", b"mean"]), ["'reduction'", "2 values"]),
        ("array of 1000 strings", np.array([b"sum"] * 1000), ["'reduction'", "1000 values"]),
        ("vlen array of 3", np.array(["sum", "mean", "x"], dtype=h5py.string_dtype()), ["'reduction'", "3 values"]),
        ("integer", np.int64(3), ["'reduction'", "expected a string"]),
        ("float", 1.5, ["'reduction'", "expected a string"]),
        ("float array", np.ones(7), ["'reduction'", "7 values"]),
        ("2-D string array", np.array([[b"a", b"b"], [b"c", b"d"]]), ["'reduction'", "4 values"]),
        ("compound", np.zeros(1, dtype=[("a", "<f4")])[0], ["'reduction'", "expected a string"]),
        ("median", "median", ["'reduction'", "median"]),
        ("empty string", "", ["'reduction'"]),
        ("fixed 'su'", np.bytes_(b"su"), ["'reduction'", "su"]),
        ("non-ASCII", "süm", ["'reduction'"]),
        ("empty array", np.array([], dtype="S3"), ["'reduction'", "0 values"]),
        ("null dataspace", h5py.Empty("S3"), ["'reduction'"]),
    ]:
        case(f"check reduction {name}", "check-attr", tok, CHECK,
             lambda d, v=v: write_check_input(f"{d}/in.h5", reduction=None, attrs={"reduction": v}))
    # positive controls: attributes that must be read right (class 6: np.bytes_ keeps its last character)
    for name, v in [("np.bytes_ sum", np.bytes_(b"sum")), ("np.bytes_ mean", np.bytes_(b"mean")),
                    ("vlen str sum", "sum"), ("1-element array", np.array([b"sum"])),
                    ("fixed string padded", np.array(b"sum", dtype="S8"))]:
        case(f"check accepts reduction {name}", "check-attr", [], CHECK,
             lambda d, v=v: write_check_input(f"{d}/in.h5", reduction=None, attrs={"reduction": v}), accept=True)
    # truncated, random and corrupted files
    for frac in [0.0, 0.1, 0.5, 0.9, 0.99]:
        def trunc(d, frac=frac):
            write_check_input(f"{d}/full.h5", P=64, V=300, D=16)
            b = open(f"{d}/full.h5", "rb").read()
            os.remove(f"{d}/full.h5")
            open(f"{d}/in.h5", "wb").write(b[: int(len(b) * frac)])
        case(f"check truncated to {int(frac * 100)} %", "check-bytes", ["in.h5"], CHECK, trunc)
    for n, seed in [(0, 0), (1, 1), (100, 2), (4096, 3), (65536, 4)]:
        case(f"check random {n} bytes", "check-bytes", ["in.h5"], CHECK,
             lambda d, n=n, seed=seed: open(f"{d}/in.h5", "wb").write(random.Random(seed).randbytes(n)))
    case("check HDF5 signature then garbage", "check-bytes", ["in.h5"], CHECK,
         lambda d: open(f"{d}/in.h5", "wb").write(b"\x89HDF\r\n\x1a\n" + random.Random(5).randbytes(3000)))
    for seed in range(12):
        def flip(d, seed=seed):
            write_check_input(f"{d}/in.h5", P=16, V=40, D=8)
            b = bytearray(open(f"{d}/in.h5", "rb").read())
            r = random.Random(100 + seed)
            for _ in range(8):
                b[r.randrange(len(b))] = r.randrange(256)
            open(f"{d}/in.h5", "wb").write(bytes(b))
        case(f"check corrupted bytes seed {seed}", "check-bytes", [], CHECK, flip, may_accept=True)


# ---------------------------------------------------------------------------------------------------
# special files and paths, for check and quantize


def make_fifo(p):
    os.mkfifo(p)


def register_path_cases():
    q = ["quantize", "--format", "e4m3fn", "--in", "{d}/in.h5", "--out", "{d}/out.h5"]
    def good_q(d):
        with h5py.File(f"{d}/in.h5", "w") as f:
            f["x"] = np.arange(12, dtype=np.float32).reshape(3, 4)
    def good_c(d):
        write_check_input(f"{d}/in.h5")
    for cmd, base, good in [("check", CHECK, good_c), ("quantize", q, good_q)]:
        def replace(argv, opt, val):
            a = list(argv)
            a[a.index(opt) + 1] = val
            return a
        case(f"{cmd} --in is a FIFO", "paths", ["--in", "FIFO"], replace(base, "--in", "{d}/fifo"),
             lambda d: make_fifo(f"{d}/fifo"))
        case(f"{cmd} --in is a directory", "paths", ["--in", "directory"], replace(base, "--in", "{d}/sub"),
             lambda d: os.mkdir(f"{d}/sub"))
        case(f"{cmd} --in is a symlink to /dev/null", "paths", ["--in", "device"], replace(base, "--in", "{d}/null"),
             lambda d: os.symlink("/dev/null", f"{d}/null"))
        case(f"{cmd} --in is missing", "paths", ["--in", "No such file"], replace(base, "--in", "{d}/absent.h5"))
        case(f"{cmd} --in is a dangling symlink", "paths", ["--in"], replace(base, "--in", "{d}/dangling"),
             lambda d: os.symlink(f"{d}/nowhere", f"{d}/dangling"))
        case(f"{cmd} --out equal to --in", "paths", ["--out", "input"], replace(base, "--out", "{d}/in.h5"), good)
        case(f"{cmd} --out a hard link to --in", "paths", ["--out", "input"], replace(base, "--out", "{d}/link.h5"),
             lambda d, good=good: (good(d), os.link(f"{d}/in.h5", f"{d}/link.h5")))
        case(f"{cmd} --out a symlink to --in", "paths", ["--out", "input"], replace(base, "--out", "{d}/sym.h5"),
             lambda d, good=good: (good(d), os.symlink(f"{d}/in.h5", f"{d}/sym.h5")))
        case(f"{cmd} --out is an empty directory", "paths", ["--out", "directory"], replace(base, "--out", "{d}/sub"),
             lambda d, good=good: (good(d), os.mkdir(f"{d}/sub")))
        case(f"{cmd} --out is a FIFO", "paths", ["--out", "FIFO"], replace(base, "--out", "{d}/fifo"),
             lambda d, good=good: (good(d), make_fifo(f"{d}/fifo")))
        case(f"{cmd} --out is a symlink to /dev/null", "paths", ["--out", "device"],
             replace(base, "--out", "{d}/null"), lambda d, good=good: (good(d), os.symlink("/dev/null", f"{d}/null")))
        case(f"{cmd} --out is a symlink to a directory", "paths", ["--out", "directory"],
             replace(base, "--out", "{d}/dirlink"),
             lambda d, good=good: (good(d), os.mkdir(f"{d}/sub"), os.symlink(f"{d}/sub", f"{d}/dirlink")))
        case(f"{cmd} --out in a missing folder", "paths", ["--out", "does not exist"],
             replace(base, "--out", "{d}/no/such/out.h5"), good)
        case(f"{cmd} --out a dangling symlink", "paths", ["--out", "symlink to nothing"],
             replace(base, "--out", "{d}/dangling"),
             lambda d, good=good: (good(d), os.symlink(f"{d}/nowhere", f"{d}/dangling")))
        # a failing command keeps an existing OUT as it was (class 3: no stale or removed OUT)
        def stale(d, good=good):
            good(d)
            open(f"{d}/out.h5", "wb").write(b"an earlier result")
            with h5py.File(f"{d}/in.h5", "a") as f:
                for k in list(f.keys()):
                    del f[k]
        case(f"{cmd} failing keeps an existing --out", "paths", ["in.h5"], base + ["--overwrite"], stale)
        case(f"{cmd} an existing --out needs --overwrite", "paths", ["out.h5", "--overwrite"], base,
             lambda d, good=good: (good(d), open(f"{d}/out.h5", "wb").write(b"an earlier result")))
    case("@args file is a directory", "paths", ["sub", "directory"], ["@{d}/sub", "check"],
         lambda d: os.mkdir(f"{d}/sub"))
    case("@args file is a FIFO", "paths", ["fifo", "FIFO"], ["@{d}/fifo", "check"], lambda d: make_fifo(f"{d}/fifo"))
    case("@args file is missing", "paths", ["absent.args"], ["@{d}/absent.args", "check"])


# ---------------------------------------------------------------------------------------------------
# quantize: HDF5 inputs and options

def register_quantize_cases():
    q = ["quantize", "--format", "e4m3fn", "--in", "{d}/in.h5", "--out", "{d}/out.h5"]
    def with_x(make):
        def setup(d):
            with h5py.File(f"{d}/in.h5", "w") as f:
                make(f, "x")
        return setup
    for tname, t in DTYPES.items():
        case(f"quantize x dtype {tname}", "quantize-h5", ["'x'", tname], q, with_x(value(np.ones((3, 4), t))))
    for name, make, tok in [
        ("x missing", lambda f, k: f.create_dataset("y", data=np.ones(3, np.float32)), ["'x'"]),
        ("x is a group", group, ["'x'", "not a dataset"]),
        ("x strings", value(np.array([b"ab"] * 4)), ["'x'", "string"]),
        ("x compound", value(np.zeros(4, dtype=[("a", "<f4")])), ["'x'", "compound"]),
        ("x claims 2^62 elements", huge((2**62,)), ["'x'"]),
        ("x claims 2^31 x 2^31 x 2^31", huge((2**31, 2**31, 2**31)), ["'x'", "overflows"]),
        ("x claims 2^30 unwritten", huge((2**30,), chunks=(2**20,)), ["'x'", "stores only"]),
        ("x null dataspace", lambda f, k: f.create_dataset(k, dtype=np.float32, data=h5py.Empty("f4")), ["'x'"]),
    ]:
        case(f"quantize {name}", "quantize-h5", tok, q, with_x(make))
    case("quantize gzip x above the memory limit", "quantize-h5", ["'x'", "memory limit"], q + ["--mem-limit", "1M"],
         with_x(lambda f, k: f.create_dataset(k, shape=(2**20,), dtype=np.float32, chunks=(2**16,),
                                              compression="gzip")))
    for n, seed in [(0, 0), (10, 1), (5000, 2)]:
        case(f"quantize random {n} bytes", "quantize-h5", ["in.h5"], q,
             lambda d, n=n, seed=seed: open(f"{d}/in.h5", "wb").write(random.Random(seed).randbytes(n)))
    def trunc(d):
        with h5py.File(f"{d}/full.h5", "w") as f:
            f["x"] = np.arange(4096, dtype=np.float32)
        b = open(f"{d}/full.h5", "rb").read()
        os.remove(f"{d}/full.h5")
        open(f"{d}/in.h5", "wb").write(b[: len(b) // 2])
    case("quantize truncated input", "quantize-h5", ["in.h5"], q, trunc)
    good = with_x(value(np.arange(12, dtype=np.float32)))
    for opt, vals, tags in [
        ("--threads", ["0", "-1", "100000", "-2147483648"], ()),
        ("--mem-limit", ["nan", "inf", "0", "-1G", "1e30G", "12Q", "", "-0", "nanG", "1e400"], ()),
        ("--format", ["bogus", "e9m9", "float32", ""], ()),
        ("--rounding", ["bogus", ""], ()),
    ]:
        for v in vals:
            case(f"quantize {opt} {v!r}", "options", [opt.lstrip("-") if opt in ("--format", "--rounding") else opt]
                 if v else [], with_opt(q, opt, v), good, tags=tags)
    for v in ["-1", "32", "1000"]:
        case(f"quantize --bits {v} stochastic", "options", ["--bits"], q + ["--rounding", "stochastic", "--bits", v], good)
    case("quantize --bits with nearest", "options", ["--bits"], q + ["--bits", "3"], good)
    for opt, v in [("--threads", "abc"), ("--threads", "1.5"), ("--seed", "abc"), ("--bits", "x")]:
        case(f"quantize {opt} {v!r} (not a number)", "options", [opt], with_opt(q, opt, v), good,
             tags=("needs_cli_exit_mapping",))


def register_check_option_cases():
    good = lambda d: write_check_input(f"{d}/in.h5")
    for opt, vals in [("--threads", ["0", "-1", "1025", "100000", "-9223372036854775808"]),
                      ("--mem-limit", ["nan", "inf", "0", "-5G", "1e30G", "12Q", "", "1e-9", "G", "5 G"])]:
        for v in vals:
            case(f"check {opt} {v!r}", "options", [opt], with_opt(CHECK, opt, v), good)
    case("check --variant bogus", "options", ["bogus"], with_opt(CHECK, "--variant", "bogus"), good)
    for v in ["abc", "1.5", ""]:
        case(f"check --threads {v!r} (not a number)", "options", ["--threads"], with_opt(CHECK, "--threads", v), good,
             tags=("needs_cli_exit_mapping",))


# ---------------------------------------------------------------------------------------------------
# train-xmc: XC and Mulan ARFF files, its output folder, its options

TRAIN = ["train-xmc", "--out-dir", "{d}/runs", "--epochs", "1", "--dim", "8", "--batch", "4", "--quiet",
         "--threads", "1", "--mem-limit", "2G"]
XC_GOOD = "4 6 3\n0,1 0:1.0 3:0.5\n2 1:2\n1 5:1.5 2:1\n0 0:1\n"

XC_BAD = [
    ("empty file", "", ["train.txt"]),
    ("header words", "rows features labels\n", ["train.txt:1"]),
    ("header negative", "-3 4 2\n", ["train.txt:1"]),
    ("header 2^62 rows", f"{2**62} 4 2\n0 1:1\n", ["train.txt"]),
    ("header 2^40 features", f"1 {2**40} 2\n0 1:1\n", ["train.txt:1"]),
    ("header 2^40 labels", f"1 4 {2**40}\n0 1:1\n", ["train.txt:1"]),
    ("header 2^64", f"1 {2**64} 2\n", ["train.txt:1"]),
    ("two fields", "3 4\n", ["train.txt:1"]),
    ("truncated rows", "3 6 3\n0 1:1\n", ["train.txt", "truncated"]),
    ("label out of range", "1 6 3\n7 1:1\n", ["train.txt:2"]),
    ("feature out of range", "1 6 3\n0 9:1\n", ["train.txt:2"]),
    ("negative label", "1 6 3\n-1 1:1\n", ["train.txt:2"]),
    ("feature 2^40", f"1 6 3\n0 {2**40}:1\n", ["train.txt:2"]),
    ("value nan", "1 6 3\n0 1:nan\n", ["train.txt:2"]),
    ("value inf", "1 6 3\n0 1:inf\n", ["train.txt:2"]),
    ("value word", "1 6 3\n0 1:abc\n", ["train.txt:2"]),
    ("repeated feature", "1 6 3\n0 1:1 1:2\n", ["train.txt:2"]),
    ("missing colon value", "1 6 3\n0 1:\n", ["train.txt:2"]),
    ("extra rows", "1 6 3\n0 1:1\n1 2:1\n", ["train.txt:3"]),
    ("binary junk", None, ["train.txt"]),
    ("NUL bytes", "1 6 3\n0 1:1\x00\x00\n", ["train.txt:2"]),
]

ARFF_HEAD = "@relation r\n@attribute f0 numeric\n@attribute f1 numeric\n@attribute L0 {0,1}\n@attribute L1 {0,1}\n@data\n"
XML = '<?xml version="1.0"?>\n<labels xmlns="http://mulan.sourceforge.net/labels">\n<label name="L0"></label>\n<label name="L1"></label>\n</labels>\n'
ARFF_BAD = [
    ("empty", "", XML, ["d-train.arff"]),
    ("no @data", ARFF_HEAD.replace("@data\n", ""), XML, ["d-train.arff"]),
    ("bad attribute type", ARFF_HEAD.replace("f1 numeric", "f1 blob"), XML, ["d-train.arff:3"]),
    ("sparse index out of range", ARFF_HEAD + "{0 1,7 1}\n", XML, ["d-train.arff:7"]),
    ("sparse index 2^62", ARFF_HEAD + "{%d 1}\n" % 2**62, XML, ["d-train.arff:7"]),
    ("unterminated brace", ARFF_HEAD + "{0 1,2 1\n", XML, ["d-train.arff:7"]),
    ("dense row too short", ARFF_HEAD + "1,2\n", XML, ["d-train.arff:7"]),
    ("label value 2", ARFF_HEAD + "{0 1,2 2}\n", XML, ["d-train.arff:7"]),
    ("value nan", ARFF_HEAD + "{0 nan,2 1}\n", XML, ["d-train.arff:7"]),
    ("value word", ARFF_HEAD + "{0 abc,2 1}\n", XML, ["d-train.arff:7"]),
    ("xml missing label", ARFF_HEAD + "{0 1,2 1}\n", XML.replace("L1", "L9"), ["d.xml"]),
    ("xml malformed", ARFF_HEAD + "{0 1,2 1}\n", "<labels><label name='L0'>", ["d.xml"]),
    ("xml empty", ARFF_HEAD + "{0 1,2 1}\n", "", ["d.xml"]),
    ("binary junk", None, XML, ["d-train.arff"]),
]


def register_train_cases():
    def xc_setup(train_text, seed=0):
        def setup(d):
            if train_text is None:
                open(f"{d}/train.txt", "wb").write(random.Random(seed).randbytes(2000))
            else:
                open(f"{d}/train.txt", "w").write(train_text)
            open(f"{d}/test.txt", "w").write(XC_GOOD)
        return setup
    xc = TRAIN + ["--dataset", "xc:{d}/train.txt,{d}/test.txt"]
    for name, text, tok in XC_BAD:
        case(f"xc {name}", "xc", tok, xc, xc_setup(text))
    case("xc train is a FIFO", "xc", ["train.txt", "FIFO"], xc,
         lambda d: (make_fifo(f"{d}/train.txt"), open(f"{d}/test.txt", "w").write(XC_GOOD)))
    case("xc train is a directory", "xc", ["train.txt", "directory"], xc,
         lambda d: (os.mkdir(f"{d}/train.txt"), open(f"{d}/test.txt", "w").write(XC_GOOD)))
    case("xc train missing", "xc", ["train.txt"], xc, lambda d: open(f"{d}/test.txt", "w").write(XC_GOOD))
    case("xc without a comma", "xc", ["xc:"], TRAIN + ["--dataset", "xc:{d}/train.txt"], xc_setup(XC_GOOD))

    def arff_setup(arff, xml, seed=0):
        def setup(d):
            if arff is None:
                open(f"{d}/d-train.arff", "wb").write(random.Random(seed).randbytes(3000))
            else:
                open(f"{d}/d-train.arff", "w").write(arff)
            open(f"{d}/d-test.arff", "w").write(ARFF_HEAD + "{0 1,2 1}\n{1 1,3 1}\n")
            open(f"{d}/d.xml", "w").write(xml)
        return setup
    mulan = TRAIN + ["--dataset", "mulan:{d}/d"]
    for name, arff, xml, tok in ARFF_BAD:
        case(f"arff {name}", "arff", tok, mulan, arff_setup(arff, xml))
    case("arff train is a FIFO", "arff", ["d-train.arff", "FIFO"], mulan,
         lambda d: (arff_setup("", XML)(d), os.remove(f"{d}/d-train.arff"), make_fifo(f"{d}/d-train.arff")))
    case("arff xml is a directory", "arff", ["d.xml", "directory"], mulan,
         lambda d: (arff_setup(ARFF_HEAD + "{0 1,2 1}\n", XML)(d), os.remove(f"{d}/d.xml"), os.mkdir(f"{d}/d.xml")))

    syn = ["train-xmc", "--out-dir", "{d}/runs", "--dataset", "synthetic:tiny", "--syn-scale", "0.01", "--epochs",
           "1", "--dim", "8", "--quiet", "--dry-run"]
    case("train-xmc --out-dir is a file", "paths", ["--out-dir", "not a folder"],
         ["train-xmc", "--out-dir", "{d}/file", "--dataset", "synthetic:tiny", "--syn-scale", "0.01", "--dry-run",
          "--quiet"], lambda d: open(f"{d}/file", "w").write("keep me"))
    case("train-xmc --out-dir is a FIFO", "paths", ["--out-dir"],
         ["train-xmc", "--out-dir", "{d}/fifo", "--dataset", "synthetic:tiny", "--syn-scale", "0.01", "--dry-run",
          "--quiet"], lambda d: make_fifo(f"{d}/fifo"))
    for opt, vals in [
        ("--threads", ["0", "-1", "5000"]), ("--mem-limit", ["nan", "inf", "0", "1e30G", "-2G", "7X"]),
        ("--epochs", ["0", "-1"]), ("--batch", ["0", "-3"]), ("--dim", ["0", "-1"]),
        ("--dropout", ["nan", "1", "-0.1", "1.5", "inf"]), ("--enc-lr", ["nan", "-1", "inf"]),
        ("--clf-lr", ["nan", "-1", "inf"]), ("--clf-init-std", ["0", "nan", "inf", "-1"]),
        ("--enc-wd", ["nan", "-1", "inf"]), ("--max-steps", ["-1"]), ("--sr-bits", ["-1", "32"]),
        ("--chunks", ["0", "-1"]), ("--tile", ["-1"]), ("--warmup-steps", ["-1"]), ("--eval-every", ["-2"]),
        ("--eval-batch", ["-1"]), ("--hist-every", ["-1"]), ("--propensity-a", ["nan", "inf"]),
        ("--propensity-b", ["nan", "-inf"]), ("--syn-scale", ["0", "-1", "nan", "inf"]),
        ("--labels-total", ["-1", str(2**40)]),
    ]:
        for v in vals:
            case(f"train-xmc {opt} {v!r}", "options", [opt], with_opt(syn, opt, v))
    case("train-xmc --dim 2^40 overflows labels x dim", "options", ["--dim", "overflow"],
         with_opt(with_opt(syn, "--dim", str(2**40)), "--labels-total", str(2**30)))
    case("train-xmc --batch 2^40 overflows batch x labels", "options", ["--batch", "overflow"],
         with_opt(with_opt(syn, "--batch", str(2**40)), "--labels-total", str(2**30)))
    for opt, v in [("--threads", "abc"), ("--epochs", "1.5"), ("--dim", "x")]:
        case(f"train-xmc {opt} {v!r} (not a number)", "options", [opt], with_opt(syn, opt, v),
             tags=("needs_cli_exit_mapping",))
    for v in ["3/3", "-1/2", "1/0", "x", "1", "0/2x", "1/-2", f"0/{2**64}"]:
        case(f"train-xmc --partition {v!r}", "options", ["--partition"], with_opt(syn, "--partition", v))
    for v in ["vocab", "positions", "bogus"]:
        case(f"train-xmc --shard {v!r}", "options", ["--shard", v], with_opt(syn, "--shard", v))

    # `lobench merge` of train-xmc parts (folders of run files)
    def junk_part(d):
        os.mkdir(f"{d}/p0")
        open(f"{d}/p0/run.h5", "wb").write(random.Random(3).randbytes(3000))
    case("merge train-xmc part with a junk .h5", "merge", ["run.h5", "not a run file of any training job"],
         ["merge", "{d}/merged", "{d}/p0"], junk_part)
    case("merge train-xmc part with an HDF5 file of another kind", "merge", ["run.h5", "not a run file of any training job"],
         ["merge", "{d}/merged", "{d}/p0"],
         lambda d: (os.mkdir(f"{d}/p0"), h5py.File(f"{d}/p0/run.h5", "w").attrs.__setitem__("schema", "other")))
    case("merge train-xmc part folder empty", "merge", ["p0", "holds no run files"],
         ["merge", "{d}/merged", "{d}/p0"], lambda d: os.mkdir(f"{d}/p0"))
    case("merge train-xmc part missing", "merge", ["nope", "does not exist"],
         ["merge", "{d}/merged", "{d}/nope", "{d}/p0"], lambda d: os.mkdir(f"{d}/p0"))
    case("merge train-xmc OUT is a file", "merge", ["merged", "exists"], ["merge", "{d}/merged", "{d}/p0"],
         lambda d: (os.mkdir(f"{d}/p0"), open(f"{d}/merged", "w").write("keep me")))


# ---------------------------------------------------------------------------------------------------
# sequence files (through the fuzz driver: no command reads them yet)

SEQ_BAD = [
    ("item 0", "1 0 2 3\n", ["seq.txt:1"]),
    ("negative item", "1 2 -3\n", ["seq.txt:1"]),
    ("item 2^31", f"1 2 {2**31}\n", ["seq.txt:1"]),
    ("item 2^64", f"1 2 {2**64}\n", ["seq.txt:1"]),
    ("word", "1 2 x\n", ["seq.txt:1"]),
    ("user without items", "1\n", ["seq.txt:1"]),
    ("user twice", "1 2 3\n1 4 5\n", ["seq.txt:2"]),
    ("float item", "1 2.5 3\n", ["seq.txt:1"]),
    ("user id word", "u 2 3\n", ["seq.txt:1"]),
    ("NUL bytes", "1 2\x00 3\n", ["seq.txt:1"]),
    ("binary junk", None, ["seq.txt"]),
]


def register_seqrec_cases():
    for name, text, tok in SEQ_BAD:
        def setup(d, text=text):
            if text is None:
                open(f"{d}/seq.txt", "wb").write(random.Random(9).randbytes(2000))
            else:
                open(f"{d}/seq.txt", "w").write(text)
        case(f"seqrec {name}", "seqrec", tok, ["@driver", "seqrec", "{d}/seq.txt"], setup)
    case("seqrec file is a FIFO", "seqrec", ["seq.txt", "FIFO"], ["@driver", "seqrec", "{d}/seq.txt"],
         lambda d: make_fifo(f"{d}/seq.txt"))
    case("seqrec file is a directory", "seqrec", ["seq.txt", "directory"], ["@driver", "seqrec", "{d}/seq.txt"],
         lambda d: os.mkdir(f"{d}/seq.txt"))
    case("seqrec file missing", "seqrec", ["seq.txt"], ["@driver", "seqrec", "{d}/seq.txt"])
    for name, text, tok in XC_BAD:
        def setup(d, text=text):
            if text is None:
                open(f"{d}/train.txt", "wb").write(random.Random(3).randbytes(2000))
            else:
                open(f"{d}/train.txt", "w").write(text)
        case(f"xc reader {name}", "xc", tok, ["@driver", "xc", "{d}/train.txt"], setup)


# ---------------------------------------------------------------------------------------------------
# run: options, --out and --resume (wired: the run command calls option_checks, its run file refuses special files)

RUN = ["run", "--B", "1", "--N", "4", "--V", "50", "--D", "4", "--L", "2", "--variants", "chunked", "--reps", "1",
       "--warmup", "0", "--threads", "1", "--mem-limit", "1G", "--no-accuracy", "--out", "{d}/run.h5"]


def register_run_cases():
    W = ("needs_run_wiring",)
    opt = with_opt
    for o, vals in [
        ("--threads", ["0", "-1", "100000"]), ("--mem-limit", ["nan", "inf", "0", "1e30G", "-1G"]),
        ("--block-v", ["-1"]), ("--block-p", ["-1"]), ("--pad-fraction", ["nan", "-0.5", "2"]),
        ("--dup-fraction", ["nan", "inf"]), ("--reps", ["-1", "100001"]), ("--warmup", ["-1"]),
        ("--min-time", ["nan", "-1"]), ("--cv-target", ["0", "nan", "2"]), ("--max-reps", ["0", "2"]),
        ("--max-time", ["nan", "-1"]), ("--sgemm-n", ["1", "-4096", "1000000"]),
        ("--L", ["0"]), ("--D", ["0", str(2**62)]), ("--V", [str(2**40)]), ("--B", ["-1"]),
    ]:
        for v in vals:
            case(f"run {o} {v!r}", "run", [o], opt(RUN, o, v), tags=W)
    case("run --B 2^32 --N 2^32 overflows P", "run", ["P", "overflow"],
         opt(opt(RUN, "--B", str(2**32)), "--N", str(2**32)), tags=W)
    case("run unknown --e-rounding with fp32", "run", ["e-rounding", "bogus"], RUN + ["--e-rounding", "bogus"], tags=W)
    case("run --out is a directory", "run", ["--out", "directory"], opt(RUN, "--out", "{d}/sub"),
         lambda d: os.mkdir(f"{d}/sub"), tags=W)
    case("run --out is a FIFO", "run", ["--out", "FIFO"], opt(RUN, "--out", "{d}/fifo"),
         lambda d: make_fifo(f"{d}/fifo"), tags=W)
    case("run --out is a symlink to /dev/null", "run", ["--out", "device"], opt(RUN, "--out", "{d}/null"),
         lambda d: os.symlink("/dev/null", f"{d}/null"), tags=W)
    case("run --out exists without --resume", "run", ["--out", "--resume"], RUN,
         lambda d: open(f"{d}/run.h5", "w").write("hours of results"), tags=W)
    resume = RUN + ["--resume"]
    case("run --resume on a text file", "run", ["run.h5"], resume,
         lambda d: open(f"{d}/run.h5", "w").write("not an HDF5 file"), tags=W)
    case("run --resume on random bytes", "run", ["run.h5"], resume,
         lambda d: open(f"{d}/run.h5", "wb").write(random.Random(1).randbytes(4096)), tags=W)
    case("run --resume on an empty file", "run", ["run.h5"], resume, lambda d: open(f"{d}/run.h5", "w").close(),
         tags=W)
    def h5_with(make):
        def setup(d):
            with h5py.File(f"{d}/run.h5", "w") as f:
                make(f)
        return setup
    for name, make, tok in [
        ("array-valued resume_count", lambda f: (f.create_dataset("results", shape=(0,), maxshape=(None,),
                                                                  dtype=[("row_id", "<i8")]),
                                                 f.attrs.__setitem__("resume_count", np.ones(1000))),
         ["resume_count"]),
        ("string resume_count", lambda f: f.attrs.__setitem__("resume_count", "three"), ["run.h5"]),
        ("no results table", lambda f: f.attrs.__setitem__("schema_version", 1), ["results"]),
        ("results is a group", lambda f: f.create_group("results"), ["results"]),
        ("results 2-D", lambda f: f.create_dataset("results", data=np.zeros((3, 3))), ["results"]),
        ("results of floats", lambda f: f.create_dataset("results", shape=(0,), maxshape=(None,), dtype="f8"),
         ["results"]),
        ("results claims 2^40 rows", lambda f: f.create_dataset("results", shape=(2**40,), maxshape=(None,),
                                                                 dtype=[("row_id", "<i8")], chunks=(1024,)),
         ["results"]),
    ]:
        case(f"run --resume on a file with {name}", "run", tok, resume, h5_with(make), tags=W)


# ---------------------------------------------------------------------------------------------------


def run_case(c, exe, driver, timeout, base):
    d = tempfile.mkdtemp(prefix="case-", dir=base)
    try:
        if c["setup"]:
            try:
                c["setup"](d)
            except Exception as e:  # a broken case, not a verdict on lobench: reported, never silent
                return "setup_error", f"{type(e).__name__}: {e}"[:400]
        argv = [a.replace("{d}", d) for a in c["argv"]]
        cmd = [driver] + argv[1:] if argv and argv[0] == "@driver" else [exe] + argv
        before = snapshot(d)
        t0 = time.monotonic()
        env = dict(CHILD_ENV, **(c["env"] or {}))
        if c["runner"]:
            rc, err = c["runner"](d, cmd, env, timeout)
        else:
            try:
                p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, cwd=d, env=env)
                rc, err = p.returncode, p.stderr.decode("utf-8", "replace") + p.stdout.decode("utf-8", "replace")
            except subprocess.TimeoutExpired as e:
                rc, err = None, (e.stderr or b"").decode("utf-8", "replace")
        seconds = time.monotonic() - t0
        after = snapshot(d)
        changed = [p for p, v in before.items() if after.get(p) != v]
        new = [p for p in after if p not in before]
        sanitizer = "AddressSanitizer" in err or "runtime error:" in err or "LeakSanitizer" in err
        if rc is None:
            outcome = "hang"
        elif rc < 0 or rc >= 128 or sanitizer:
            outcome = "crash"
        elif changed:
            outcome = "changed_file"
        elif c["accept"]:
            outcome = "accepted_ok" if rc == 0 else "refused_wrongly"
        elif rc == 0:
            outcome = "accepted_ok" if c["may_accept"] else "accepted"
        elif rc != 2 and not (rc == 1 and c["failed_run_ok"]):
            outcome = "wrong_exit"
        elif new and not c["allow_new"]:
            outcome = "left_output"
        elif not err.strip() or any(t not in err for t in c["tokens"]):
            outcome = "unclear_message"
        else:
            outcome = "refused"
        detail = f"rc={rc} {seconds:.1f}s: " + " ".join(err.strip().splitlines()[-3:])[:400]
        if changed:
            detail += f" changed: {changed}"
        if new and outcome == "left_output":
            detail += f" new: {new}"
        return outcome, detail
    finally:
        # FIFOs and read-only leftovers are removed too; nothing outside the case folder is touched
        surfaces.unmount_under(d)  # a full-disk case's tmpfs
        shutil.rmtree(d, ignore_errors=True)


PASS = {"refused", "accepted_ok"}

# The generated families the fast tier samples: (a regular expression on the case's name, how many cases
# of each value of its first matching group, the first in registration order, the fast tier keeps). Each
# family repeats one check with another value (of an option, a dtype, a seed); the full tier runs them all.
# A family is keyed by what tells its classes apart (the option, the dataset, the command), so each class
# keeps a case: a new option's first bad value is in the fast tier, a fifth bad value of --threads is not.
FULL_TIER_FAMILIES = [
    (r"^((?:quantize|check|train-xmc|run) --[\w-]+) '[^']*'$", 1),  # bad option values (not "(not a number)")
    (r"^(train-(?:seqrec|xmc) --[\w-]+) [^\s,]+$", 1),
    (r"^check (\w+) dtype ", 2),
    (r"^check (\w+) rank ", 1),
    (r"^check (truncated to|random|corrupted bytes seed) ", 1),
    (r"^quantize (x dtype|random) ", 1),
    (r"^(check|merge) corrupted global heap \d+$", 2),
    (r"^train-seqrec (mutated file) \d+$", 2),
    (r"^merge (schema_version) |^merge ([a-z_]+)=", 1),
    (r"^h5py (\S+) on ", 1),
    (r"^LOBENCH_ISA='[^']*' (\w+)$", 1),
    (r"^(\S+)(?: --resume)?, \d+ bytes free$", 1),
    (r"^(train-seqrec|run) two writers", 1),
    (r"^mpirun (run|train-xmc) ranks differ in ", 1),
    # a non-numeric dtype of each kind once: every dataset meets a wrong numeric dtype and rank 0 above
    (r"^check \w+ (fixed strings|vlen strings|compound|bool)$", 1),
    # train-xmc's xc content defects: the reader's own cases (`xc reader ...`, a tenth of the time each)
    # check every message; two through lobench check its refusal (the path defects all stay)
    (r"^(xc) (?!reader |train |without )", 2),
]


def family_of(name):
    """(family index, class) of a case's name under FULL_TIER_FAMILIES, or None outside them."""
    for f, (rx, _) in enumerate(FULL_TIER_FAMILIES):
        m = re.search(rx, name)
        if m:
            return f, next((g for g in m.groups() if g is not None), "")
    return None


def fast_tier(cases):
    """The fast tier of `cases` (their order kept): the first cases of each family's classes (as many as
    the family keeps), every case outside the families but those tagged `slow`, and of every group that
    would have none, its first case."""
    taken = {}
    fast = set()
    for i, c in enumerate(cases):
        if "slow" in c["tags"]:
            continue
        key = family_of(c["name"])
        if key is not None:
            taken[key] = taken.get(key, 0) + 1
            if taken[key] > FULL_TIER_FAMILIES[key[0]][1]:
                continue
        fast.add(i)
    covered = {cases[i]["group"] for i in fast}
    for i, c in enumerate(cases):
        if c["group"] not in covered:
            fast.add(i)
            covered.add(c["group"])
    return [c for i, c in enumerate(cases) if i in fast]


def processes_in(base):
    """The processes still running in a case folder under `base` (their working directory), killed:
    a child a case's lobench forked must end with it, even when the case's timeout killed lobench
    (a damaged HDF5 heap once left forked readers spinning for hours)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
            if cwd.startswith(base + os.sep):
                cmdline = open(f"/proc/{entry}/cmdline", "rb").read().replace(b"\0", b" ").decode("utf-8", "replace")
                found.append((int(entry), cmdline))
                os.kill(int(entry), signal.SIGKILL)
        except (OSError, ValueError):
            continue  # gone meanwhile, or not ours to read
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lobench", required=True)
    ap.add_argument("--driver", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=float(os.environ.get("LOBENCH_FUZZ_TIMEOUT", 30)),
                    help="seconds per case (default 30, or LOBENCH_FUZZ_TIMEOUT: the sanitizer job's is longer)")
    ap.add_argument("--filter", default="")
    ap.add_argument("--tier", choices=("fast", "full"), default="full",
                    help="fast: a sample of the generated families (CI); full: every case (see above)")
    ap.add_argument("--strict-run", action="store_true", help="count needs_run_wiring cases as failures")
    ap.add_argument("--strict-cli", action="store_true", help="count needs_cli_exit_mapping cases as failures")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--no-surfaces", action="store_true", help="only the issue-11 cases (not surfaces.py's)")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    for register in [register_check_cases, register_path_cases, register_quantize_cases,
                     register_check_option_cases, register_train_cases, register_seqrec_cases, register_run_cases]:
        register()
    if not args.no_surfaces:  # issue 23: training commands, merge, MPI, full disks, concurrent writers, h5py
        surfaces.register(case, args.lobench)
        run_surfaces.register(case)
    cases = [c for c in CASES if args.filter in c["name"]]
    if args.tier == "fast":
        cases = fast_tier(cases)
    if args.list:
        for c in cases:
            print(f"{c['group']:<12} {','.join(sorted(c['tags'])):<24} {c['name']}")
        print(f"{len(cases)} cases")
        return 0
    exe, driver = os.path.abspath(args.lobench), os.path.abspath(args.driver)
    base = tempfile.mkdtemp(prefix="lobench-hostile-")
    t0 = time.monotonic()
    try:
        with futures.ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda c: run_case(c, exe, driver, args.timeout, base), cases))
        time.sleep(1)
        survivors = processes_in(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
        surfaces.remove_cache()
    counted, separate = {}, {}
    failures = []
    for c, (outcome, detail) in zip(cases, results):
        pending = ("needs_run_wiring" in c["tags"] and not args.strict_run) or \
                  ("needs_cli_exit_mapping" in c["tags"] and not args.strict_cli)
        bucket = separate if pending else counted
        tag = "+".join(sorted(c["tags"])) or "-"
        bucket.setdefault(tag if pending else "counted", {}).setdefault(outcome, 0)
        bucket[tag if pending else "counted"][outcome] += 1
        if outcome not in PASS:
            line = f"{'PENDING' if pending else 'FAIL'} [{outcome}] {c['group']}: {c['name']} -- {detail}"
            if not pending:
                failures.append(line)
            if not pending or args.verbose:
                print(line)
        elif args.verbose:
            print(f"ok [{outcome}] {c['group']}: {c['name']} -- {detail}")
    print(f"\n{len(cases)} cases in {time.monotonic() - t0:.0f} s")
    for name, counts in list(counted.items()) + list(separate.items()):
        total = sum(counts.values())
        print(f"  {name:<40} {total:>4}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for pid, cmdline in survivors:  # a case's process that outlived its case (e.g. a forked reader)
        failures.append(f"FAIL [outlived its case] pid {pid}: {cmdline[:200]}")
        print(failures[-1])
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
