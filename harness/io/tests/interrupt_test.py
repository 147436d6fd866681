"""Run files survive SIGINT, SIGTERM and SIGHUP (harness/io/interrupt_guard.hpp), end to end (ctest
interrupted_runs): the real `lobench` is interrupted between rows (after the K-th row it printed), in the
middle of a write (signal_at_write.so delivers the signal just before the K-th write to the file), twice
(the second signal inside a write), at random times, and by SIGKILL between rows. Each time the file
must open (h5py and lobench_results), hold exactly the rows the run reported, leave no temporary file,
and `--resume` must finish the sweep; the exit status is 128 + the signal. A run that was to replace a
file (`--overwrite`) leaves that file byte for byte. Then the same for `lobench merge` (never a
half-written OUT), `train-xmc` and `train-seqrec` (the run in progress kept with status
"interrupted").

Two tiers (issue 43): `--tier full` (the default; ctest interrupted_runs_full, label slow) runs every case
below; `--tier fast` (ctest interrupted_runs, what CI runs) keeps a case of every class: each signal between
rows, a signal while the file is created, before the first row and inside a row, two signals within the
file's creation and within a row, one interruption at a random time, and every other check as it is.

Usage: interrupt_test.py --lobench build/lobench --shim build/.../libsignal_at_write.so --plots plots
                         [--tier fast|full] [--random N]
"""
import argparse
import glob
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

SWEEP = ["run", "--variants", "fused,chunked", "--B", "2", "--N", "8", "--V", "2000,3000,4000,5000", "--D", "16",
         "--L", "2", "--reps", "3", "--sgemm-n", "64", "--threads", "1", "--mem-limit", "1G", "--format", "jsonl"]
ROWS = 8
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}", flush=True)
    return cond


def shim_env(k, sig):
    return dict(os.environ, LD_PRELOAD=args.shim, SIGNAL_AT_WRITE=str(k), SIGNAL_AT_WRITE_SIG=str(int(sig)))


def rows_printed(stdout):
    return sum(1 for line in stdout.splitlines() if line.startswith("{"))


def run_until_rows(cmd, rows, sig):
    """Starts cmd, sends sig once it has printed `rows` rows; returns (returncode, rows printed, stderr)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = 0
    for line in p.stdout:
        seen += line.startswith("{")
        if seen == rows:
            p.send_signal(sig)
            break
    out, err = p.communicate(timeout=120)
    return p.returncode, seen + rows_printed(out), err


def file_rows(path, label):
    """The rows of a run file, read by h5py and by the project's reader; None when it does not open."""
    try:
        with h5py.File(path, "r") as f:
            n, samples = len(f["results"]), len(f["samples"])
        df = lr.read(path)
    except (OSError, KeyError, SystemExit, lr.RunFileError) as e:
        check(False, f"{label}: {path} does not open: {e}")
        return None
    check(len(df) == n, f"{label}: lobench_results reads {len(df)} rows, h5py {n}")
    check(samples == 3 * n, f"{label}: {samples} samples for {n} rows of 3 repetitions")
    return n


def no_leftovers(d, label):
    left = glob.glob(os.path.join(d, "**", "*.partial-*"), recursive=True)
    check(not left, f"{label}: temporary files left behind: {left}")


def resume_finishes(out, label, resumes=1):
    r = subprocess.run([args.lobench] + SWEEP + ["--out", out, "--resume"], capture_output=True, text=True)
    if not check(r.returncode == 0, f"{label}: --resume exit {r.returncode}: {r.stderr[-300:]}"):
        return
    with h5py.File(out, "r") as f:
        rows = f["results"][()]
        check(len(rows) == ROWS, f"{label}: {len(rows)} rows after --resume, expected {ROWS}")
        check(list(rows["row_id"]) == list(range(len(rows))), f"{label}: row ids {list(rows['row_id'])}")
        keys = {(r["variant"], r["V"]) for r in rows}
        check(len(keys) == ROWS, f"{label}: a row twice after --resume")
        check(f.attrs.get("resume_count") == resumes, f"{label}: resume_count {f.attrs.get('resume_count')}")


def interrupted_sweep(d, label, sig, rc, printed, err):
    """The checks of a sweep that `sig` stopped: status, message, rows, no leftovers, --resume."""
    out = os.path.join(d, "run.h5")
    check(rc == 128 + sig, f"{label}: exit {rc}, expected {128 + sig}; stderr {err[-300:]}")
    n = file_rows(out, label)
    check(n == printed, f"{label}: {n} rows in the file, {printed} printed")
    want = f"interrupted by {signal.Signals(sig).name}: {printed} of {ROWS} rows kept in {out}; continue with --resume"
    check(want in err, f"{label}: no '{want}' in {err[-300:]}")
    if n is not None and os.path.exists(out):  # end_utc only when the run closes cleanly (results/SCHEMA.md)
        with h5py.File(out, "r") as f:
            check("end_utc" not in f.attrs, f"{label}: an interrupted run's file has end_utc")
    no_leftovers(d, label)
    resume_finishes(out, label)


def between_rows():
    for sig, after in ((signal.SIGINT, 2), (signal.SIGTERM, 5), (signal.SIGHUP, 1)):
        with tempfile.TemporaryDirectory() as d:
            label = f"{sig.name} after row {after}"
            rc, printed, err = run_until_rows([args.lobench] + SWEEP + ["--out", f"{d}/run.h5"], after, sig)
            interrupted_sweep(d, label, sig, rc, printed, err)
            print(f"ok: {label} ({printed} rows kept)", flush=True)


# Where during_writes signals (write k, signal): writes 1-5 create the file (in a temporary file, renamed),
# the run's attributes and the machine limits follow; the first row's append is past 25, then about 7
# writes a row (8 rows: ~115 writes). The fast tier keeps one of each place: creation, before the first
# row, inside a row.
DURING_WRITES = ((1, signal.SIGTERM), (3, signal.SIGINT), (28, signal.SIGTERM), (57, signal.SIGHUP),
                 (75, signal.SIGTERM), (95, signal.SIGINT))
DURING_WRITES_FAST = (3, 28, 57)
# Two signals within one write (the write numbers, as above): the fast tier keeps the file's creation and a row.
SECOND_SIGNAL = ("2,3", "45,46", "90,91")
SECOND_SIGNAL_FAST = ("2,3", "45,46")


def in_tier(cases, fast, key=lambda case: case):
    """The cases the tier runs: all of them, or those whose key the fast tier keeps."""
    return [c for c in cases if args.tier == "full" or key(c) in fast]


def during_writes():
    for k, sig in in_tier(DURING_WRITES, DURING_WRITES_FAST, key=lambda case: case[0]):
        with tempfile.TemporaryDirectory() as d:
            label = f"{sig.name} at write {k}"
            r = subprocess.run([args.lobench] + SWEEP + ["--out", f"{d}/run.h5"], env=shim_env(k, sig),
                               capture_output=True, text=True)
            if r.returncode == 0:  # the write counts vary a little (a remeasured yardstick): the last row's
                check(k > 60 and file_rows(f"{d}/run.h5", label) == ROWS, f"{label}: finished, not stopped")
            else:
                interrupted_sweep(d, label, sig, r.returncode, rows_printed(r.stdout), r.stderr)
            print(f"ok: {label} ({rows_printed(r.stdout)} rows kept, exit {r.returncode})", flush=True)


def second_signal_in_a_write():
    # Two signals within one write: the process dies of the second, but only once the write is flushed.
    for ks in in_tier(SECOND_SIGNAL, SECOND_SIGNAL_FAST):
        with tempfile.TemporaryDirectory() as d:
            label = f"SIGINT twice at writes {ks}"
            out = f"{d}/run.h5"
            r = subprocess.run([args.lobench] + SWEEP + ["--out", out], env=shim_env(ks, signal.SIGINT),
                               capture_output=True, text=True)
            check(r.returncode == -signal.SIGINT, f"{label}: exit {r.returncode}, expected death by SIGINT")
            n = file_rows(out, label)
            printed = rows_printed(r.stdout)
            # The row being written is complete on disk; the process died before printing it.
            check(n in (printed, printed + 1), f"{label}: {n} rows in the file, {printed} printed")
            no_leftovers(d, label)
            resume_finishes(out, label)
            print(f"ok: {label} ({n} rows kept)", flush=True)


def random_times(count):
    rng = random.Random(20261201)
    for i in range(count):
        sig = rng.choice([signal.SIGINT, signal.SIGTERM])
        with tempfile.TemporaryDirectory() as d:
            out = f"{d}/run.h5"
            p = subprocess.Popen([args.lobench] + SWEEP + ["--out", out], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            time.sleep(rng.uniform(0.05, 3.0))  # the sweep takes about 2.5 s
            p.send_signal(sig)
            so, err = p.communicate(timeout=120)
            label = f"{sig.name} at a random time ({i})"
            if p.returncode == 0:  # finished before the signal
                check(file_rows(out, label) == ROWS, f"{label}: finished with fewer rows")
            else:
                interrupted_sweep(d, label, sig, p.returncode, rows_printed(so), err)
            print(f"ok: {label}, exit {p.returncode}", flush=True)


def overwrite_interrupted():
    """--overwrite replaces OUT only when its run ends: a signal between rows, or inside the first row's
    write, leaves the earlier OUT byte for byte, removes the new rows' temporary file and says so."""
    with tempfile.TemporaryDirectory() as d:
        out = f"{d}/run.h5"
        subprocess.run([args.lobench] + SWEEP + ["--out", out], capture_output=True, check=True)
        before = open(out, "rb").read()
        for sig, after in ((signal.SIGINT, 2), (signal.SIGTERM, 1)):
            label = f"--overwrite, {sig.name} after row {after}"
            rc, printed, err = run_until_rows([args.lobench] + SWEEP + ["--out", out, "--overwrite"], after, sig)
            check(rc == 128 + sig, f"{label}: exit {rc}, expected {128 + sig}; stderr {err[-300:]}")
            check(open(out, "rb").read() == before, f"{label}: the earlier OUT changed")
            want = f"'{out}' already existed and is kept as it was; this run's {printed} of {ROWS} rows are not kept"
            check(want in err, f"{label}: no '{want}' in {err[-300:]}")
            no_leftovers(d, label)
        label = "--overwrite, SIGTERM at write 28"
        r = subprocess.run([args.lobench] + SWEEP + ["--out", out, "--overwrite"], env=shim_env(28, signal.SIGTERM),
                           capture_output=True, text=True)
        check(r.returncode == 143, f"{label}: exit {r.returncode}: {r.stderr[-300:]}")
        check(open(out, "rb").read() == before, f"{label}: the earlier OUT changed")
        no_leftovers(d, label)
        print("ok: --overwrite interrupted keeps the earlier file", flush=True)


def frontier_overwrite_interrupted():
    """train-xmc --frontier --overwrite stopped by a signal keeps the earlier search's file byte for byte."""
    with tempfile.TemporaryDirectory() as d:
        out = f"{d}/f.h5"
        job = ["train-xmc", "--frontier", "clf", "--dataset", "synthetic:tiny", "--syn-scale", "0.05", "--epochs", "1",
               "--dim", "8", "--batch", "64", "--threads", "1", "--frontier-exponents", "3,5", "--frontier-mantissas",
               "1-3", "--seed", "0", "--rounding", "rne", "--frontier-floor", "0.02", "--quiet", "--out", out]
        subprocess.run([args.lobench] + job, capture_output=True, check=True)
        before = open(out, "rb").read()
        r = subprocess.run([args.lobench] + job + ["--overwrite"], env=shim_env(12, signal.SIGTERM),
                           capture_output=True, text=True)
        check(r.returncode == 143, f"frontier --overwrite stopped: exit {r.returncode}: {r.stderr[-300:]}")
        check(open(out, "rb").read() == before, "frontier --overwrite stopped: the earlier file changed")
        check("already existed and is kept as it was" in r.stderr, f"frontier --overwrite stopped: {r.stderr[-300:]}")
        no_leftovers(d, "frontier --overwrite stopped")
        print("ok: frontier --overwrite interrupted keeps the earlier file", flush=True)


def kill_between_rows():
    with tempfile.TemporaryDirectory() as d:
        out = f"{d}/run.h5"
        rc, printed, _ = run_until_rows([args.lobench] + SWEEP + ["--out", out], 3, signal.SIGKILL)
        check(rc == -signal.SIGKILL, f"SIGKILL: exit {rc}")
        n = file_rows(out, "SIGKILL between rows")
        check(n is not None and n >= 3, f"SIGKILL between rows: {n} rows, at least 3 printed before")
        resume_finishes(out, "SIGKILL between rows")
        print(f"ok: SIGKILL between rows ({n} rows kept)", flush=True)


def interrupted_resume():
    with tempfile.TemporaryDirectory() as d:
        out = f"{d}/run.h5"
        rc, printed, _ = run_until_rows([args.lobench] + SWEEP + ["--out", out], 2, signal.SIGTERM)
        check(rc == 143, f"first run: exit {rc}")
        for k in (2, 5):  # the resume's own first writes (its attributes)
            r = subprocess.run([args.lobench] + SWEEP + ["--out", out, "--resume"], env=shim_env(k, signal.SIGTERM),
                               capture_output=True, text=True)
            label = f"--resume stopped at its write {k}"
            check(r.returncode == 143, f"{label}: exit {r.returncode}: {r.stderr[-300:]}")
            n = file_rows(out, label)
            check(n == printed + rows_printed(r.stdout), f"{label}: {n} rows")
            printed = n
        resume_finishes(out, "resumed after interrupted resumes", resumes=3)
        # a finished file (end_utc), resumed wider and interrupted: no longer says it ended
        r = subprocess.run([args.lobench] + SWEEP + ["--out", out, "--resume", "--V", "2000,3000,4000,5000,6000,7000"],
                           env=shim_env(5, signal.SIGTERM), capture_output=True, text=True)
        check(r.returncode == 143, f"wider --resume stopped: exit {r.returncode}: {r.stderr[-300:]}")
        with h5py.File(out, "r") as f:
            check("end_utc" not in f.attrs, "a finished file resumed and interrupted still has end_utc")
        no_leftovers(d, "interrupted resume")
        print("ok: interrupted --resume", flush=True)


def merge():
    with tempfile.TemporaryDirectory() as d:
        tiny = ["run", "--variants", "dense,chunked", "--B", "1", "--N", "9", "--V", "40,70", "--D", "4", "--L", "2",
                "--reps", "1", "--threads", "1", "--sgemm-n", "64", "--mem-limit", "1G"]
        for k in (0, 1):
            subprocess.run([args.lobench] + tiny + ["--partition", f"{k}/2", "--out", f"{d}/p{k}.h5"],
                           capture_output=True, check=True)
        parts = [f"{d}/p0.h5", f"{d}/p1.h5"]
        for k in (2, 9, 30):
            r = subprocess.run([args.lobench, "merge", f"{d}/m.h5"] + parts, env=shim_env(k, signal.SIGTERM),
                               capture_output=True, text=True)
            check(r.returncode == 143, f"merge stopped at write {k}: exit {r.returncode}: {r.stderr[-200:]}")
            check(not os.path.exists(f"{d}/m.h5"), f"merge stopped at write {k}: OUT written")
            check("not written" in r.stderr, f"merge stopped at write {k}: message {r.stderr[-200:]}")
            no_leftovers(d, f"merge stopped at write {k}")
        r = subprocess.run([args.lobench, "merge", f"{d}/m.h5"] + parts, capture_output=True, text=True)
        check(r.returncode == 0 and len(lr.read(f"{d}/m.h5")) == 4, f"merge: {r.stderr[-200:]}")
        before = open(f"{d}/m.h5", "rb").read()
        r = subprocess.run([args.lobench, "merge", "--overwrite", f"{d}/m.h5"] + parts, env=shim_env(9, signal.SIGINT),
                           capture_output=True, text=True)
        check(r.returncode == 130, f"merge --overwrite stopped: exit {r.returncode}")
        check(open(f"{d}/m.h5", "rb").read() == before, "merge --overwrite stopped: OUT changed")
        no_leftovers(d, "merge --overwrite stopped")
        print("ok: merge", flush=True)


XMC_FIELDS = ["epoch", "steps", "train_loss", "test_loss", "p_at_1", "p_at_3", "p_at_5", "ndcg_at_5", "psp_at_5",
              "weight_mean_abs", "weight_zero_fraction", "weight_non_finite"]
SEQREC_FIELDS = ["step", "epoch", "batch", "loss", "lr", "tp", "fp", "fn", "tn"]


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def same_as_uninterrupted(cmd, d, table, fields, label):
    """`cmd --resume` finishes the sweep in d/runs; its files equal an uninterrupted sweep's (d/ref) in
    `table`'s `fields` and status; a second --resume runs nothing and changes no file."""
    r = subprocess.run([args.lobench] + cmd + ["--resume"], capture_output=True, text=True)
    check(r.returncode == 0, f"{label} --resume: exit {r.returncode}: {r.stderr[-300:]}")
    ref = [a if a != f"{d}/runs" else f"{d}/ref" for a in cmd]
    r = subprocess.run([args.lobench] + ref, capture_output=True, text=True)
    check(r.returncode == 0, f"{label} uninterrupted: exit {r.returncode}: {r.stderr[-300:]}")
    names = sorted(os.listdir(f"{d}/ref"))
    check(sorted(n for n in os.listdir(f"{d}/runs") if n.endswith(".h5")) == names, f"{label} --resume: files differ")
    for n in names:
        with h5py.File(f"{d}/runs/{n}", "r") as a, h5py.File(f"{d}/ref/{n}", "r") as b:
            check(text(a.attrs["status"]) == text(b.attrs["status"]) == "ok", f"{label} --resume: {n} status")
            check(a.attrs["sweep"] == b.attrs["sweep"] and a.attrs["sweep_index"] == b.attrs["sweep_index"],
                  f"{label} --resume: {n} records another place in the sweep")
            ta, tb = a[table][()], b[table][()]
            check(len(ta) == len(tb) > 0, f"{label} --resume: {n} has {len(ta)} {table} rows, uninterrupted {len(tb)}")
            for f in fields:
                check(np.array_equal(ta[f], tb[f]), f"{label} --resume: {n} {table}.{f} differs")
    before = {n: open(f"{d}/runs/{n}", "rb").read() for n in names}
    r = subprocess.run([args.lobench] + cmd + ["--resume"], capture_output=True, text=True)
    check(r.returncode == 0 and "steps/s" not in r.stdout and "P@1" not in r.stdout,
          f"{label} second --resume trained again: {r.stdout[-300:]}")
    check(all(open(f"{d}/runs/{n}", "rb").read() == before[n] for n in names), f"{label} second --resume changed a file")


def train_xmc():
    with tempfile.TemporaryDirectory() as d:
        xmc = ["train-xmc", "--dataset", "synthetic:tiny", "--syn-scale", "0.02", "--epochs", "5", "--dim", "8",
               "--batch", "64", "--clf-format", "fp32,bf16", "--threads", "1", "--quiet", "--out-dir", f"{d}/runs"]
        # The first run's epochs are writes of its temporary file (~5 each after ~15 to create it):
        # this lands in its third epoch.
        r = subprocess.run([args.lobench] + xmc, env=shim_env(30, signal.SIGTERM), capture_output=True, text=True)
        check(r.returncode == 143, f"train-xmc: exit {r.returncode}: {r.stderr[-300:]}")
        check("0 of 2 runs finished" in r.stderr and "status interrupted" in r.stderr, f"train-xmc: {r.stderr[-300:]}")
        files = sorted(glob.glob(f"{d}/runs/*.h5"))
        check(len(files) == 1, f"train-xmc: files {files}")
        for path in files:
            with h5py.File(path, "r") as f:
                status = f.attrs["status"]
                status = status.decode() if isinstance(status, bytes) else status
                epochs = len(f["epochs"])
            check(status == "interrupted" and 0 < epochs < 5, f"train-xmc: {path} status {status}, {epochs} epochs")
        no_leftovers(d, "train-xmc")
        # --resume makes the interrupted run again and the other one; the files then hold what an
        # uninterrupted sweep writes (per-epoch losses and P@k bit for bit), and a second --resume keeps them.
        same_as_uninterrupted(xmc, d, "epochs", XMC_FIELDS, "train-xmc")
        print("ok: train-xmc", flush=True)


def train_seqrec():
    with tempfile.TemporaryDirectory() as d:
        seq = ["train-seqrec", "--dataset", "synthetic:yambda", "--syn-scale", "0.002", "--L", "2", "--N", "16", "--B",
               "4", "--D", "16", "--layers", "1", "--heads", "2", "--steps", "40", "--variant", "chunked,fused",
               "--threads", "1", "--quiet", "--out-dir", f"{d}/runs"]
        r = subprocess.run([args.lobench] + seq, env=shim_env(60, signal.SIGINT), capture_output=True, text=True)
        check(r.returncode == 130, f"train-seqrec: exit {r.returncode}: {r.stderr[-300:]}")
        check("of 2 runs finished" in r.stderr, f"train-seqrec: {r.stderr[-300:]}")
        statuses = []
        for path in sorted(glob.glob(f"{d}/runs/*.h5")):
            with h5py.File(path, "r") as f:
                status = f.attrs["status"]
                status = status.decode() if isinstance(status, bytes) else status
                steps, recorded = len(f["steps"]), int(f.attrs["steps"])
                ended = "end_utc" in f.attrs
            statuses.append(status)
            check(status in ("ok", "interrupted"), f"train-seqrec: {path} status {status}")
            check(steps == recorded, f"train-seqrec: {path} has {steps} step rows, attribute says {recorded}")
            if status == "interrupted":
                check(0 < steps < 40, f"train-seqrec: interrupted run with {steps} steps")
                check(not ended, f"train-seqrec: interrupted run {path} has an end_utc")
        check(statuses.count("interrupted") == 1, f"train-seqrec: statuses {statuses}, expected one interrupted run")
        same_as_uninterrupted(seq, d, "steps", SEQREC_FIELDS, "train-seqrec")
        # A replacement (--overwrite) stopped by a signal between steps keeps the finished files byte for byte.
        before = {p: open(p, "rb").read() for p in glob.glob(f"{d}/runs/*.h5")}
        r = subprocess.run([args.lobench] + seq + ["--overwrite"], env=shim_env(60, signal.SIGINT), capture_output=True,
                           text=True)
        check(r.returncode == 130, f"train-seqrec --overwrite stopped: exit {r.returncode}: {r.stderr[-300:]}")
        check(len(before) == 2 and all(open(p, "rb").read() == b for p, b in before.items()),
              "train-seqrec --overwrite stopped by SIGINT: a finished run file changed")
        for want in ("already existed and is kept as it was", "run the same command again to replace it"):
            check(want in r.stderr, f"train-seqrec --overwrite stopped: no '{want}' in {r.stderr[-300:]}")
        no_leftovers(d, "train-seqrec --overwrite stopped")
        # A replacement (--overwrite) killed by SIGKILL in the middle of a write leaves the previous file
        # byte for byte (the new one was being written beside it, OUT.partial-XXXXXX).
        before = {p: open(p, "rb").read() for p in glob.glob(f"{d}/runs/*.h5")}
        r = subprocess.run([args.lobench] + seq + ["--overwrite"], env=shim_env(40, signal.SIGKILL), capture_output=True)
        check(r.returncode == -signal.SIGKILL, f"train-seqrec --overwrite killed: exit {r.returncode}")
        check(len(before) == 2 and all(open(p, "rb").read() == b for p, b in before.items()),
              "train-seqrec --overwrite killed mid-write: a previous file changed")
        check(glob.glob(f"{d}/runs/*.partial-*"), "train-seqrec --overwrite killed: no temporary file (was OUT written?)")
        print("ok: train-seqrec", flush=True)


def train_seqrec_checkpoint():
    """A checkpointed run stopped by a signal says how to continue it, and doing so gives the uninterrupted
    run's parameters bit for bit."""
    with tempfile.TemporaryDirectory() as d:
        job = ["train-seqrec", "--dataset", "synthetic:yambda", "--syn-scale", "0.002", "--L", "2", "--N", "16", "--B",
               "4", "--D", "16", "--layers", "1", "--heads", "2", "--epochs", "3", "--eval-every", "1", "--variant",
               "fused", "--threads", "1", "--quiet", "--checkpoint", f"{d}/ck.h5", "--out", f"{d}/run.h5"]
        # (the 80th write to an .h5 file falls in the second of 3 epochs, after epoch 1's checkpoint)
        r = subprocess.run([args.lobench] + job, env=shim_env(80, signal.SIGINT), capture_output=True, text=True)
        check(r.returncode == 130, f"train-seqrec --checkpoint stopped: exit {r.returncode}: {r.stderr[-300:]}")
        check(os.path.exists(f"{d}/ck.h5"), "train-seqrec --checkpoint stopped before its first checkpoint")
        advice = "continue with the same command and --resume --resume-from " + f"{d}/ck.h5"
        check(advice in r.stderr, f"train-seqrec --checkpoint stopped: no '{advice}' in {r.stderr[-300:]}")
        r = subprocess.run([args.lobench] + job + ["--resume", "--resume-from", f"{d}/ck.h5"], capture_output=True, text=True)
        check(r.returncode == 0, f"train-seqrec --checkpoint continued as advised: exit {r.returncode}: {r.stderr[-300:]}")
        subprocess.run([args.lobench] + job[:-4] + ["--out", f"{d}/whole.h5"], capture_output=True, check=True)
        with h5py.File(f"{d}/run.h5", "r") as a, h5py.File(f"{d}/whole.h5", "r") as b:
            check(text(a.attrs["status"]) == "ok" and text(a.attrs["parameters_hash"]) == text(b.attrs["parameters_hash"]),
                  "train-seqrec --checkpoint continued as advised: not the uninterrupted run's parameters")
        print("ok: train-seqrec --checkpoint stopped, continued as advised", flush=True)


parser = argparse.ArgumentParser()
parser.add_argument("--lobench", required=True)
parser.add_argument("--shim", required=True)
parser.add_argument("--plots", required=True)
parser.add_argument("--tier", choices=("fast", "full"), default="full",
                    help="full: every case; fast: a case of every class (module docstring)")
parser.add_argument("--random", type=int, help="interruptions at random times (default 3, or 1 in the fast tier)")
args = parser.parse_args()
if args.random is None:
    args.random = 1 if args.tier == "fast" else 3
sys.path.insert(0, args.plots)
import lobench_results as lr  # noqa: E402

between_rows()
during_writes()
second_signal_in_a_write()
random_times(args.random)
overwrite_interrupted()
frontier_overwrite_interrupted()
kill_between_rows()
interrupted_resume()
merge()
train_xmc()
train_seqrec()
train_seqrec_checkpoint()
print(f"{len(failures)} failures" if failures else "all interruption checks passed")
sys.exit(1 if failures else 0)
