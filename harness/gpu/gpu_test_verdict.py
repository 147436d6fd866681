#!/usr/bin/env python3
"""The verdict of harness/gpu/check.sh's GPU-test stage, from the test executables' JUnit XML reports.

    python3 harness/gpu/gpu_test_verdict.py --gpu-present 0|1 --run NAME EXIT_CODE XML [--run ...]

Each --run is one gtest executable of the ctest label `gpu`, run with --gtest_output=xml:XML; EXIT_CODE
is its exit status. The GPU tests call GTEST_SKIP where no CUDA device can be used, and a skip is not
a failure to gtest or ctest, so "every test passed" proves nothing by itself. The rule:

  FAIL     a test failed, an executable exited non-zero or left no readable report, no test ran at all,
           or (with a GPU present) any test was skipped or not run: on a GPU machine a skip means the
           device could not be used, and the stage must not pass without having run its kernels.
  SKIPPED  no GPU present, nothing failed, and tests were skipped (each with its reason, printed).
  OK       nothing failed and nothing was skipped.

Exit status: 0 OK, 1 FAIL, 3 SKIPPED, 2 usage error. The first line printed is the verdict and the
counts; the skipped and failed tests follow, one a line, with gtest's message.
Also reads CTest's --output-junit files (testcase status="run|fail|notrun|disabled").
"""
import argparse
import re
import sys
import xml.etree.ElementTree as ET

OK, FAIL, USAGE, SKIPPED = 0, 1, 2, 3


def test_cases(xml_path):
    """(name, outcome, message) per test case; outcome is passed, failed or skipped."""
    root = ET.parse(xml_path).getroot()
    cases = []
    for tc in root.iter("testcase"):
        name = f"{tc.get('classname', '')}.{tc.get('name', '')}".lstrip(".")
        failure = tc.find("failure")
        if failure is None:
            failure = tc.find("error")
        skipped = tc.find("skipped")
        status = tc.get("status", "")
        result = tc.get("result", "")
        if failure is not None or status == "fail":
            msg = "" if failure is None else (failure.get("message") or failure.text or "")
            cases.append((name, "failed", msg))
        elif skipped is not None or status in ("notrun", "disabled") or result in ("skipped", "suppressed"):
            msg = "" if skipped is None else (skipped.get("message") or skipped.text or "")
            cases.append((name, "skipped", msg or f"(no reason given; status={status or result or '?'})"))
        else:
            cases.append((name, "passed", ""))
    return cases


def first_line(text):
    """A message on one line: gtest's skip and failure messages start with a `file:line` line, dropped."""
    lines = [ln.strip() for ln in (text or "").strip().splitlines() if ln.strip()]
    if len(lines) > 1 and re.fullmatch(r"\S+:\d+", lines[0]):
        lines = lines[1:]
    return " ".join(lines)[:300]


def verdict(gpu_present, runs):
    """runs: [(name, exit_code, xml_path)] -> (status, lines)."""
    passed, failed, skipped, broken = [], [], [], []
    for name, code, path in runs:
        try:
            cases = test_cases(path)
        except (OSError, ET.ParseError) as e:
            broken.append(f"{name}: no readable report {path} ({type(e).__name__}: {e}); exit status {code}")
            continue
        for case, outcome, msg in cases:
            {"passed": passed, "failed": failed, "skipped": skipped}[outcome].append((f"{name}: {case}", msg))
        if code != 0 and not any(f.startswith(name + ":") for f, _ in failed):
            broken.append(f"{name}: exit status {code} although its report lists no failed test")
    counts = (f"{len(passed) + len(failed) + len(skipped)} tests: {len(passed)} passed, {len(failed)} failed, "
              f"{len(skipped)} skipped; {len(broken)} executable problems")
    lines = [f"  FAILED  {n}: {first_line(m)}" for n, m in failed]
    lines += [f"  BROKEN  {b}" for b in broken]
    lines += [f"  SKIPPED {n}: {first_line(m)}" for n, m in skipped]
    if failed or broken:
        return FAIL, [f"FAIL: {counts}"] + lines
    if not passed and not skipped:
        return FAIL, [f"FAIL: {counts}: no test ran"] + lines
    if skipped and gpu_present:
        return FAIL, [f"FAIL: {counts}: a GPU is present, so a skipped GPU test means its kernels never ran"] + lines
    if skipped:
        reasons = sorted({first_line(m) for _, m in skipped})
        return SKIPPED, [f"SKIPPED (no GPU): {counts}; reason: {' | '.join(reasons)}"] + lines
    return OK, [f"OK: {counts}"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu-present", type=int, choices=(0, 1), required=True)
    ap.add_argument("--run", nargs=3, action="append", default=[], metavar=("NAME", "EXIT_CODE", "XML"))
    a = ap.parse_args(argv)
    runs = []
    for name, code, path in a.run:
        try:
            runs.append((name, int(code), path))
        except ValueError:
            print(f"gpu_test_verdict.py: --run {name}: exit code '{code}' is not an integer", file=sys.stderr)
            return USAGE
    status, lines = verdict(bool(a.gpu_present), runs)
    print("\n".join(lines))
    return status


if __name__ == "__main__":
    sys.exit(main())
