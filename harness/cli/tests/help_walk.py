"""The command-line grammar, checked through the built binary (issue 31).

Walks `lobench --help` for its subcommands and every subcommand's --help, and checks them against the
shared option table that `lobench options` prints (harness/cli/options.hpp):
  - a shared option has the table's help text (a command may add a detail after it) and default wherever
    it appears, and the table lists exactly the commands that take it;
  - an option name taken by two commands is in the table: no name has two meanings;
  - an old spelling says so ("deprecated: the old spelling of --NEW") and its new name exists;
  - docs/options.md holds `lobench options` verbatim.
And the cases of the issue as a user meets them: counts (1e5, 100k), sizes without a unit, the usage line,
the environment epilog, an unknown subcommand before --help.

Usage: help_walk.py --lobench build/lobench --docs docs/options.md
"""
import argparse
import os
import re
import shutil
import subprocess
import tempfile
import sys
import unittest

ARGS = None
# Options another issue's file declares with its own help, with the reason they are allowed to differ.
EXCEPTIONS: dict = {}  # (command, option) -> why its help may differ from the shared one


def lobench(*argv, env=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([ARGS.lobench, *argv], capture_output=True, text=True, env=e, timeout=60)
    return p.returncode, p.stdout, p.stderr


def subcommands():
    rc, out, _ = lobench("--help")
    assert rc == 0, out
    names, inside = [], False
    for line in out.splitlines():
        if line.startswith("Subcommands:"):
            inside = True
            continue
        if inside:
            if not line.strip():
                break
            m = re.match(r"^  ([a-z][a-z0-9-]*)\s{2,}", line)  # description lines continue further right
            if m:
                names.append(m.group(1))
    return names


OPTION_LINE = re.compile(r"^  (-\S.*?)(?:\s{2,}(.*))?$")  # a long name and type push the help to the next line


def options_of(command):
    """{--name: help} of one command's --help."""
    rc, out, err = lobench(command, "--help")
    assert rc == 0, (command, err)
    opts = {}
    lines = out.splitlines()
    for i, line in enumerate(lines):
        m = OPTION_LINE.match(line)
        if not m:
            continue
        help_text = m.group(2) or (lines[i + 1].strip() if i + 1 < len(lines) else "")
        names = [w.strip() for w in m.group(1).split()[0].split(",")]
        for n in names:
            if n.startswith("--") and n != "--help":
                opts[n] = help_text
    return opts


def shared_table():
    """{--name: (commands, default, help)} from `lobench options`, and the whole text."""
    rc, out, err = lobench("options")
    assert rc == 0, err
    table = {}
    section = out.split("## Options of one command")[0]
    for line in section.splitlines():
        if not line.startswith("| `--"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        name = cells[0].strip("`")
        commands = {c.strip() for c in cells[1].split(",") if c.strip()}
        table[name] = (commands, cells[4].replace("\\|", "|"), cells[6].replace("\\|", "|"))
    return table, out


def default_of_command(default, command):
    """A command's own default in a shared default that differs by command ("run: 32, train-seqrec: 8")."""
    parts = re.findall(r"([a-z][a-z-]*): ([^,]+)(?:, |$)", default)
    if parts and ", ".join(f"{c}: {v}" for c, v in parts) == default:
        return dict(parts).get(command, "")
    return default


class SharedOptions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.commands = subcommands()
        cls.options = {c: options_of(c) for c in cls.commands}
        cls.table, cls.markdown = shared_table()

    def test_the_walk_found_the_commands(self):
        for c in ("run", "check", "train-xmc", "train-seqrec", "quantize", "merge", "compare", "options", "tune"):
            self.assertIn(c, self.commands)
        self.assertIn("--threads", self.options["run"])
        self.assertGreater(len(self.table), 20)

    def test_a_shared_option_has_the_same_help_and_default_everywhere(self):
        problems = []
        for name, (listed, default, help_text) in self.table.items():
            takers = {c for c, opts in self.options.items()
                      if name in opts and not opts[name].startswith("deprecated:")}
            if takers != listed:
                problems.append(f"{name}: `lobench options` lists {sorted(listed)}, --help has {sorted(takers)}")
            for c in sorted(takers):
                if (c, name) in EXCEPTIONS:
                    continue
                h = self.options[c][name]
                if not h.startswith(help_text):
                    problems.append(f"{c} {name}: help '{h}' does not start with the shared '{help_text}'")
                mine = default_of_command(default, c)
                if mine and mine != "off" and not h.endswith(f"(default: {mine})"):
                    problems.append(f"{c} {name}: help '{h}' does not end with the shared default '{mine}'")
                if mine != default and default in h:
                    problems.append(f"{c} {name}: help '{h}' shows every command's default, not its own")
        self.assertEqual(problems, [], "\n".join(problems))

    def test_a_commands_help_names_only_options_it_takes(self):
        # issue 43: train-xmc --help said "--out", which train-xmc does not take
        problems = []
        for c, opts in self.options.items():
            for name, h in opts.items():
                for named in re.findall(r"(?<![\w`-])(--[a-z][a-z0-9-]*)(?![\w-])", h):
                    if named not in opts and named != "--help":
                        problems.append(f"{c} {name}: its help names {named}, which {c} does not take")
        self.assertEqual(problems, [], "\n".join(problems))

    def test_no_option_name_has_two_meanings(self):
        takers = {}
        for c, opts in self.options.items():
            for name, h in opts.items():
                if not h.startswith("deprecated:"):
                    takers.setdefault(name, []).append(c)
        unshared = {n: cs for n, cs in takers.items() if len(cs) > 1 and n not in self.table}
        self.assertEqual(unshared, {}, "options taken by several commands but not in the shared table "
                                       "(harness/cli/options.cpp): same name, possibly two meanings")

    def test_old_spellings_name_their_new_one(self):
        for c, opts in self.options.items():
            for name, h in opts.items():
                if h.startswith("deprecated:"):
                    m = re.match(r"deprecated: the old spelling of (--\S+)", h)
                    self.assertTrue(m, (c, name, h))
                    self.assertIn(m.group(1), opts, (c, name))

    def test_docs_hold_the_table(self):
        with open(ARGS.docs, encoding="utf-8") as f:
            docs = f.read()
        self.assertTrue(self.markdown.strip() in docs,
                        f"{ARGS.docs} is out of date: paste the output of `lobench options` into it")


class UserCases(unittest.TestCase):
    def test_counts_take_exponents_and_suffixes(self):
        rc, out, err = lobench("run", "--V", "1e5,200k,1.5k", "--B", "1", "--N", "2", "--D", "4", "--L", "2",
                               "--variants", "dense", "--threads", "1", "--list")
        self.assertEqual(rc, 0, err)
        self.assertEqual(re.findall(r" V=(\d+) ", out), ["100000", "200000", "1500"])
        rc, _, err = lobench("run", "--V", "1e-3", "--list")
        self.assertEqual(rc, 2)
        self.assertIn("--V", err)
        self.assertIn("not a whole number", err)
        rc, _, err = lobench("run", "--reps", "1k", "--warmup", "2e0", "--V", "10", "--variants", "dense", "--list")
        self.assertEqual(rc, 0, err)

    def test_a_size_without_a_unit_is_refused(self):
        rc, _, err = lobench("run", "--mem-limit", "2", "--list")
        self.assertEqual(rc, 2)
        self.assertIn("--mem-limit", err)
        self.assertIn("no unit", err)
        self.assertIn("2G", err)

    def test_usage_line_and_environment_epilog(self):
        rc, out, _ = lobench("--help")
        self.assertEqual(rc, 0)
        self.assertIn("Usage: lobench [OPTIONS] SUBCOMMAND", out)
        for var in ("LOBENCH_ISA", "LOBENCH_GEMM", "LOBENCH_PRODUCTS", "OMP_NUM_THREADS", "LOBENCH_DATA",
                    "LOBENCH_NO_VERIFY"):
            self.assertIn(var, out)

    def test_malformed_environment_is_a_usage_error(self):
        for var, value in (("OMP_NUM_THREADS", "abc"), ("LOBENCH_NO_VERIFY", "yes"),
                           ("LOBENCH_DATA", "/nonexistent/lobench-data"), ("LOBENCH_PRODUCTS", "fastest")):
            rc, _, err = lobench("list", env={var: value})
            self.assertEqual(rc, 2, (var, err))
            self.assertIn(var, err)

    def test_old_spellings_still_work_with_a_note(self):
        tiny = ["--dataset", "synthetic:yambda", "--syn-scale", "0.002", "--L", "2", "--N", "16", "--B", "4",
                "--D", "16", "--layers", "1", "--heads", "2", "--steps", "3", "--threads", "1"]
        rc, out, err = lobench("train-seqrec", *tiny, "--warmup", "1k", "--seeds", "0,1", "--list")
        self.assertEqual(rc, 0, err)
        self.assertIn("--warmup is deprecated", err)
        self.assertIn("use --warmup-steps", err)
        self.assertIn("--seeds is deprecated", err)
        self.assertIn("2 runs", out)
        for seeds in (["--seed", "0,1"], ["--seeds", "0,1"]):
            rc, out, err = lobench("train-xmc", "--dataset", "synthetic:tiny", *seeds, "--list")
            self.assertEqual(rc, 0, err)
            self.assertIn("2 runs", out)
            self.assertEqual("--seeds is deprecated" in err, seeds[0] == "--seeds", err)
        rc, _, err = lobench("train-xmc", "--dataset", "synthetic:tiny", "--seed", "0", "--seeds", "1", "--list")
        self.assertEqual(rc, 2, err)

    def test_rounding_aliases_are_named_canonically(self):
        rc, out, err = lobench("train-xmc", "--dataset", "synthetic:tiny", "--rounding", "rne,sr", "--list")
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.splitlines()[:2], ["tiny_fp32_nearest_even_fused_k1_s0", "tiny_fp32_stochastic_fused_k1_s0"])

    def test_progress_line_only_on_a_terminal(self):
        d = tempfile.mkdtemp()
        try:
            # bytes, not text: text mode would turn every \r into \n
            p = subprocess.run([ARGS.lobench, "train-seqrec", "--dataset", "synthetic:yambda", "--syn-scale", "0.002",
                                "--L", "2", "--N", "16", "--B", "4", "--D", "16", "--layers", "1", "--heads", "2",
                                "--steps", "3", "--threads", "1", "--eval-every", "-1", "--out",
                                os.path.join(d, "run.h5")], capture_output=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertNotIn(b"\r", p.stderr)  # stderr is a pipe here: no carriage-return progress line
        finally:
            shutil.rmtree(d)

    def test_unknown_subcommand_before_help(self):
        rc, out, err = lobench("comprae", "--help")
        self.assertEqual(rc, 2, out)
        self.assertIn("unknown subcommand 'comprae'; did you mean 'compare'?", err)


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lobench", required=True)
    ap.add_argument("--docs", required=True)
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0], "-v", *rest])


if __name__ == "__main__":
    main()
