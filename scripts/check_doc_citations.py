#!/usr/bin/env python3
"""Every document a tracked file cites is in the repository, and every section it cites exists.

docs/method.md is the contract (what every variant computes, how lobench measures); code comments and
docs cite its sections as `docs/method.md#accuracy`. This check reads every tracked text file and fails on
- a citation of DESIGN.md, the design notes that were never part of the repository (cite docs/method.md);
- a link `FILE.md#anchor` whose FILE.md exists but has no heading with that anchor. FILE.md is resolved
  beside the citing file, then from the repository root (`docs/method.md#time` in a C++ comment). Anchors
  are GitHub's: the heading's text lower-cased, everything but letters, digits, '_', '-' and spaces
  dropped, spaces turned into '-', and "-1", "-2", ... added to repeats. Headings inside fenced code
  blocks are not headings.

Prints `file:line: problem` for each and exits 1 if there is any.

Usage: check_doc_citations.py [ROOT]      (ROOT: the repository; default: this script's folder's parent)
       check_doc_citations.py --self-test (the check on a made-up tree with each kind of broken citation)
"""
import os
import re
import subprocess
import sys

import checker_main

FORBIDDEN = re.compile(r"DESIGN\.md")
CITATION = re.compile(r"([\w./-]*\.md)#([\w-]+)")
TEXT_SUFFIXES = (".md", ".hpp", ".cpp", ".cu", ".cuh", ".h", ".py", ".sh", ".txt", ".cmake", ".toml", ".args",
                 ".in", ".yml", ".yaml", ".cfg")
SKIP_DIRS = {".git", "__pycache__", "node_modules"}
THIS = "scripts/check_doc_citations.py"  # names DESIGN.md to forbid it


def tracked_files(root):
    """The repository's tracked files (git ls-files), or every file outside build folders without git."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True)
        return sorted(p for p in out.stdout.decode().split("\0") if p)
    except (OSError, subprocess.CalledProcessError):
        found = []
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("build"))
            found += [os.path.relpath(os.path.join(folder, f), root) for f in sorted(files)]
        return found


def github_anchor(heading):
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors_of(markdown):
    """The set of anchors of a Markdown text's headings (fenced code blocks skipped)."""
    found, counts, fence = set(), {}, None
    for line in markdown.splitlines():
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            if fence is None:
                fence = m.group(1)
            elif line.strip().startswith(fence):
                fence = None
            continue
        if fence is not None:
            continue
        h = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not h:
            continue
        base = github_anchor(h.group(1))
        n = counts.get(base, 0)
        counts[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def check(root):
    errors, anchor_cache = [], {}

    def anchors(path):
        if path not in anchor_cache:
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as fh:
                anchor_cache[path] = anchors_of(fh.read())
        return anchor_cache[path]

    for path in tracked_files(root):
        if path == THIS or not path.endswith(TEXT_SUFFIXES) or not os.path.isfile(os.path.join(root, path)):
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
        for lineno, line in enumerate(lines, 1):
            if FORBIDDEN.search(line):
                errors.append(f"{path}:{lineno}: cites DESIGN.md, which is not in the repository: cite the "
                              "section of docs/method.md instead")
            for m in CITATION.finditer(line):
                cited, anchor = m.group(1), m.group(2)
                candidates = [os.path.normpath(os.path.join(os.path.dirname(path), cited)), os.path.normpath(cited)]
                target = next((c for c in candidates if not c.startswith("..") and os.path.isfile(os.path.join(root, c))), None)
                if target is None:
                    continue  # not a file of this repository (a URL's page, a placeholder)
                if anchor not in anchors(target):
                    errors.append(f"{path}:{lineno}: cites {cited}#{anchor}, but {target} has no section with "
                                  "that anchor")
    return errors


def self_test():
    import tempfile
    files = {
        "docs/method.md": "# Title\n\n## The loss\n\n```sh\n# not a heading\n```\n### Accuracy\n## Accuracy\n",
        "variants/a.cpp": "// see docs/method.md#the-loss and docs/method.md#accuracy-1\n",
        "variants/b.cpp": "// x\n// the contract (DESIGN.md)\n",
        "variants/c.hpp": "// docs/method.md#not-a-heading\n",
        "docs/other.md": "[the loss](method.md#the-loss), [gone](method.md#gone), [web](https://x.org/a.md#b)\n",
    }
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as fh:
                fh.write(text)
        errors = check(root)
    joined = "\n".join(errors)
    assert "variants/b.cpp:2: cites DESIGN.md" in joined, joined
    assert "variants/c.hpp:1: cites docs/method.md#not-a-heading" in joined, joined  # inside a code block
    assert "docs/other.md:1: cites method.md#gone" in joined, joined
    assert "variants/a.cpp" not in joined and "the-loss" not in joined, joined
    assert len(errors) == 3, errors
    assert github_anchor("Useful work: the flop counts") == "useful-work-the-flop-counts"
    assert github_anchor("`lobench train-xmc`: low-precision XMC (ELMO's recipe)") == "lobench-train-xmc-low-precision-xmc-elmos-recipe"
    print("self-test passed")
    return 0


def main(argv):
    return checker_main.run(argv, check, self_test, "{n} citation(s) of a missing document or section", "every cited document and section exists")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
