"""Plug-ins through the command line (harness/plugin): `lobench list` and `lobench run` load the example
with --plugin and LOBENCH_PLUGIN_PATH, list it with its origin and measure it beside fused into one run
file with errors against the float64 reference; every broken library is refused with exit status 2, its
file named, nothing written.

Usage: plugin_cli_test.py --lobench LOBENCH --good naive_loop_plugin.so --plots plots/ KIND=PATH...
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import unittest

ARGS = None
SWEEP = ["--B", "1", "--N", "9", "--V", "300", "--D", "8", "--L", "3", "--reduction", "mean,sum", "--weighted",
         "--pad-fraction", "0.2", "--dup-fraction", "0.2", "--reps", "2", "--threads", "1", "--mem-limit", "1G"]
REASONS = {  # what the message says for each broken library (harness/plugin/tests/broken_plugin.cpp)
    "wrong_abi": "built for plug-in ABI 999, but this lobench loads ABI 3",
    "no_entry_point": "no lobench_register_v1 entry point",
    "duplicate_name": "variant cpu/fused is already registered (built-in)",
    "throws": "its registration failed: no device of the kind this plug-in needs",
    "registers_nothing": "it registers no variant",
    "unresolved_symbol": "cannot be loaded: ",
    "throws_non_std": "its registration failed: it threw an exception that is not a std::exception",
    "bad_name": "variant name 'vendor/kernel:v2' has the character '/'",
}
# What each misbehaving variant's row says (harness/plugin/tests/misbehaving_plugin.cpp): status, reason.
MISDEEDS = {
    "segfaults": ("failed", "killed by SIGSEGV"),
    "aborts": ("failed", "killed by SIGABRT"),
    "exits_zero": ("failed", "exited with status 0 before its row was complete"),
    "hangs": ("failed", "no result within --row-timeout 3 s"),
    "throws_int": ("failed", "threw an exception that is not a std::exception"),
    "nan_loss": ("failed", "its loss is not finite"),
    "nan_gradient": ("failed", "its dE holds a non-finite value"),
    "wrong_size": ("failed", "its dA has 1 values, expected [9, 8]"),
    "writes_input": ("failed", "it wrote into its inputs"),
    "over_prediction": ("ok", "memory: the process's resident memory grew by "),
    "huge_prediction": ("skipped", "OOM predicted"),
    "negative_prediction": ("failed", "its predicted working memory is -5 bytes (negative)"),
    "out_of_memory": ("failed", "out of memory"),
}
ONE = ["--B", "1", "--N", "9", "--V", "300", "--D", "8", "--L", "3", "--reps", "2", "--threads", "1", "--mem-limit", "1G"]


def lobench(*argv, env=None):
    e = dict(os.environ)
    e.pop("LOBENCH_PLUGIN_PATH", None)
    e.update(env or {})
    p = subprocess.run([ARGS.lobench, *argv], capture_output=True, text=True, env=e, timeout=240)
    return p.returncode, p.stdout, p.stderr


class PluginCli(unittest.TestCase):
    def test_list_shows_the_plugin_with_its_origin(self):
        for how, env in ((["--plugin", ARGS.good], {}), ([], {"LOBENCH_PLUGIN_PATH": ARGS.good})):
            rc, out, err = lobench("list", *how, env=env)
            self.assertEqual(rc, 0, err)
            lines = out.splitlines()
            at = [i for i, l in enumerate(lines) if l.startswith("naive_loop ")]
            self.assertEqual(len(at), 1, out)
            origin = next(l for l in lines[at[0]:at[0] + 4] if "origin:" in l)
            self.assertIn("plugin " + os.path.realpath(ARGS.good) + " sha256=", origin)
            self.assertIn("fused", out)

    def test_run_measures_the_plugin_beside_fused_with_reference_errors(self):
        sys.path.insert(0, ARGS.plots)
        import lobench_results as lr
        with tempfile.TemporaryDirectory() as d:
            out_file = os.path.join(d, "run.h5")
            rc, out, err = lobench("run", *SWEEP, "--variants", "naive_loop,fused", "--plugin", ARGS.good,
                                   "--out", out_file)
            self.assertEqual(rc, 0, err + out)
            df = lr.read(out_file)
            self.assertEqual(sorted(df["variant"]), ["fused", "fused", "naive_loop", "naive_loop"])
            self.assertTrue((df["status"] == "ok").all(), df["status"])
            for col in ("rel_loss_err", "rel_dA_err", "rel_dE_err"):
                self.assertTrue((df[col] < 1e-5).all(), (col, df[["variant", col]]))  # NaN fails too
            naive = df[df["variant"] == "naive_loop"]
            self.assertTrue((naive["peak_bytes"] == naive["predicted_bytes"]).all())
            self.assertIn("plugin " + os.path.realpath(ARGS.good), df.attrs.get("plugins", ""))
            # each row says where its variant came from and how it was measured (schema version 4)
            for origin in naive["origin"]:
                self.assertRegex(origin, "^plugin " + re.escape(os.path.realpath(ARGS.good)) + " sha256=[0-9a-f]{64} abi=3$")
            self.assertTrue((df[df["variant"] == "fused"]["origin"] == "built-in").all())
            self.assertTrue((df["timing_source"] == "host_clock").all() and (df["memory_meter"] == "counting_allocator").all())

    def test_an_epilogue_other_than_fp32_skips_the_plugin_with_the_reason(self):
        sys.path.insert(0, ARGS.plots)
        import lobench_results as lr
        with tempfile.TemporaryDirectory() as d:
            out_file = os.path.join(d, "run.h5")
            rc, out, err = lobench("run", *ONE, "--variants", "naive_loop,fused", "--epilogue", "bf16", "--plugin",
                                   ARGS.good, "--out", out_file)
            self.assertEqual(rc, 0, err + out)
            df = lr.read(out_file)
            naive, fused = df[df["variant"] == "naive_loop"].iloc[0], df[df["variant"] == "fused"].iloc[0]
            self.assertEqual((naive["status"], naive["epilogue"]), ("skipped", "bf16"))
            self.assertIn("epilogue bf16 is the built-in CPU variants' emulation", naive["reason"])
            self.assertEqual((fused["status"], fused["epilogue"]), ("ok", "bf16"))

    def test_every_broken_library_is_refused_with_its_file_named(self):
        for kind, path in ARGS.broken.items():
            with tempfile.TemporaryDirectory() as d:
                out_file = os.path.join(d, "run.h5")
                for argv, env in ((["run", *SWEEP, "--variants", "fused", "--plugin", path, "--out", out_file], {}),
                                  (["list"], {"LOBENCH_PLUGIN_PATH": path})):
                    rc, out, err = lobench(*argv, env=env)
                    self.assertEqual(rc, 2, (kind, argv[0], err))
                    self.assertIn("plug-in " + path + ": " + REASONS[kind], err, kind)
                    self.assertEqual(err.count("\n"), 1, err)  # one line, no crash report
                    self.assertFalse(os.path.exists(out_file), kind)

    def test_a_misbehaving_variant_costs_its_row_not_the_sweep(self):
        """Isolated (the default for plug-ins): every misdeed is its own row's status and reason, fused
        between them measures the same inputs as ever, the run file reads, the exit status is 1."""
        sys.path.insert(0, ARGS.plots)
        import lobench_results as lr
        variants = []
        for name in MISDEEDS:
            variants += [name, "fused"]
        with tempfile.TemporaryDirectory() as d:
            out_file = os.path.join(d, "run.h5")
            rc, out, err = lobench("run", *ONE, "--variants", ",".join(variants), "--plugin", ARGS.misbehaving,
                                   "--row-timeout", "3", "--out", out_file)
            self.assertEqual(rc, 1, err)
            df = lr.read(out_file)
            self.assertEqual(len(df), len(MISDEEDS) + 1, df)  # fused is one row (a repeated variant runs once)
            for name, (status, reason) in MISDEEDS.items():
                row = df[df["variant"] == name].iloc[0]
                self.assertEqual(row["status"], status, (name, row["reason"]))
                self.assertIn(reason, row["reason"], name)
            self.assertIn("mem", df[df["variant"] == "over_prediction"].iloc[0]["flags"].split(","))
            fused = df[df["variant"] == "fused"].iloc[0]
            self.assertEqual(fused["status"], "ok")
            self.assertLess(fused["rel_dE_err"], 1e-5)

    def test_an_isolated_row_whose_process_waited_for_a_cpu_is_flagged_busy(self):
        """lobench runs on one CPU; each isolated row's process (a child of lobench) is moved, as soon as it
        appears, onto another CPU where a spinning process runs, so its step waits for that CPU about half
        its time while lobench's own yardsticks, around the row, do not wait. The child reads its own wait
        and sends it back with the row, which is flagged `busy` as an in-process row would be (the wait
        once stayed in the child: its note reached the reason, the flag never did)."""
        sys.path.insert(0, ARGS.plots)
        import lobench_results as lr
        cpus = sorted(os.sched_getaffinity(0))
        home, busy = {cpus[0]}, {cpus[-1]}  # one CPU: both there (the yardsticks then wait too)
        spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                   preexec_fn=lambda: os.sched_setaffinity(0, busy))
        try:
            with tempfile.TemporaryDirectory() as d:
                out_file = os.path.join(d, "run.h5")
                e = {k: v for k, v in os.environ.items() if k != "LOBENCH_PLUGIN_PATH"}
                # each row's timed steps last at least 0.2 s: many of the scheduler's time slices
                run = subprocess.Popen([ARGS.lobench, "run", "--B", "1", "--N", "9", "--V", "3000", "--D", "8", "--L",
                                        "3", "--seed", "0,1,2", "--threads", "1", "--mem-limit", "1G", "--min-time", "0.2",
                                        "--max-time", "1", "--max-reps", "100000", "--cv-target", "1", "--variants",
                                        "naive_loop", "--plugin", ARGS.good, "--out", out_file],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e,
                                       preexec_fn=lambda: os.sched_setaffinity(0, home))
                stop = threading.Event()
                mover = threading.Thread(target=_move_children, args=(run.pid, busy, stop))
                mover.start()
                try:
                    out, err = run.communicate(timeout=240)
                finally:
                    stop.set()
                    mover.join()
                self.assertEqual(run.returncode, 0, err + out)
                df = lr.read(out_file)
        finally:
            spinner.kill()
            spinner.wait()
        self.assertEqual(len(df), 3, df)
        for _, row in df.iterrows():
            self.assertIn("waited for a CPU", row["reason"], row["seed"])
            self.assertIn("busy", row["flags"].split(","), (row["seed"], row["flags"], row["reason"]))

    def test_in_process_a_write_into_the_inputs_fails_its_row_and_spares_the_next(self):
        sys.path.insert(0, ARGS.plots)
        import lobench_results as lr
        with tempfile.TemporaryDirectory() as d:
            out_file = os.path.join(d, "run.h5")
            rc, out, err = lobench("run", *ONE, "--variants", "writes_input,fused,nan_loss", "--plugin",
                                   ARGS.misbehaving, "--no-isolate", "--out", out_file)
            self.assertEqual(rc, 1, err)
            df = lr.read(out_file).set_index("variant")
            self.assertIn("it wrote into its inputs", df.loc["writes_input", "reason"])
            self.assertEqual(df.loc["nan_loss", "status"], "failed")
            self.assertEqual(df.loc["fused", "status"], "ok")
            self.assertLess(df.loc["fused", "rel_dE_err"], 1e-5)  # NaN fails too

    def _start_hanging_sweep(self, d, out_file, *extra):
        """`lobench run` of fused and the plug-in's `hangs` from folder d, returned once fused's row is done
        and hangs' row is running (its stderr still open)."""
        e = dict(os.environ)
        e.pop("LOBENCH_PLUGIN_PATH", None)
        p = subprocess.Popen([os.path.abspath(ARGS.lobench), "run", *ONE, "--variants", "fused,hangs", "--plugin",
                              os.path.abspath(ARGS.misbehaving), *extra, "--out", out_file], cwd=d, env=e,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        seen = ""
        while "1 of 2 rows" not in seen and time.monotonic() < deadline:  # fused done, hangs running
            seen += p.stderr.readline()
        self.assertIn("1 of 2 rows", seen)
        return p

    def test_overwrite_keeps_the_old_file_until_the_new_one_is_complete(self):
        """--overwrite, then the run killed (SIGKILL) mid-run: the old file is as it was, and the row's
        child process died with its parent."""
        import signal
        import time
        with tempfile.TemporaryDirectory() as d:
            out_file = os.path.join(d, "run.h5")
            with open(out_file, "wb") as f:
                f.write(b"hours of results")
            p = self._start_hanging_sweep(d, out_file, "--overwrite")
            p.send_signal(signal.SIGKILL)
            p.wait()
            p.stderr.close()
            with open(out_file, "rb") as f:
                self.assertEqual(f.read(), b"hours of results")
            self.assertEqual(_survivors(d), [], "a row's process outlived the run")

    def test_one_ctrl_c_stops_a_row_that_hangs_in_its_process(self):
        """No --row-timeout: a variant that hangs in its isolated process would hold the sweep forever; the
        first SIGINT kills that process at once, the sweep stops with the finished rows kept (exit 130,
        --resume named), and no process of the row is left."""
        import signal
        with tempfile.TemporaryDirectory() as d:
            out_file = os.path.join(d, "run.h5")
            p = self._start_hanging_sweep(d, out_file)
            deadline = time.monotonic() + 60
            while not _children(p.pid) and time.monotonic() < deadline:  # the hanging row's process
                time.sleep(0.05)
            self.assertTrue(_children(p.pid), "the hanging row's process never started")
            p.send_signal(signal.SIGINT)
            try:
                _, err = p.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
                self.fail("one SIGINT did not stop a sweep whose row hangs in its own process")
            self.assertEqual(p.returncode, 130, err[-400:])
            self.assertIn("1 of 2 rows kept in", err)
            self.assertIn("continue with --resume", err)
            sys.path.insert(0, ARGS.plots)
            import lobench_results as lr
            self.assertEqual(list(lr.read(out_file).variant), ["fused"])
            self.assertEqual(_survivors(d), [], "the hanging row's process outlived the run")

    def test_missing_paths_are_usage_errors(self):
        rc, _, err = lobench("run", *SWEEP, "--variants", "fused", "--plugin", "/nonexistent/x.so", "--out", "/tmp/x.h5")
        self.assertEqual(rc, 2)
        self.assertIn("plug-in /nonexistent/x.so: no such file", err)
        rc, _, err = lobench("list", env={"LOBENCH_PLUGIN_PATH": "/nonexistent/dir"})
        self.assertEqual(rc, 2)
        self.assertIn("LOBENCH_PLUGIN_PATH: /nonexistent/dir does not exist", err)


def _move_children(pid, cpus, stop):
    """Until `stop`: every child process of `pid` is moved onto `cpus` as soon as it appears."""
    moved = set()
    while not stop.is_set():
        try:
            kids = set()
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    kids.update(int(k) for k in f.read().split())
        except OSError:
            kids = set()  # lobench has ended, or a thread meanwhile
        for k in kids - moved:
            try:
                os.sched_setaffinity(k, cpus)
                moved.add(k)
            except OSError:
                pass  # gone already
        time.sleep(0.001)


def _children(pid):
    """The processes whose parent is pid."""
    out = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                if entry.isdigit() and int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(entry))
        except (OSError, ValueError, IndexError):
            pass
    return out


def _survivors(d):
    """Processes still running in folder d, half a second on (a row's process dies with the run)."""
    time.sleep(0.5)
    return [pid for pid in os.listdir("/proc") if pid.isdigit() and _cwd(pid) == d]


def _cwd(pid):
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--lobench", required=True)
    ap.add_argument("--good", required=True)
    ap.add_argument("--misbehaving", required=True)
    ap.add_argument("--plots", required=True)
    ap.add_argument("broken", nargs="*", help="KIND=PATH of each broken plug-in")
    ARGS, rest = ap.parse_known_args()
    ARGS.broken = dict(b.split("=", 1) for b in ARGS.broken)
    assert set(ARGS.broken) == set(REASONS), ARGS.broken
    unittest.main(argv=[sys.argv[0], "-v", *rest])


if __name__ == "__main__":
    main()
