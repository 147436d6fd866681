#!/usr/bin/env python3
"""The decimal numbers in the prose of results/*.md (outside generated blocks and code fences) that appear in
no generated block of the same document: the worklist of issue 38's "no hand-typed result number". A number
listed is either a published figure, a setting, a date or version (fine), or a result typed by hand (move it
into a block, refer to the table instead, or say that its file was not kept). Informational: exit 0.

Numbers that are not results (a published figure, a setting, a date or version) are declared so in a
comment of the document, on a line of its own, with the reason in parentheses after them:

    <!-- not-results: 0.0605 0.0318 (P5's published SASRec, Beauty); 0.5 0.98 (settings: dropout, Adam β₂) -->

Each declared number leaves the worklist wherever it occurs in that document, and the count line says how
many prose decimals were set aside that way, so that the list stays small and visible. A declared number
that the prose does not use is reported too (a stale declaration); a group without its reason is an error.

    python3 scripts/results_prose_numbers.py [DOC.md ...] [-v]     (-v: every such line, with its numbers)
"""
import argparse
import os
import re
import sys

import results_tables as rt

DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])")
NOT_RESULTS = re.compile(r"^<!-- not-results: (.*) -->$")
# One group of a declaration: numbers, then the reason in parentheses.
GROUP = re.compile(r"^((?:\d+\.\d+\s+)+)\(([^()]+)\)$")


def declared_not_results(path, lines):
    """{number: reason} from the document's not-results comments, and the comments' line indices."""
    declared, at = {}, set()
    for i, line in enumerate(lines):
        m = NOT_RESULTS.match(line.strip())
        if not m:
            continue
        at.add(i)
        for group in m.group(1).split(";"):
            g = GROUP.match(group.strip())
            if not g or not g.group(2).strip():
                raise rt.BlockError(f"{path}:{i + 1}: not-results group {group.strip()!r} is not 'NUMBERS (REASON)'")
            for n in g.group(1).split():
                declared[n] = g.group(2).strip()
    return declared, at


def unmatched(path):
    """(prose decimals, [(line number, line, numbers in no block)], prose decimals declared not results,
    declared numbers the prose does not use) of one document."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks = rt.parse_blocks(path, lines)
    declared, declarations = declared_not_results(path, lines)
    inside = {i for b in blocks for i in range(b.begin, b.end + 1)}
    known = set(DECIMAL.findall("\n".join(lines[i] for i in sorted(inside))))
    fenced, total, out, set_aside, used = False, 0, [], 0, set()
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or i in inside or i in declarations:
            continue
        nums = DECIMAL.findall(line)
        total += len(nums)
        missing = [n for n in nums if n not in known]
        used.update(n for n in missing if n in declared)
        set_aside += sum(n in declared for n in missing)
        missing = [n for n in missing if n not in declared]
        if missing:
            out.append((i + 1, line, missing))
    return total, out, set_aside, sorted(set(declared) - used)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("docs", nargs="*")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    for d in rt.documents(rt.ROOT, args.docs):
        try:
            total, out, set_aside, stale = unmatched(d)
        except rt.BlockError as e:
            print(f"results_prose_numbers: {e}", file=sys.stderr)
            return 2
        print(f"{os.path.relpath(d, rt.ROOT)}: {sum(len(m) for _, _, m in out)} of {total} prose decimals in no block"
              + (f" ({set_aside} more declared not results)" if set_aside else "")
              + (f"; declared but unused: {', '.join(stale)}" if stale else ""))
        if args.verbose:
            for n, line, missing in out:
                print(f"  {n}: [{', '.join(missing)}] {line.strip()[:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
