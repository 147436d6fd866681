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
import unittest

ARGS = None
SWEEP = ["--B", "1", "--N", "9", "--V", "300", "--D", "8", "--L", "3", "--reduction", "mean,sum", "--weighted",
         "--pad-fraction", "0.2", "--dup-fraction", "0.2", "--reps", "2", "--threads", "1", "--mem-limit", "1G"]
REASONS = {  # what the message says for each broken library (harness/plugin/tests/broken_plugin.cpp)
    "wrong_abi": "built for plug-in ABI 999, but this lobench loads ABI 2",
    "no_entry_point": "no lobench_register_v1 entry point",
    "duplicate_name": "variant cpu/fused is already registered (built-in)",
    "throws": "its registration failed: no device of the kind this plug-in needs",
    "registers_nothing": "it registers no variant",
    "unresolved_symbol": "cannot be loaded: ",
}


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
                self.assertRegex(origin, "^plugin " + re.escape(os.path.realpath(ARGS.good)) + " sha256=[0-9a-f]{64} abi=2$")
            self.assertTrue((df[df["variant"] == "fused"]["origin"] == "built-in").all())
            self.assertTrue((df["timing_source"] == "host_clock").all() and (df["memory_meter"] == "counting_allocator").all())

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

    def test_missing_paths_are_usage_errors(self):
        rc, _, err = lobench("run", *SWEEP, "--variants", "fused", "--plugin", "/nonexistent/x.so", "--out", "/tmp/x.h5")
        self.assertEqual(rc, 2)
        self.assertIn("plug-in /nonexistent/x.so: no such file", err)
        rc, _, err = lobench("list", env={"LOBENCH_PLUGIN_PATH": "/nonexistent/dir"})
        self.assertEqual(rc, 2)
        self.assertIn("LOBENCH_PLUGIN_PATH: /nonexistent/dir does not exist", err)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--lobench", required=True)
    ap.add_argument("--good", required=True)
    ap.add_argument("--plots", required=True)
    ap.add_argument("broken", nargs="*", help="KIND=PATH of each broken plug-in")
    ARGS, rest = ap.parse_known_args()
    ARGS.broken = dict(b.split("=", 1) for b in ARGS.broken)
    assert set(ARGS.broken) == set(REASONS), ARGS.broken
    unittest.main(argv=[sys.argv[0], "-v", *rest])


if __name__ == "__main__":
    main()
