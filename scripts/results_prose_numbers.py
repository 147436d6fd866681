#!/usr/bin/env python3
"""The decimal numbers in the prose of results/*.md (outside generated blocks and code fences) that appear in
no generated block of the same document: the worklist of issue 38's "no hand-typed result number". A number
listed is either a published figure, a setting, a date or version (fine), or a result typed by hand (move it
into a block, refer to the table instead, or say that its file was not kept). Informational: exit 0.

Two comments, each on a line of its own, take numbers off the worklist, and the count line says how many
each took, so that what is set aside stays small and visible:

    <!-- not-results: 0.0605 0.0318 (P5's published SASRec, Beauty); 0.5 0.98 (settings: dropout, Adam β₂) -->

declares numbers that are not results, each group with its reason in parentheses; each leaves the worklist
wherever it occurs in that document. A declared number that the prose does not use is reported (a stale
declaration), and a group without its reason is an error.

    <!-- no-file: copied from the terminal, no run file kept -->

marks the next paragraph or table (blank lines after the comment skipped, then up to the next blank line)
as text whose numbers have no file: the text itself must say so plainly; the comment only lets this list
tell those numbers apart from ones still to be generated.

    python3 scripts/results_prose_numbers.py [DOC.md ...] [-v]     (-v: every listed line, with its numbers)

Exit 2 with one line naming the document and line for a malformed declaration or block marker.
"""
import argparse
import os
import re
import sys

import results_tables as rt

# A sentence's full stop may follow a number and so may a ratio's x ("1.45x"); a version's next part
# ("0.3.21") and other letters (an exponent, "4.4e-6"; a name) may not.
DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?=x\b|(?!\w|\.\d))")
NOT_RESULTS = re.compile(r"^<!-- not-results: (.*) -->$")
NO_FILE = re.compile(r"^<!-- no-file: (.+) -->$")
# One group of a not-results declaration: numbers, then the reason in parentheses.
GROUP = re.compile(r"^((?:\d+\.\d+\s+)+)\(([^()]+)\)$")


def fenced_lines(lines):
    """The indices of the lines in ``` fences, the fence lines included (examples, not prose)."""
    fenced, inside = set(), False
    for i, line in enumerate(lines):
        starts = line.lstrip().startswith("```")
        if inside or starts:
            fenced.add(i)
        if starts:
            inside = not inside
    return fenced


def declared_not_results(path, lines, fenced):
    """{number: reason} from the document's not-results comments, and the comments' line indices."""
    declared, at = {}, set()
    for i, line in enumerate(lines):
        m = None if i in fenced else NOT_RESULTS.match(line.strip())
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


def no_file_lines(lines, fenced):
    """The indices of the no-file comments and of the paragraph or table each one marks."""
    marked = set()
    for i, line in enumerate(lines):
        if i in fenced or not NO_FILE.match(line.strip()):
            continue
        marked.add(i)
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        while j < len(lines) and lines[j].strip():
            marked.add(j)
            j += 1
    return marked


def unmatched(path):
    """Counts of one document's prose decimals {total, listed, not_results, no_file}, the listed lines
    [(line number, line, numbers)], and the declared numbers the prose does not use."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks = rt.parse_blocks(path, lines)
    fenced = fenced_lines(lines)
    declared, declarations = declared_not_results(path, lines, fenced)
    no_file = no_file_lines(lines, fenced)
    inside = {i for b in blocks for i in range(b.begin, b.end + 1)}
    known = set(DECIMAL.findall("\n".join(lines[i] for i in sorted(inside))))
    count = dict(total=0, listed=0, not_results=0, no_file=0)
    out, used = [], set()
    for i, line in enumerate(lines):
        if i in fenced or i in inside or i in declarations:
            continue
        nums = DECIMAL.findall(line)
        count["total"] += len(nums)
        missing = [n for n in nums if n not in known]
        used.update(n for n in nums if n in declared)
        count["not_results"] += sum(n in declared for n in missing)
        missing = [n for n in missing if n not in declared]
        if i in no_file:
            count["no_file"] += len(missing)
        elif missing:
            count["listed"] += len(missing)
            out.append((i + 1, line, missing))
    return count, out, sorted(set(declared) - used)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("docs", nargs="*")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    for d in rt.documents(rt.ROOT, args.docs):
        try:
            c, out, stale = unmatched(d)
        except (rt.BlockError, OSError, UnicodeDecodeError) as e:
            print(f"results_prose_numbers: {e}", file=sys.stderr)
            return 2
        aside = [f"{c['not_results']} declared not results"] if c["not_results"] else []
        aside += [f"{c['no_file']} in text marked no-file"] if c["no_file"] else []
        print(f"{os.path.relpath(d, rt.ROOT)}: {c['listed']} of {c['total']} prose decimals in no block"
              + (f" (set aside: {', '.join(aside)})" if aside else "")
              + (f"; declared but unused: {', '.join(stale)}" if stale else ""))
        if args.verbose:
            for n, line, missing in out:
                print(f"  {n}: [{', '.join(missing)}] {line.strip()[:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
