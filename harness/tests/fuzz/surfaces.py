"""Hostile cases for the surfaces added after issue 11 (issue 23), registered into hostile_inputs.py:
train-seqrec and train-xmc options and files, merge parts, corrupted global-heap string attributes,
h5py-made inputs (filters, virtual datasets), LOBENCH_ISA, a full disk, concurrent writers of one path,
and MPI ranks started with different options.

The full-disk cases write into a small tmpfs mounted in the case folder when this process may mount
(root, or CAP_SYS_ADMIN); otherwise the command runs under a file-size limit (RLIMIT_FSIZE, `ulimit -f`,
SIGXFSZ ignored so that a write fails with EFBIG as it would with ENOSPC). FULL_DISK_METHOD says which.
"""
import glob
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import h5py
import numpy as np

FULL_DISK_METHOD = None  # "tmpfs" or "RLIMIT_FSIZE", decided on first use (LOBENCH_FUZZ_NO_MOUNT=1: the latter)

SEQ_GOOD = "".join(f"{u} " + " ".join(str(1 + (u * 7 + i * 3) % 40) for i in range(12)) + "\n" for u in range(1, 31))
SEQREC = ["train-seqrec", "--dataset", "{d}/seq.txt", "--L", "1", "--N", "4", "--B", "2", "--D", "8", "--heads", "1",
          "--layers", "1", "--steps", "1", "--eval-every", "-1", "--threads", "1", "--quiet", "--mem-limit", "1G",
          "--dry-run", "--out", "{d}/out.h5"]
XMC = ["train-xmc", "--out-dir", "{d}/runs", "--dataset", "synthetic:tiny", "--syn-scale", "0.01", "--epochs", "1",
       "--dim", "8", "--quiet", "--dry-run", "--threads", "1", "--mem-limit", "1G"]
RUN = ["run", "--B", "1", "--N", "4", "--V", "50", "--D", "4", "--L", "2", "--variants", "chunked", "--reps", "1",
       "--warmup", "0", "--threads", "1", "--mem-limit", "1G", "--no-accuracy"]


def with_opt(argv, opt, val):
    """argv with option `opt` set to `val`: replaced where argv has it already (options are given once)."""
    a = list(argv)
    if opt in a:
        a[a.index(opt) + 1] = val
    else:
        a += [opt, val]
    return a


def seq_file(text=SEQ_GOOD, name="seq.txt", mode="w"):
    def setup(d):
        with open(f"{d}/{name}", mode) as f:
            f.write(text)
    return setup


def run_lobench(exe, argv, timeout=120, **kw):
    return subprocess.run([exe] + argv, capture_output=True, text=True, timeout=timeout, **kw)


# ---------------------------------------------------------------------------------------------------
# files the command may not read (issue 37: an unreadable file was called missing)


def unreadable(path, content=b"1 2 3 4 5\n"):
    """A file at `path` (under the case folder) of mode 000, in folders that another user may enter and
    write (the command may run as nobody: unprivileged)."""
    def setup(d):
        full = f"{d}/{path}"
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(content)
        os.chmod(full, 0)
        os.chmod(d, 0o777)
        os.chmod(os.path.dirname(d), 0o711)  # the suite's folder: entered, not listed
    return setup


def unprivileged():
    """The runner of a case whose command must not read a file of mode 000 (unreadable), or None where no
    such case can be made. Mode 000 stops every user but root, who reads the file all the same: as root
    the command runs as user nobody (setpriv). As root without setpriv the cases are skipped, saying so."""
    if os.geteuid() != 0:
        return lambda d, cmd, env, timeout: _run_in(d, cmd, env, timeout)  # the mode alone stops this user
    setpriv = shutil.which("setpriv")
    if not setpriv:
        print("hostile_inputs: unreadable-file cases skipped: running as root without setpriv, and mode 000 does "
              "not stop root from reading a file", file=sys.stderr)
        return None

    return lambda d, cmd, env, timeout: _run_in(d, [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                                                    "--"] + cmd, env, timeout)


def _run_in(d, cmd, env, timeout):
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, cwd=d, env=env)
        return p.returncode, p.stderr.decode("utf-8", "replace") + p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        return None, (e.stderr or b"").decode("utf-8", "replace")


# ---------------------------------------------------------------------------------------------------
# cached valid files (made once by lobench itself, copied into each case folder)

_CACHE = {}
_CACHE_LOCK = threading.Lock()  # cases run in threads: each file is made once


def cached(exe, key, make):
    with _CACHE_LOCK:
        if key not in _CACHE:
            d = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"lobench-surfaces-{os.getpid()}")
            os.makedirs(d, exist_ok=True)
            _CACHE[key] = make(exe, d)
        return _CACHE[key]


def remove_cache():
    shutil.rmtree(os.path.join(os.environ.get("TMPDIR", "/tmp"), f"lobench-surfaces-{os.getpid()}"), ignore_errors=True)


def make_run_part(exe, d, index=0, count=2):
    path = f"{d}/part{index}of{count}.h5"
    r = run_lobench(exe, RUN + ["--V", "50,60", "--partition", f"{index}/{count}", "--out", path])
    assert r.returncode == 0, r.stderr
    return path


def make_run_file(exe, d):
    path = f"{d}/run.h5"
    r = run_lobench(exe, RUN + ["--V", "50,60,70,80", "--out", path])
    assert r.returncode == 0, r.stderr
    return path


def make_check_input(exe, d):
    path = f"{d}/check_in.h5"
    rng = np.random.default_rng(0)
    with h5py.File(path, "w") as f:
        f["A"] = rng.standard_normal((6, 4)).astype(np.float32)
        f["E"] = rng.standard_normal((9, 4)).astype(np.float32)
        f["targets"] = rng.integers(-1, 9, size=(6, 2)).astype(np.int32)
        f.attrs["reduction"] = "mean"  # h5py stores a str attribute as a variable-length string (global heap)
    return path


def copy_in(src, name):
    def setup(d):
        shutil.copyfile(src, f"{d}/{name}")
    return setup


# ---------------------------------------------------------------------------------------------------
# train-seqrec

SEQREC_BAD_VALUES = {
    "--lr": ["inf", "-inf", "nan", "0", "-1e-3", "1e999"],
    "--weight-decay": ["inf", "nan", "-1"],
    "--dropout": ["1", "1.5", "-0.1", "nan", "inf"],
    "--adam-eps": ["inf", "nan", "-1"],
    "--adam-beta2": ["1", "-0.1", "nan", "inf"],
    "--block": ["x", "post-ln"],
    "--select": ["ndcg@10", ""],
    "--negatives": ["all"],
    "--preset": ["sasrec"],
    "--D": ["0", "-8", "3221225472", "4611686018427387904", "9223372036854775807", "x"],
    "--heads": ["0", "-1", "3", "x"],
    "--N": ["0", "-4", "9223372036854775807"],
    "--B": ["0", "-2", "2000000", "9223372036854775807"],
    "--L": ["0", "-1", "9223372036854775807"],
    "--layers": ["0", "-1", "9223372036854775807"],
    "--steps": ["-1", "x"],
    "--threads": ["0", "-1", "100000"],
    "--syn-scale": ["nan", "-1", "inf"],
    "--max-eval-users": ["-1"],
    "--block-v": ["-1"],
    "--seed": ["-1", "x"],
    "--eval-every": ["-2"],
    "--warmup": ["-1"],
}

SEQ_FILES_BAD = [
    ("empty file", "", ["seq.txt", "empty"]),
    ("only blank lines", "\n\n  \n", ["seq.txt", "empty"]),
    ("UTF-8 BOM", "\ufeff" + SEQ_GOOD, ["seq.txt", "byte-order mark"]),
    ("item 0", "1 0 2 3\n", ["seq.txt:1"]),
    ("item 2^31", f"1 2 {2**31}\n", ["seq.txt:1"]),
    ("user twice", "1 2 3 4\n1 4 5 6\n", ["seq.txt:2"]),
    ("too short for the split", "1 2\n2 3\n", ["seq.txt"]),
    ("word", "1 2 x\n", ["seq.txt:1"]),
]


def register_seqrec(case):
    for opt, values in SEQREC_BAD_VALUES.items():
        for v in values:
            argv = with_opt(SEQREC, opt, v)
            if opt == "--syn-scale":
                argv = with_opt(argv, "--dataset", "synthetic:yambda")
            case(f"train-seqrec {opt} {v}", "seqrec-opts", [opt.lstrip("-").split("-")[0]], argv, seq_file())
    for name, text, tok in SEQ_FILES_BAD:
        case(f"train-seqrec file: {name}", "seqrec-files", tok, SEQREC, seq_file(text))
    # a 2-line file naming item 100000000: planned (skipped over --mem-limit) without a V-sized allocation
    case("train-seqrec item 1e8 dry run", "seqrec-files", [], SEQREC,
         seq_file("1 2 3 4 5 6 7 8 9 100000000\n2 3 4 5 6 7 8 9 10 11\n"), accept=True, allow_new=True)
    for i in range(20):  # random junk and mutated valid files
        rng = random.Random(100 + i)
        b = bytearray(SEQ_GOOD.encode())
        for _ in range(rng.randint(1, 6)):
            b[rng.randrange(len(b))] = rng.choice(b"x -.\x00\xff9\t")
        case(f"train-seqrec mutated file {i}", "seqrec-files", [], SEQREC, seq_file(bytes(b), mode="wb"),
             may_accept=True, allow_new=True)
    def out(path, overwrite=True):
        return with_opt(SEQREC, "--out", path) + (["--overwrite"] if overwrite else [])
    no_out = SEQREC[:SEQREC.index("--out")]
    paths = [
        ("--out is the dataset", out("{d}/seq.txt"), ["seq.txt", "dataset"], None),
        ("--out a hard link to the dataset", out("{d}/link.txt"), ["link.txt", "dataset"],
         lambda d: os.link(f"{d}/seq.txt", f"{d}/link.txt")),
        ("--out a symlink to the dataset", out("{d}/sym.txt"), ["sym.txt", "dataset"],
         lambda d: os.symlink(f"{d}/seq.txt", f"{d}/sym.txt")),
        ("--out under a regular file", out("{d}/file/out.h5", False), ["file", "not a folder"],
         lambda d: open(f"{d}/file", "w").write("keep")),
        ("--out deep under a regular file", out("{d}/file/a/b/out.h5"), ["file", "not a folder"],
         lambda d: open(f"{d}/file", "w").write("keep")),
        ("--out exists", out("{d}/old.h5", False), ["old.h5", "exists"], lambda d: open(f"{d}/old.h5", "w").write("x")),
        ("--out is a directory", out("{d}/dir"), ["dir"], lambda d: os.mkdir(f"{d}/dir")),
        ("--out-dir is a file", no_out + ["--out-dir", "{d}/file"], ["file"],
         lambda d: open(f"{d}/file", "w").write("keep")),
    ]
    for name, argv, tok, more in paths:
        def setup(d, more=more):
            seq_file()(d)
            if more:
                more(d)
        case(f"train-seqrec {name}", "seqrec-paths", tok, argv, setup)


# ---------------------------------------------------------------------------------------------------
# train-seqrec checkpoints (issue 37): --resume-from other data of the same name and counts, a truncated,
# empty or mismatched checkpoint; --checkpoint paths refused at start, and one that would never be written

SEQREC_TRAIN = [a for a in SEQREC if a != "--dry-run"]  # 15 steps an epoch on SEQ_GOOD
# the same users, items and counts as SEQ_GOOD, other sequences: only the content tells them apart
SEQ_OTHER = "".join(f"{u} " + " ".join(str(1 + (u * 5 + i * 3) % 40) for i in range(12)) + "\n" for u in range(1, 31))


def make_seqrec_checkpoint(exe, d):
    """One epoch of the tiny run on SEQ_GOOD with its checkpoint; returns the checkpoint's path."""
    os.makedirs(f"{d}/ck_run", exist_ok=True)
    seq_file()(f"{d}/ck_run")
    argv = [a.replace("{d}", f"{d}/ck_run") for a in with_opt(with_opt(SEQREC_TRAIN, "--steps", "0"), "--eval-every", "1")]
    r = run_lobench(exe, argv + ["--epochs", "1", "--checkpoint", f"{d}/ck_run/ck.h5"])
    assert r.returncode == 0, r.stderr
    return f"{d}/ck_run/ck.h5"


def register_checkpoints(case, exe):
    resume = with_opt(with_opt(SEQREC_TRAIN, "--steps", "0"), "--eval-every", "1") + [
        "--epochs", "2", "--resume-from", "{d}/ck.h5"]

    def with_checkpoint(text=SEQ_GOOD, damage=None):
        def setup(d):
            seq_file(text)(d)
            shutil.copyfile(cached(exe, "seqrec_ck", make_seqrec_checkpoint), f"{d}/ck.h5")
            if damage:
                damage(f"{d}/ck.h5")
        return setup

    def truncate(path):
        data = open(path, "rb").read()
        open(path, "wb").write(data[:len(data) // 2])
    case("train-seqrec --resume-from a checkpoint of other data, same name and counts", "checkpoint",
         ["ck.h5", "another training", "data", "SHA-256"], resume, with_checkpoint(SEQ_OTHER))
    case("train-seqrec --resume-from a truncated checkpoint", "checkpoint", ["ck.h5"], resume,
         with_checkpoint(damage=truncate))
    case("train-seqrec --resume-from an empty checkpoint", "checkpoint", ["ck.h5", "not an HDF5 file"], resume,
         with_checkpoint(damage=lambda p: open(p, "w").close()))
    case("train-seqrec --resume-from a checkpoint of another --lr", "checkpoint", ["ck.h5", "--lr", "0.0005", "0.001"],
         with_opt(resume, "--lr", "0.001"), with_checkpoint())
    case("train-seqrec --resume-from a run file", "checkpoint", ["ck.h5", "not a train-seqrec checkpoint"], resume,
         lambda d: (seq_file()(d), shutil.copyfile(cached(exe, "seqrec_ck", make_seqrec_checkpoint).replace(
             "ck.h5", "out.h5"), f"{d}/ck.h5")))
    one_epoch = with_opt(with_opt(SEQREC_TRAIN, "--steps", "0"), "--eval-every", "1") + ["--epochs", "1"]
    for name, path, tok, more in [
        ("equal to --out (another spelling)", "./out.h5", ["--checkpoint", "--out run file"], None),
        ("a dangling symlink", "{d}/dangling.h5", ["dangling.h5", "symlink to nothing"],
         lambda d: os.symlink(f"{d}/nowhere.h5", f"{d}/dangling.h5")),
        ("in a missing folder", "{d}/nope/ck.h5", ["nope", "does not exist"], None),
        ("the data file", "{d}/seq.txt", ["seq.txt", "--dataset"], None),
    ]:
        def setup(d, more=more):
            seq_file()(d)
            if more:
                more(d)
        case(f"train-seqrec --checkpoint {name}", "checkpoint", tok, one_epoch + ["--checkpoint", path], setup)
    for name, argv in [("--eval-every -1", with_opt(SEQREC_TRAIN, "--steps", "20")),
                       ("--steps 3 (an epoch is 15)", with_opt(with_opt(SEQREC_TRAIN, "--steps", "3"), "--eval-every", "1"))]:
        case(f"train-seqrec --checkpoint never written: {name}", "checkpoint", ["ck.h5", "would never be written"],
             argv + ["--checkpoint", "{d}/ck.h5"], seq_file())


# ---------------------------------------------------------------------------------------------------
# train-xmc: existing run files, duplicate seeds, symlinked names, --layouts-out

def xmc_names(exe, argv):
    r = run_lobench(exe, [a for a in argv if a != "--dry-run"] + ["--list"])
    return [line.strip() for line in r.stdout.splitlines() if line.strip() and not line.endswith(" runs")]


def register_xmc(case, exe):
    names = None

    def existing(kind):
        def setup(d):
            nonlocal names
            names = names or xmc_names(exe, [a.replace("{d}", d) for a in XMC])
            os.makedirs(f"{d}/runs")
            target = f"{d}/runs/{names[0]}.h5"
            if kind == "file":
                open(target, "w").write("an earlier run")
            elif kind == "symlink":
                open(f"{d}/precious.h5", "w").write("not a run file")
                os.symlink(f"{d}/precious.h5", target)
            elif kind == "dir":
                os.mkdir(target)
        return setup
    case("train-xmc run file exists", "xmc-paths", ["exists", "--overwrite"], XMC, existing("file"))
    case("train-xmc run file is a symlink", "xmc-paths", ["symlink"], XMC + ["--overwrite"], existing("symlink"))
    case("train-xmc run file is a directory", "xmc-paths", ["directory"], XMC + ["--overwrite"], existing("dir"))
    for seeds in ["0,0", "1,2,1", "3,3,3"]:
        case(f"train-xmc --seeds {seeds}", "xmc-paths", ["same file"], with_opt(XMC, "--seeds", seeds))
    case("train-xmc --layouts-out exists", "xmc-paths", ["layouts.h5", "exists"],
         ["train-xmc", "--layouts", "1000,2000", "--layouts-out", "{d}/layouts.h5"],
         lambda d: open(f"{d}/layouts.h5", "w").write("keep"))
    for opt, v in [("--epochs", "0"), ("--epochs", "-1"), ("--dim", "0"), ("--batch", "0"), ("--chunks", "0"),
                   ("--clf-lr", "nan"), ("--enc-lr", "inf"), ("--dropout", "1.5"), ("--seeds", "-1"),
                   ("--threads", "0"), ("--labels-total", "-5")]:
        case(f"train-xmc {opt} {v}", "xmc-opts", [opt.lstrip("-").split("-")[0]], with_opt(XMC, opt, v))


# ---------------------------------------------------------------------------------------------------
# merge parts: schema_version and attributes

def register_merge(case, exe):
    def parts(mutate=None):
        def setup(d):
            for i in range(2):
                src = cached(exe, f"part{i}", lambda e, c, i=i: make_run_part(e, c, i, 2))
                shutil.copyfile(src, f"{d}/p{i}.h5")
            if mutate:
                with h5py.File(f"{d}/p1.h5", "r+") as f:
                    mutate(f)
        return setup
    argv = ["merge", "{d}/merged.h5", "{d}/p0.h5", "{d}/p1.h5"]
    case("merge two valid parts", "merge", [], argv, parts(), accept=True, allow_new=True)
    # "next": the version after this lobench's (the part's own plus one: a fixed number here went stale when
    # the schema moved on, and the slow tier that holds this case failed unseen)
    for v in [99, "next", 0, -3, 2.7, float("nan"), float("inf"), -1e300, 2**62]:
        def mutate(f, v=v):
            f.attrs["schema_version"] = int(f.attrs["schema_version"]) + 1 if v == "next" else v
        case(f"merge schema_version {v}", "merge", ["p1.h5", "schema_version"], argv, parts(mutate))
    for name, value in [("string", "3"), ("array", np.array([3.0, 3.0])), ("empty array", np.zeros(0))]:
        def mutate(f, value=value):
            f.attrs["schema_version"] = value
        case(f"merge schema_version {name}", "merge", ["p1.h5", "schema_version"], argv, parts(mutate))
    case("merge part is the output", "merge", ["p0.h5"], ["merge", "{d}/p0.h5", "{d}/p0.h5", "{d}/p1.h5", "--overwrite"],
         parts())
    case("merge part twice", "merge", ["p0.h5"], ["merge", "{d}/m.h5", "{d}/p0.h5", "{d}/p0.h5"], parts())
    case("merge a missing part", "merge", ["part", "nope.h5", "No such file"], ["merge", "{d}/m.h5", "{d}/p0.h5",
                                                                               "{d}/nope.h5"], parts())
    runner = unprivileged()
    if runner:
        def closed_part(d):
            parts()(d)
            os.remove(f"{d}/p1.h5")
            unreadable("p1.h5", open(cached(exe, "part1", lambda e, c: make_run_part(e, c, 1, 2)), "rb").read())(d)
        case("merge a part it cannot read", "merge", ["part", "p1.h5", "cannot be read", "Permission denied"], argv,
             closed_part, runner=runner)
    for attr in ["partition", "sweep_axes"]:
        for value in [np.array([1, 2]), 3.5, "9/2", ""]:
            def mutate(f, attr=attr, value=value):
                f.attrs[attr] = value
            case(f"merge {attr}={value!r}", "merge", ["p"], argv, parts(mutate))


# ---------------------------------------------------------------------------------------------------
# corrupted global heaps (variable-length string attributes): check and merge must refuse, not crash

def corrupt_heap(path, seed):
    data = bytearray(open(path, "rb").read())
    at = data.find(b"GCOL")
    assert at >= 0, "no global heap collection"
    rng = random.Random(seed)
    # the collection header (version, size) and the first objects' headers (index, refcount, size)
    for _ in range(rng.randint(1, 4)):
        k = at + rng.randrange(4, 64)
        data[k] = rng.randrange(256)
    if seed % 3 == 0:  # an object size far beyond the collection
        data[at + 24:at + 32] = (rng.randrange(1 << 40, 1 << 62)).to_bytes(8, "little")
    open(path, "wb").write(bytes(data))


def register_heap(case, exe):
    def check_in(seed):
        def setup(d):
            shutil.copyfile(cached(exe, "check_in", make_check_input), f"{d}/in.h5")
            corrupt_heap(f"{d}/in.h5", seed)
        return setup
    check = ["check", "--variant", "chunked", "--in", "{d}/in.h5", "--out", "{d}/out.h5", "--threads", "1"]
    for seed in range(40):
        case(f"check corrupted global heap {seed}", "heap", ["in.h5"], check, check_in(seed), may_accept=True,
             allow_new=True)

    def part(seed):
        def setup(d):
            for i in range(2):
                shutil.copyfile(cached(exe, f"part{i}", lambda e, c, i=i: make_run_part(e, c, i, 2)), f"{d}/p{i}.h5")
            corrupt_heap(f"{d}/p1.h5", seed)
        return setup
    for seed in range(30):
        case(f"merge corrupted global heap {seed}", "heap", ["p1.h5"], ["merge", "{d}/m.h5", "{d}/p0.h5", "{d}/p1.h5"],
             part(seed), may_accept=True, allow_new=True)

    # issue 37: the first heap object's size raised past its string (byte 25 of the collection: size 5 +
    # 256 v): HDF5's read returned, overrunning its buffer, and merge died later in H5Aclose (v = 64) or at
    # exit with `free(): invalid pointer` (v = 16), leaving m.h5.lock and a .partial. Refused, nothing left.
    def overrun(v):
        def setup(d):
            for i in range(2):
                shutil.copyfile(cached(exe, f"part{i}", lambda e, c, i=i: make_run_part(e, c, i, 2)), f"{d}/p{i}.h5")
            data = bytearray(open(f"{d}/p1.h5", "rb").read())
            at = data.find(b"GCOL")
            data[at + 25] = v
            open(f"{d}/p1.h5", "wb").write(bytes(data))
        return setup
    for v in [16, 64]:
        case(f"merge global heap object overrunning its string ({v})", "heap", ["p1.h5", "global heap"],
             ["merge", "{d}/m.h5", "{d}/p0.h5", "{d}/p1.h5"], overrun(v))


# ---------------------------------------------------------------------------------------------------
# h5py-made inputs: filters and virtual datasets

def register_h5py(case):
    check = ["check", "--variant", "chunked", "--in", "{d}/in.h5", "--out", "{d}/out.h5", "--threads", "1"]
    rng = np.random.default_rng(1)
    arrays = {"A": rng.standard_normal((6, 4)).astype(np.float32), "E": rng.standard_normal((9, 4)).astype(np.float32),
              "targets": rng.integers(-1, 9, size=(6, 2)).astype(np.int32)}
    filters = {"gzip": dict(compression="gzip"), "gzip9+shuffle": dict(compression="gzip", compression_opts=9,
                                                                        shuffle=True),
               "shuffle": dict(shuffle=True, chunks=True), "fletcher32": dict(fletcher32=True, chunks=True),
               "gzip+fletcher32": dict(compression="gzip", fletcher32=True), "lzf": dict(compression="lzf"),
               "lzf+shuffle": dict(compression="lzf", shuffle=True)}
    for fname, kw in filters.items():
        for which in ["A", "E", "targets", "all"]:
            def setup(d, kw=kw, which=which):
                with h5py.File(f"{d}/in.h5", "w") as f:
                    for k, v in arrays.items():
                        f.create_dataset(k, data=v, **(kw if which in (k, "all") else {}))
                    f.attrs["reduction"] = "mean"
            lzf = "lzf" in fname
            # this HDF5 has no LZF filter unless h5py's plugin is installed system-wide: refused, naming it
            case(f"h5py {fname} on {which}", "h5py", ["LZF"] if lzf else [], check, setup, accept=not lzf,
                 may_accept=lzf, allow_new=True)

    def vds(missing=False, same_file=False):
        def setup(d):
            src = "in.h5" if same_file else "src.h5"
            if not same_file:
                with h5py.File(f"{d}/src.h5", "w") as s:
                    s["A_rows"] = arrays["A"]
            with h5py.File(f"{d}/in.h5", "w") as f:
                if same_file:
                    f["A_rows"] = arrays["A"]
                layout = h5py.VirtualLayout(shape=arrays["A"].shape, dtype=np.float32)
                layout[:] = h5py.VirtualSource(src if not same_file else ".", "A_rows", shape=arrays["A"].shape)
                f.create_virtual_dataset("A", layout)
                f["E"] = arrays["E"]
                f["targets"] = arrays["targets"]
                f.attrs["reduction"] = "mean"
            if missing:
                os.remove(f"{d}/src.h5")
        return setup
    case("h5py virtual dataset A", "h5py", [], check, vds(), accept=True, allow_new=True)
    case("h5py virtual dataset A, same file", "h5py", [], check, vds(same_file=True), accept=True, allow_new=True)
    case("h5py virtual dataset A, source missing", "h5py", ["src.h5", "virtual"], check, vds(missing=True))


# ---------------------------------------------------------------------------------------------------
# LOBENCH_ISA

def register_isa(case):
    for v in ["bogus", "AVX2", "avx1024", "portable ", "sse", "0"]:
        for cmd in [["list"], RUN + ["--out", "{d}/run.h5"]]:
            case(f"LOBENCH_ISA={v!r} {cmd[0]}", "isa", ["LOBENCH_ISA"], cmd, env={"LOBENCH_ISA": v})
    # (LOBENCH_PRODUCTS=library: the first run of a build under an ISA times the fp32 products' paths for
    # its cache, 20-30 s on 2 loaded cores, which ran past the case's timeout; that timing is not this case)
    case("LOBENCH_ISA=portable run", "isa", [], RUN + ["--out", "{d}/run.h5"],
         env={"LOBENCH_ISA": "portable", "LOBENCH_PRODUCTS": "library"}, accept=True, allow_new=True)


# ---------------------------------------------------------------------------------------------------
# a full disk

def can_mount():
    global FULL_DISK_METHOD
    with _CACHE_LOCK:
        if FULL_DISK_METHOD is None and os.environ.get("LOBENCH_FUZZ_NO_MOUNT") == "1":
            FULL_DISK_METHOD = "RLIMIT_FSIZE"
        if FULL_DISK_METHOD is None:
            probe = tempfile.mkdtemp(prefix="lobench-mount-probe-")
            ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", probe],
                                capture_output=True).returncode == 0
            if ok:
                ok = subprocess.run(["umount", probe], capture_output=True).returncode == 0
            if ok:
                os.rmdir(probe)
            FULL_DISK_METHOD = "tmpfs" if ok else "RLIMIT_FSIZE"
    return FULL_DISK_METHOD == "tmpfs"


def full_disk_runner(room_bytes):
    """Runs the command with about `room_bytes` of space left beside its existing files."""
    def runner(d, cmd, env, timeout):
        limit = None
        if not can_mount():
            used = max((os.path.getsize(os.path.join(r, n)) for r, _, fs in os.walk(d) for n in fs), default=0)
            limit = used + room_bytes

        if limit is not None:  # through the shell, not preexec_fn (unsafe in this threaded process)
            cmd = ["bash", "-c", f"trap '' XFSZ; ulimit -f {max(0, limit // 1024)}; exec \"$@\"", "lobench"] + cmd
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=timeout, cwd=d, env=env)
            return p.returncode, p.stderr.decode("utf-8", "replace") + p.stdout.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            return None, "timed out"
    return runner


def on_small_disk(setup, room_bytes):
    """setup(d) writes the inputs; with tmpfs they are moved onto a disk with `room_bytes` free."""
    def wrapped(d):
        setup(d)
        if can_mount():
            tmp = d + ".in"
            shutil.move(d, tmp)
            os.makedirs(d)
            # (tmpfs holds a file in whole pages: counted in bytes, two files' partial pages could leave the
            # filler below one page short and the setup itself failing with ENOSPC)
            used = sum((os.path.getsize(os.path.join(r, n)) + 4095) // 4096 * 4096
                       for r, _, fs in os.walk(tmp) for n in fs)
            size = (used + room_bytes + 4096 * 64) // 4096 * 4096
            subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", d], check=True)
            for n in os.listdir(tmp):
                shutil.move(os.path.join(tmp, n), os.path.join(d, n))
            os.rmdir(tmp)
            fill = size - used - room_bytes - 4096
            if fill > 0:  # the rest of the tmpfs taken by a file that was there before
                with open(f"{d}/filler", "wb") as f:
                    f.write(b"\0" * fill)
    return wrapped


def register_full_disk(case, exe):
    def with_run_file(d):
        shutil.copyfile(cached(exe, "run", make_run_file), f"{d}/run.h5")
    resume = RUN + ["--V", "50,60,70,80,90,100,110,120,130,140,150,160", "--out", "{d}/run.h5", "--resume"]
    for room in [0, 512, 4096]:  # too little for the rows --resume would add: refused, the file unchanged
        case(f"run --resume, {room} bytes free", "full-disk", ["run.h5"], resume,
             on_small_disk(with_run_file, room), runner=full_disk_runner(room), may_accept=True)
    seq = with_opt(SEQREC, "--steps", "20")
    seq = [a for a in seq if a != "--dry-run"] + ["--eval-every", "0"]
    for room in [0, 4096, 65536]:
        case(f"train-seqrec, {room} bytes free", "full-disk", ["out.h5"], seq, on_small_disk(seq_file(), room),
             runner=full_disk_runner(room), may_accept=True, failed_run_ok=True)
    xmc_train = [a for a in XMC if a != "--dry-run"]
    for room in [0, 4096, 16384]:
        case(f"train-xmc, {room} bytes free", "full-disk", ["runs"], xmc_train,
             on_small_disk(lambda d: os.makedirs(f"{d}/runs"), room), runner=full_disk_runner(room), may_accept=True)
    for room in [0, 4096]:
        case(f"check, {room} bytes free", "full-disk", ["out.h5"],
             ["check", "--variant", "chunked", "--in", "{d}/in.h5", "--out", "{d}/out.h5", "--threads", "1"],
             on_small_disk(copy_in(cached(exe, "check_in", make_check_input), "in.h5"), room),
             runner=full_disk_runner(room), may_accept=True)
        case(f"merge, {room} bytes free", "full-disk", ["m.h5"], ["merge", "{d}/m.h5", "{d}/p0.h5", "{d}/p1.h5"],
             on_small_disk(lambda d: [shutil.copyfile(cached(exe, f"part{i}", lambda e, c, i=i: make_run_part(e, c, i, 2)),
                                                      f"{d}/p{i}.h5") for i in range(2)], room),
             runner=full_disk_runner(room), may_accept=True)


def unmount_under(d):
    """Unmounts a case's tmpfs (hostile_inputs.py calls it before removing the case folder)."""
    if os.path.ismount(d):
        subprocess.run(["umount", "-l", d], capture_output=True)


# ---------------------------------------------------------------------------------------------------
# two writers of one path

def concurrent_runner(first_argv, wait_for):
    """Starts `first_argv` (the long first writer), waits until `wait_for` (its lock) exists, then runs the
    case's command (the second writer, expected to be refused) while the first still runs; the first must
    then finish with exit 0. Returns the second's exit status and output."""
    def runner(d, cmd, env, timeout):
        first_cmd = [cmd[0]] + [a.replace("{d}", d) for a in first_argv]
        first = subprocess.Popen(first_cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=d, env=env)
        t0 = time.monotonic()
        while not glob.glob(wait_for.replace("{d}", d)) and first.poll() is None and time.monotonic() - t0 < timeout:
            time.sleep(0.005)
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=timeout, cwd=d, env=env)
            rc, text = p.returncode, p.stderr.decode("utf-8", "replace") + p.stdout.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            rc, text = None, "second writer timed out"
        try:
            out, err = first.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            first.kill()
            first.communicate()
            return None, "first writer timed out"
        if first.returncode != 0:
            return 99, f"the first writer failed (exit {first.returncode}): {err.decode('utf-8', 'replace')[-300:]}"
        return rc, text
    return runner


def register_writers(case):
    seq_long = [a for a in with_opt(SEQREC, "--steps", "40000") if a != "--dry-run"]
    # the second writer: the same --out; the same with --overwrite; a symlink to the first one's file
    # (which appears only when the first finishes: until then a symlink to nothing, refused as such)
    for second, argv, tokens in [("same", seq_long, ["out.h5", "another lobench"]),
                                 ("overwrite", seq_long + ["--overwrite"], ["out.h5", "another lobench"]),
                                 ("symlink", with_opt(seq_long, "--out", "{d}/alias.h5") + ["--overwrite"],
                                  ["alias.h5"])]:
        def setup(d, second=second):
            seq_file()(d)
            if second == "symlink":
                os.symlink(f"{d}/out.h5", f"{d}/alias.h5")
        case(f"train-seqrec two writers ({second})", "writers", tokens, argv, setup,
             runner=concurrent_runner(seq_long, "{d}/out.h5.partial-*"), allow_new=True)
    run_long = RUN + ["--V", ",".join(str(v) for v in range(50, 400, 10)), "--reps", "20", "--out", "{d}/run.h5"]
    case("run two writers", "writers", ["run.h5", "another lobench"], run_long + ["--overwrite"], None,
         runner=concurrent_runner(run_long, "{d}/run.h5.lock"), allow_new=True)
    case("run two writers, the second resuming", "writers", ["run.h5", "another lobench"], run_long + ["--resume"],
         None, runner=concurrent_runner(run_long, "{d}/run.h5.lock"), allow_new=True)


# ---------------------------------------------------------------------------------------------------
# MPI ranks with different options

def mpi_runner(rank1_argv, rank1_wdir=None):
    """Rank 0 runs the case's command, rank 1 `rank1_argv` (in `rank1_wdir`, '{d}' the case folder, when given)."""
    def runner(d, cmd, env, timeout):
        mpirun = shutil.which("mpirun")
        second = [cmd[0]] + [a.replace("{d}", d) for a in rank1_argv]
        wdir = ["-wdir", rank1_wdir.replace("{d}", d)] if rank1_wdir else []
        full = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "1"] + cmd + [":", "-np", "1"] + wdir + second
        env = dict(env, OMPI_MCA_btl="self,vader", OMPI_MCA_rmaps_base_oversubscribe="1")
        if "ASAN_OPTIONS" in env:  # the sanitizer job: the ranks' leak stacks must reach libmpi (sanitize.sh)
            env["ASAN_OPTIONS"] += ":fast_unwind_on_malloc=0"
        try:
            p = subprocess.run(full, capture_output=True, timeout=timeout, cwd=d, env=env)
            return p.returncode, p.stderr.decode("utf-8", "replace") + p.stdout.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            return None, "mpirun timed out"
    return runner


def register_mpi(case, exe):
    if not shutil.which("mpirun"):
        return
    base = RUN + ["--shard", "vocab", "--V", "64", "--out", "{d}/run.h5"]
    for opt, a, b in [("--reps", "1", "3"), ("--seed", "0", "1"), ("--reduction", "mean", "sum"), ("--V", "64", "96"),
                      ("--weighted", None, None), ("--threads", "1", "2"), ("--warmup", "0", "2")]:
        if a is None:
            rank1 = base + [opt]
        else:
            base_a, rank1 = with_opt(base, opt, a), with_opt(base, opt, b)
        case(f"mpirun run ranks differ in {opt}", "mpi", ["different options"], base if a is None else base_a, None,
             runner=mpi_runner(rank1))
    xmc = ["train-xmc", "--shard", "labels", "--out-dir", "{d}/runs", "--dataset", "synthetic:tiny", "--syn-scale",
           "0.01", "--epochs", "1", "--dim", "8", "--quiet", "--threads", "1", "--mem-limit", "1G"]
    for opt, a, b in [("--epochs", "1", "2"), ("--seeds", "0", "1"), ("--dim", "8", "16")]:
        case(f"mpirun train-xmc ranks differ in {opt}", "mpi", ["different options"], with_opt(xmc, opt, a), None,
             runner=mpi_runner(with_opt(xmc, opt, b)))
    # train-seqrec --data-parallel (issue 37: --steps hung, --D corrupted the heap, the others ran to exit 0)
    seq = [a for a in SEQREC if a != "--dry-run"] + ["--data-parallel"]
    def two_files(d):
        seq_file()(d)
        seq_file(SEQ_OTHER, name="other.txt")(d)
    for opt, a, b in [("--steps", "1", "2"), ("--D", "8", "16"), ("--lr", "0.001", "0.002"), ("--seed", "0", "1"),
                      ("--dataset", "{d}/seq.txt", "{d}/other.txt")]:
        case(f"mpirun train-seqrec ranks differ in {opt}", "mpi", ["different options", f"{opt} ('"],
             with_opt(seq, opt, a), two_files, runner=mpi_runner(with_opt(seq, opt, b)))
    # the same --dataset path holding other data on rank 1 (another node's copy): its own working folder
    case("mpirun train-seqrec ranks on other data under one name", "mpi", ["different options", "data-sha256"],
         with_opt(seq, "--dataset", "seq.txt"), lambda d: (seq_file()(d), os.mkdir(f"{d}/node1"),
                                                          seq_file(SEQ_OTHER)(f"{d}/node1")),
         runner=mpi_runner(with_opt(seq, "--dataset", "seq.txt"), rank1_wdir="{d}/node1"))


def register(case, exe):
    exe = os.path.abspath(exe)
    register_seqrec(case)
    register_checkpoints(case, exe)
    register_xmc(case, exe)
    register_merge(case, exe)
    register_heap(case, exe)
    register_h5py(case)
    register_isa(case)
    register_full_disk(case, exe)
    register_writers(case)
    register_mpi(case, exe)
