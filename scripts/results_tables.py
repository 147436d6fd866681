#!/usr/bin/env python3
"""Regenerate the generated blocks of results/*.md and results/*/*.md in place, or check that they are current.

A generated block is Markdown between two marker comments, each on a line of its own:

    <!-- NAME:begin (generated: COMMAND) -->
    ...what COMMAND prints...
    <!-- NAME:end -->

COMMAND is run from the repository root and its standard output (leading and trailing blank lines dropped)
is the block's content. It is split like a shell would split it (shlex) but run without a shell: no pipes,
no redirections, no variables. A word with *, ? or [ is expanded as a glob relative to the root (sorted;
no match is an error; `**` stands for any number of folders, none included, so that
`DIR/**/*.h5` reads DIR's files and its subfolders'), and a first word `python3` (or `python`) is this interpreter, so that the block is
made by the Python that has the project's packages. The environment is reduced to PATH, HOME, PYTHONPATH
and VIRTUAL_ENV, with TZ=UTC, LC_ALL=C.UTF-8, PYTHONHASHSEED=0 and no bytecode written.

A command must read only committed files: every word that names an existing path under the root (also
after `--opt=`) must be tracked by git, and a folder must hold only tracked files; a word with a `/` that
names nothing, an absolute path or one outside the root is refused too. That a command's output depends on nothing but those files (not on the clock, the machine, a
build, a random seed) is its author's responsibility: this script cannot see it.

    python3 scripts/results_tables.py                 rewrite every stale block (each file atomically)
    python3 scripts/results_tables.py --check         exit 1 and a unified diff when a block is stale
    python3 scripts/results_tables.py --list          the blocks and their commands
    python3 scripts/results_tables.py DOC.md ...      only these documents (commands still run from --root)
    python3 scripts/results_tables.py --block NAME    only the blocks of that name (repeatable; others kept)

Exit status: 0 current (or rewritten), 1 stale (--check), 2 a command failed, was refused or printed a
marker, or a marker is malformed or unbalanced; then no file is written.
"""
import argparse
import difflib
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = re.compile(r"^<!-- ([A-Za-z0-9_.-]+):begin \(generated: (.+)\) -->$")
END = re.compile(r"^<!-- ([A-Za-z0-9_.-]+):end -->$")
# Anything that looks like a marker but is not one exactly is an error, not text: a typo in a marker would
# otherwise leave a block unchecked without anyone noticing.
MARKER_LIKE = re.compile(r"<!--\s*[A-Za-z0-9_.-]*\s*:\s*(begin|end)\b")
GLOB_CHARS = re.compile(r"[*?\[]")


class BlockError(Exception):
    """A malformed document or a command that cannot give a block; the message names the file."""


class Block:
    def __init__(self, name, command, begin, end):
        self.name, self.command, self.begin, self.end = name, command, begin, end  # line indices of the markers


def parse_blocks(path, lines):
    """The generated blocks of one document (markers inside ``` fences outside blocks are examples, not blocks)."""
    blocks, open_block, fenced = [], None, False
    for i, line in enumerate(lines):
        where = f"{path}:{i + 1}"
        if open_block is None and line.lstrip().startswith("```"):
            fenced = not fenced
        if fenced or not MARKER_LIKE.search(line):
            continue
        begin, end = BEGIN.match(line), END.match(line)
        if begin:
            if open_block is not None:
                raise BlockError(f"{where}: '{begin.group(1)}:begin' inside block '{open_block.name}' (opened at line {open_block.begin + 1})")
            if any(b.name == begin.group(1) for b in blocks):
                raise BlockError(f"{where}: a second block named '{begin.group(1)}'")
            open_block = Block(begin.group(1), begin.group(2), i, None)
        elif end:
            if open_block is None or end.group(1) != open_block.name:
                raise BlockError(f"{where}: '{end.group(1)}:end' without its begin"
                                 + (f" (block '{open_block.name}' is open)" if open_block else ""))
            open_block.end = i
            blocks.append(open_block)
            open_block = None
        else:
            raise BlockError(f"{where}: malformed marker {line.strip()!r} (expected '<!-- NAME:begin (generated: COMMAND) -->' or '<!-- NAME:end -->')")
    if open_block is not None:
        raise BlockError(f"{path}:{open_block.begin + 1}: block '{open_block.name}' has no end marker")
    return blocks


def tracked_files(root):
    """The files git tracks under root (relative paths), or None where root is not a git checkout."""
    r = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True)
    if r.returncode != 0:
        return None
    return set(p.decode() for p in r.stdout.split(b"\0") if p)


def input_problem(root, tracked, word):
    """Why an argument word cannot be a committed input (a path that does not exist, or a file under root
    that git does not track), else None. Words that are not paths (options, numbers) pass."""
    candidate = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
    if not candidate or candidate.startswith("-"):
        return None
    full = os.path.normpath(os.path.join(root, candidate))
    if os.path.isabs(candidate) or os.path.relpath(full, root).split(os.sep)[0] == "..":
        return f"names {candidate}, outside the repository (a block reads only its committed files)"
    if not os.path.exists(full):
        return f"names {candidate}, which does not exist" if "/" in candidate else None
    if tracked is None:
        return None
    if os.path.isfile(full):
        rel = os.path.relpath(full, root)
        return None if rel in tracked else f"reads {rel}, which git does not track (commit it, or leave it out){in_progress(os.path.basename(rel))}"
    for d, dirs, files in os.walk(full):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for name in sorted(files):
            rel = os.path.relpath(os.path.join(d, name), root)
            if rel not in tracked:
                return f"reads {rel}, which git does not track (commit it, or leave it out){in_progress(name)}"
    return None


def in_progress(name):
    """What an untracked file's name says of it: a lobench run still writing beside its OUT (OUT.lock, or
    OUT.partial-* before it is published), else nothing."""
    if name.endswith(".lock") or ".partial-" in name:
        return "; its name is that of a run still writing there (lobench's lock or unpublished file): check again when it has finished"
    return ""


def command_argv(root, command, where):
    try:
        words = shlex.split(command)
    except ValueError as e:
        raise BlockError(f"{where}: the command cannot be split: {e}")
    if not words:
        raise BlockError(f"{where}: empty command")
    argv = []
    for w in words:
        if GLOB_CHARS.search(w):
            matches = sorted(glob.glob(os.path.join(root, w), recursive=True))
            if not matches:
                raise BlockError(f"{where}: {w!r} matches no file")
            argv += [os.path.relpath(m, root) for m in matches]
        else:
            argv.append(w)
    if argv[0] in ("python3", "python"):
        argv[0] = sys.executable
    return argv


def command_env():
    env = {k: os.environ[k] for k in ("PATH", "HOME", "PYTHONPATH", "VIRTUAL_ENV") if k in os.environ}
    env.update(TZ="UTC", LC_ALL="C.UTF-8", PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1", MPLBACKEND="Agg")
    return env


def generate(root, tracked, block, where, timeout):
    """What the block's command prints now, without leading or trailing blank lines."""
    argv = command_argv(root, block.command, where)
    for w in argv[1:]:
        problem = input_problem(root, tracked, w)
        if problem:
            raise BlockError(f"{where}: block '{block.name}' {problem}")
    try:
        r = subprocess.run(argv, cwd=root, env=command_env(), capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BlockError(f"{where}: block '{block.name}': {block.command!r} did not run: {e}")
    if r.returncode != 0:
        tail = " | ".join(r.stderr.strip().splitlines()[-3:])
        raise BlockError(f"{where}: block '{block.name}': {block.command!r} exited {r.returncode}: {tail}")
    out = r.stdout.strip("\n").splitlines()
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    if any(MARKER_LIKE.search(line) for line in out):
        raise BlockError(f"{where}: block '{block.name}': its command printed a marker line")
    return out


def selected_blocks(path, lines, only):
    """The document's blocks, or those named in `only` (--block) where it is given."""
    return [b for b in parse_blocks(path, lines) if only is None or b.name in only]


def regenerate(root, tracked, path, timeout, only=None):
    """The document's old and new lines (every block's content, or only that of the blocks named in `only`,
    replaced by what its command prints) and the blocks made."""
    with open(path, encoding="utf-8") as f:
        old = f.read().split("\n")
    blocks = selected_blocks(path, old, only)
    new, last = [], 0
    for b in blocks:
        content = generate(root, tracked, b, f"{path}:{b.begin + 1}", timeout)
        new += old[last:b.begin + 1] + content
        last = b.end
    new += old[last:]
    return old, new, blocks


def write_atomically(path, lines):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def documents(root, given):
    if given:
        return given
    return sorted(glob.glob(os.path.join(root, "results", "*.md")) + glob.glob(os.path.join(root, "results", "*", "*.md")))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 epilog="Details: the module's docstring and results/README.md.")
    ap.add_argument("docs", nargs="*", help="documents (default: results/*.md and results/*/*.md under --root)")
    ap.add_argument("--root", default=ROOT, help="where commands run and what git tracks (default: this checkout)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="change nothing; exit 1 with a diff when a block is stale")
    mode.add_argument("--list", action="store_true", help="print each block's document, name and command")
    ap.add_argument("--block", action="append", metavar="NAME",
                    help="only the blocks of this name (repeatable); the documents' other blocks are left as they are")
    ap.add_argument("--timeout", type=float, default=600, help="seconds a command may run (default 600)")
    args = ap.parse_args(argv)
    only = set(args.block) if args.block else None
    root = os.path.abspath(args.root)
    docs = documents(root, args.docs)
    for d in docs:
        if not os.path.isfile(d):
            print(f"results_tables: {d}: no such document", file=sys.stderr)
            return 2
    tracked = tracked_files(root)
    if tracked is None:
        print(f"results_tables: {root} is not a git checkout: commands' inputs are not checked for being committed",
              file=sys.stderr)
    results, errors = [], []
    for d in docs:  # every document, so that one run names every problem
        try:
            if args.list:
                with open(d, encoding="utf-8") as f:
                    for b in selected_blocks(d, f.read().split("\n"), only):
                        print(f"{os.path.relpath(d)}\t{b.name}\t{b.command}")
                continue
            results.append((d,) + regenerate(root, tracked, d, args.timeout, only))
        except (BlockError, OSError, UnicodeDecodeError) as e:
            errors.append(str(e))
    if only is not None and not errors and not args.list:
        missing = only - {b.name for *_, blocks in results for b in blocks}
        if missing:
            print(f"results_tables: --block {', '.join(sorted(missing))}: no such block in {len(docs)} documents; "
                  "nothing written", file=sys.stderr)
            return 2
    for e in errors:
        print(f"results_tables: {e}", file=sys.stderr)
    if errors:
        print(f"results_tables: {len(errors)} of {len(docs)} documents could not be made; nothing written", file=sys.stderr)
        return 2
    stale = [(d, old, new) for d, old, new, _ in results if old != new]
    nblocks = sum(len(b) for *_, b in results)
    if args.check:
        for d, old, new in stale:
            sys.stdout.writelines(difflib.unified_diff([l + "\n" for l in old], [l + "\n" for l in new],
                                                       fromfile=f"{d} (as committed)", tofile=f"{d} (as its files give)"))
        print(f"results_tables: {len(stale)} of {len(results)} documents stale ({nblocks} blocks checked)",
              file=sys.stderr)
        return 1 if stale else 0
    for d, _, new in stale:
        write_atomically(d, new)
        print(f"results_tables: rewrote {d}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
