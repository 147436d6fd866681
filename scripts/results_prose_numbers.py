#!/usr/bin/env python3
"""The decimal numbers in the prose of results/*.md (outside generated blocks and code fences) that appear in
no generated block of the same document: the worklist of issue 38's "no hand-typed result number". A number
listed is either a published figure, a setting, a date or version (fine), or a result typed by hand (move it
into a block, refer to the table instead, or say that its file was not kept). Informational: exit 0.

    python3 scripts/results_prose_numbers.py [DOC.md ...] [-v]     (-v: every such line, with its numbers)
"""
import argparse
import os
import re
import sys

import results_tables as rt

DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])")


def unmatched(path):
    """(prose decimals, [(line number, line, numbers in no block)]) of one document."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks = rt.parse_blocks(path, lines)
    inside = {i for b in blocks for i in range(b.begin, b.end + 1)}
    known = set(DECIMAL.findall("\n".join(lines[i] for i in sorted(inside))))
    fenced, total, out = False, 0, []
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or i in inside:
            continue
        nums = DECIMAL.findall(line)
        total += len(nums)
        missing = [n for n in nums if n not in known]
        if missing:
            out.append((i + 1, line, missing))
    return total, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("docs", nargs="*")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    for d in rt.documents(rt.ROOT, args.docs):
        try:
            total, out = unmatched(d)
        except rt.BlockError as e:
            print(f"results_prose_numbers: {e}", file=sys.stderr)
            return 2
        print(f"{os.path.relpath(d, rt.ROOT)}: {sum(len(m) for *_, m in out)} of {total} prose decimals in no block")
        if args.verbose:
            for n, line, missing in out:
                print(f"  {n}: [{', '.join(missing)}] {line.strip()[:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
