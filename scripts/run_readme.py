#!/usr/bin/env python3
"""Runs every command block of a Markdown file as written, so that a README command that fails, fails CI.

A fenced block whose language is `sh`, `bash` or `shell` runs in bash (`set -euo pipefail`) from the
repository root; a ```python block runs in this script's python3. Other blocks
(```text, ```cmake, ...) are documentation and are not run. An HTML comment on the line directly above a
block changes how it runs (the comment is invisible on GitHub):

  <!-- readme-ci: skip REASON -->             not run (e.g. CI runs it as a step of its own); says why
  <!-- readme-ci: replace "OLD" "NEW" -->     run with OLD replaced by NEW (a reduced size); repeatable
  <!-- readme-ci: interpreter PATH -->         a python block's interpreter (e.g. /usr/bin/python3: torch)

Prints one line per block (line number, status, seconds) and exits 1 if any block failed.

  python3 scripts/run_readme.py README.md [--timeout 600] [--list]
"""
from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHELLS = {"sh", "bash", "shell"}
DIRECTIVE = re.compile(r"<!--\s*readme-ci:\s*(\w+)\s*(.*?)\s*-->")


@dataclass
class Block:
    line: int  # 1-based line of the opening fence
    language: str
    text: str
    skip: str | None = None
    interpreter: str = sys.executable
    replacements: list[tuple[str, str]] = field(default_factory=list)


def parse_blocks(markdown: str, source: str) -> list[Block]:
    blocks: list[Block] = []
    lines = markdown.splitlines()
    directives: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = DIRECTIVE.fullmatch(line.strip())
        if m:
            directives.append((m.group(1), m.group(2)))
            i += 1
            continue
        fence = re.match(r"^(\s*)(```+|~~~+)\s*([\w+-]*)", line)
        if not fence:
            if line.strip():
                directives = []  # a directive applies only to the block directly below it
            i += 1
            continue
        opening, language, start = fence.group(2), fence.group(3).lower(), i
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(opening):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise ValueError(f"{source}:{start + 1}: a code block that is never closed")
        block = Block(start + 1, language, "\n".join(body) + "\n")
        for verb, argument in directives:
            if verb == "skip":
                block.skip = argument or "no reason given"
            elif verb == "interpreter":
                block.interpreter = argument
            elif verb == "replace":
                words = shlex.split(argument)
                if len(words) != 2:
                    raise ValueError(f"{source}:{start + 1}: readme-ci: replace takes \"OLD\" \"NEW\", got {argument!r}")
                if words[0] not in block.text:
                    raise ValueError(f"{source}:{start + 1}: readme-ci: replace {words[0]!r} is not in the block")
                block.replacements.append((words[0], words[1]))
            else:
                raise ValueError(f"{source}:{start + 1}: unknown directive readme-ci: {verb} (skip, replace, interpreter)")
        directives = []
        blocks.append(block)
        i += 1
    return blocks


def runnable(block: Block) -> bool:
    return block.language in SHELLS or block.language == "python"


def run_block(block: Block, timeout: float) -> tuple[bool, float, str]:
    text = block.text
    for old, new in block.replacements:
        text = text.replace(old, new)
    if block.language == "python":
        command = [block.interpreter, "-c", text]
    else:
        command = ["bash", "-c", "set -euo pipefail\n" + text]
    start = time.monotonic()
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        ok, output = done.returncode == 0, done.stdout + done.stderr
        if not ok:
            output += f"\n(exit status {done.returncode})"
    except subprocess.TimeoutExpired as e:
        ok = False
        output = f"{e.stdout or ''}{e.stderr or ''}\n(timed out after {timeout:g} s)"
    return ok, time.monotonic() - start, output


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("markdown", type=Path, nargs="?", default=ROOT / "README.md")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per block (default 600)")
    parser.add_argument("--list", action="store_true", help="print the blocks and what would run, run nothing")
    args = parser.parse_args()
    try:
        blocks = parse_blocks(args.markdown.read_text(), str(args.markdown))
    except (OSError, ValueError) as e:
        print(f"run_readme: {e}", file=sys.stderr)
        return 2
    failed = 0
    for block in blocks:
        where = f"{args.markdown.name}:{block.line} ({block.language or 'no language'})"
        if not runnable(block):
            continue
        if block.skip:
            print(f"{where}: skipped: {block.skip}")
            continue
        if args.list:
            print(f"{where}: would run" + (f" with {len(block.replacements)} replacement(s)" if block.replacements else ""))
            continue
        ok, seconds, output = run_block(block, args.timeout)
        print(f"{where}: {'ok' if ok else 'FAILED'} in {seconds:.1f} s", flush=True)
        if not ok:
            failed += 1
            print("  " + block.text.strip().replace("\n", "\n  "))
            print("  --- output ---\n  " + output.strip()[-4000:].replace("\n", "\n  "), flush=True)
    if failed:
        print(f"run_readme: {failed} block(s) of {args.markdown.name} failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
