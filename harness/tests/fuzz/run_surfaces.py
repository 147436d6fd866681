"""Hostile cases of issue 37 on `lobench run`'s plug-in, isolation and option surfaces, and on the data
files a public data set names (registered by hostile_inputs.py, like surfaces.py's). Each is a refusal
with exit status 2 and a message that names the input and what it is, in well under a second: a plug-in
path that is a FIFO is refused before dlopen would block on it, a symlink loop is named as one, sizes and
fractions are decimal, a Python variant named to the C++ program gets the hint to use python -m lobench, and a
data file the user cannot read is said to be unreadable (run as user nobody where the suite runs as root,
whom a file's mode does not stop)."""
import os

from surfaces import SEQREC, unprivileged, unreadable, with_opt

RUN = ["run", "--B", "1", "--N", "4", "--V", "50", "--D", "4", "--L", "2", "--variants", "chunked", "--reps", "1",
       "--warmup", "0", "--threads", "1", "--mem-limit", "1G", "--no-accuracy", "--out", "{d}/run.h5"]


def _fifo(path):
    def setup(d):
        os.makedirs(os.path.dirname(f"{d}/{path}"), exist_ok=True)
        os.mkfifo(f"{d}/{path}")
    return setup


def _loop(path):
    def setup(d):
        os.makedirs(os.path.dirname(f"{d}/{path}"), exist_ok=True)
        os.symlink(f"{d}/{path}", f"{d}/{path}")
    return setup


def register_plugin_paths(case):
    case("run --plugin a FIFO", "plugin", ["plug-in", "fifo.so", "a FIFO"], RUN + ["--plugin", "{d}/p/fifo.so"],
         _fifo("p/fifo.so"))
    case("run --plugin a symlink loop", "plugin", ["plug-in", "loop.so", "a symlink loop"],
         RUN + ["--plugin", "{d}/p/loop.so"], _loop("p/loop.so"))
    # the variable is read relative to the case folder (the command's working directory)
    case("LOBENCH_PLUGIN_PATH folder holding a FIFO named *.so", "plugin", ["LOBENCH_PLUGIN_PATH", "fifo.so", "a FIFO"],
         ["list"], _fifo("p/fifo.so"), env={"LOBENCH_PLUGIN_PATH": "p"})
    case("LOBENCH_PLUGIN_PATH folder holding a looping *.so", "plugin",
         ["LOBENCH_PLUGIN_PATH", "loop.so", "a symlink loop"], ["list"], _loop("p/loop.so"),
         env={"LOBENCH_PLUGIN_PATH": "p"})
    case("LOBENCH_PLUGIN_PATH entry a FIFO", "plugin", ["LOBENCH_PLUGIN_PATH", "fifo.so", "a FIFO"], ["list"],
         _fifo("p/fifo.so"), env={"LOBENCH_PLUGIN_PATH": "p/fifo.so"})
    case("run --variants file.py:Class in the C++ program", "plugin", ["unknown variant", "python -m lobench run"],
         with_opt(RUN, "--variants", "mine.py:Mine"))


def register_run_options(case):
    for opt, val, tokens in [
        ("--mem-limit", "0x10G", ["--mem-limit", "0x10G", "decimal"]),
        ("--mem-limit", "1.9B", ["--mem-limit", "1.9B", "whole number of bytes"]),
        ("--pad-fraction", "0x0.8", ["--pad-fraction", "0x0.8", "decimal"]),
        ("--operand", "fp16", ["--operand", "fp16"]),
        ("--row-timeout", "-1", ["--row-timeout"]),
    ]:
        case(f"run {opt} {val!r}", "run", tokens, with_opt(RUN, opt, val))
    case("run --isolate --no-isolate", "run", ["--isolate", "--no-isolate"], RUN + ["--isolate", "--no-isolate"])
    case("run --row-timeout with --no-isolate", "run", ["--row-timeout", "--no-isolate"],
         RUN + ["--no-isolate", "--row-timeout", "5"])


def register_data_files(case):
    """A public data set's file that is not a readable file says what it is, not "missing file"."""
    argv = with_opt(SEQREC, "--dataset", "lastfm") + ["--data-dir", "{d}/data"]
    for what, setup, token in [
        ("a symlink to /dev/zero", lambda d: (os.makedirs(f"{d}/data/seqrec"),
                                             os.symlink("/dev/zero", f"{d}/data/seqrec/LastFM.txt")), "character device"),
        ("a symlink loop", _loop("data/seqrec/LastFM.txt"), "a symlink loop"),
        ("a folder", lambda d: os.makedirs(f"{d}/data/seqrec/LastFM.txt"), "a folder"),
    ]:
        case(f"train-seqrec --dataset lastfm whose file is {what}", "data", ["LastFM.txt", token], argv, setup)
    runner = unprivileged()
    if runner:
        case("train-seqrec --dataset lastfm whose file is unreadable", "data", ["LastFM.txt", "cannot read"], argv,
             unreadable("data/seqrec/LastFM.txt"), runner=runner)
        case("train-seqrec --dataset FILE unreadable", "data", ["seq.txt", "Permission denied"], SEQREC,
             unreadable("seq.txt"), runner=runner)
        case("run --resume on a run file it cannot read", "run", ["run.h5", "cannot be read", "Permission denied"],
             RUN + ["--resume"], unreadable("run.h5", b"\x89HDF\r\n\x1a\n"), runner=runner)


def register(case):
    register_plugin_paths(case)
    register_run_options(case)
    register_data_files(case)
