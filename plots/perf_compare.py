#!/usr/bin/env python3
"""Compare the repetitions of the same benchmarks in a baseline run and a candidate run.

Usage: python3 plots/perf_compare.py BASE CANDIDATE [--threshold 10] [--alpha 0.05] [--format text]
       (also `lobench compare BASE CANDIDATE ...`, which runs this script)

BASE and CANDIDATE are Google Benchmark JSON files (step_bench, or any benchmark binary) or lobench run
files. Each benchmark's repetitions are compared as times relative to the yardstick measured in the same
run (plots/perf_runs.py says which metric each kind of file gives), so a slower or busier machine does
not read as a regression. Per benchmark: the medians, their ratio CANDIDATE / BASE with a 95 % bootstrap
interval, the Mann–Whitney U p-value, each side's noise (coefficient of variation of its repetitions)
and a verdict (plots/perf_stats.py): `slower` when the ratio exceeds 1 + threshold and p < alpha,
`faster` for the mirror image, `same` otherwise.

Paired runs (plots/perf_paired.py, what scripts/bench_check.sh makes: the baseline commit's binary and the
candidate's run alternately in one session, the same `pairing` id in both files) are compared round by
round instead: per benchmark the candidate / baseline ratio of each round, their median with a
distribution-free 95 % interval, and the one-sided Wilcoxon signed-rank test that the ratios lie beyond
the threshold (plots/perf_stats.paired_test): `slower` when they are centred above 1 + threshold with
p < alpha. Needs at least 5 rounds.

Exit status: 0 nothing slower, 1 at least one gated benchmark slower, 2 usage (a file missing or not a
run, a malformed run, times that are not positive finite numbers, no benchmark in common, a bad option,
or a gated benchmark with too few repetitions to test: a gate that cannot see a regression must not pass;
--allow-untested accepts that, e.g. to browse old runs).
Formats: text (a table like Google Benchmark's compare.py), csv, jsonl, markdown (for a PR comment).
"""
import argparse
import csv
import html
import io
import json
import math
import sys

try:
    import numpy as np

    import perf_runs
    import perf_stats
except ImportError as e:  # a Python without numpy: say so, exit 2 (1 would read as "slower")
    print(f"lobench compare: {sys.executable} lacks {e.name or e} (pip install numpy h5py pandas, or set "
          f"LOBENCH_PYTHON to a Python that has them)", file=sys.stderr)
    sys.exit(2)

COLUMNS = ("benchmark", "metric", "n_base", "n_cand", "base", "cand", "unit", "ratio", "ratio_lo", "ratio_hi", "p_value",
           "noise_base", "noise_cand", "verdict", "gated", "paired")


def paired(base, cand):
    """True when the two runs are the two sides of one paired measurement (plots/perf_paired.py)."""
    return bool(base.pairing) and base.pairing == cand.pairing


def compare_paired(name, b, c, threshold, alpha):
    """The row of one benchmark of a paired run: ratios of the same round."""
    rounds = sorted(set(int(k) for k in b.rounds) & set(int(k) for k in c.rounds))
    bv = dict(zip((int(k) for k in b.rounds), b.values))
    cv = dict(zip((int(k) for k in c.rounds), c.values))
    ratios = np.array([cv[k] / bv[k] for k in rounds])
    t = perf_stats.paired_test(ratios, threshold, alpha) if len(ratios) else None
    return {"benchmark": name, "metric": c.metric + ", ratio per round", "unit": c.unit, "n_base": len(rounds),
            "n_cand": len(rounds), "base": float(np.median(b.values)), "cand": float(np.median(c.values)),
            "ratio": t["ratio"] if t else math.nan, "ratio_lo": t["ratio_lo"] if t else math.nan,
            "ratio_hi": t["ratio_hi"] if t else math.nan, "p_value": t["p_value"] if t else math.nan,
            "noise_base": perf_stats.relative_spread(b.values), "noise_cand": perf_stats.relative_spread(c.values),
            "verdict": t["verdict"] if t else "untested", "gated": c.gated and b.gated, "paired": True,
            "noise_ratio": t["noise"] if t else math.nan, "ratios": [float(x) for x in ratios]}


def compare_runs(base, cand, threshold=0.10, alpha=0.05):
    """One dict per benchmark in both runs (COLUMNS), in the candidate's order."""
    if paired(base, cand):
        return [compare_paired(name, base.series[name], c, threshold, alpha)
                for name, c in cand.series.items() if name in base.series]
    rows = []
    for name, c in cand.series.items():
        b = base.series.get(name)
        if b is None:
            continue
        ratio = float(np.median(c.values) / np.median(b.values))
        testable = perf_stats.min_p(len(b.values), len(c.values)) < alpha
        if testable:
            _, p = perf_stats.mann_whitney(b.values, c.values)
            lo, hi = perf_stats.ratio_interval(b.values, c.values)
        else:
            p, lo, hi = math.nan, math.nan, math.nan
        v = perf_stats.verdict(ratio, p, threshold, alpha) if testable else "untested"
        rows.append({"benchmark": name, "metric": c.metric, "unit": c.unit, "n_base": len(b.values), "n_cand": len(c.values),
                     "base": float(np.median(b.values)), "cand": float(np.median(c.values)), "ratio": ratio,
                     "ratio_lo": lo, "ratio_hi": hi, "p_value": p, "noise_base": perf_stats.relative_spread(b.values),
                     "noise_cand": perf_stats.relative_spread(c.values), "verdict": v, "gated": c.gated and b.gated,
                     "paired": False})
    return rows


def summary(rows, base, cand, threshold, alpha):
    gated = [r for r in rows if r["gated"]]
    slower = [r for r in gated if r["verdict"] == "slower"]
    untested = [r for r in rows if r["verdict"] == "untested"]
    noise = [max(r["noise_base"], r["noise_cand"]) for r in gated]
    lines = [f"baseline {base.path} (commit {base.commit}, {base.machine})",
             f"candidate {cand.path} (commit {cand.commit}, {cand.machine})",
             f"threshold {100 * threshold:.0f} %, alpha {alpha}; noise (CV of the repetitions, median over benchmarks) "
             f"{100 * float(np.median(noise)) if noise else float('nan'):.1f} %, largest "
             f"{100 * max(noise) if noise else float('nan'):.1f} %"]
    if paired(base, cand):
        spread = [r["noise_ratio"] for r in gated if math.isfinite(r["noise_ratio"])]
        lines.append(f"paired run {cand.pairing}: {rows[0]['n_cand'] if rows else 0} rounds, ratios of the same round; "
                     f"slower = ratios centred above {1 + threshold:.2f} (one-sided Wilcoxon signed-rank, p < {alpha}); "
                     f"spread of the ratios (CV) median {100 * float(np.median(spread)) if spread else float('nan'):.1f} %")
    elif base.pairing or cand.pairing:
        lines.append("note: not the two sides of one paired run; compared as independent samples")
    if base.machine != cand.machine:
        lines.append("note: the runs are from different machines; only ratios to each run's own yardstick compare")
    if untested:
        lines.append(f"note: {len(untested)} benchmark(s) untested: too few repetitions for p < {alpha} "
                     + ("(a paired run needs at least 5 rounds)" if paired(base, cand) else
                        "(Mann–Whitney needs at least 4 against 4: Google Benchmark --benchmark_repetitions >= 4, "
                        "lobench run --reps >= 4)"))
    lines.append(f"{len(slower)} slower, {sum(r['verdict'] == 'faster' for r in gated)} faster, "
                 f"{sum(r['verdict'] == 'same' for r in gated)} same of {len(gated)} gated benchmarks")
    return lines


def fmt_num(x, spec):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def ordered(rows):
    """Gated rows first, then by benchmark name: a reader finds a benchmark where they expect it."""
    return sorted(rows, key=lambda r: (not r["gated"], r["benchmark"]))


def as_text(rows, lines):
    w = max([len("benchmark")] + [len(r["benchmark"]) for r in rows])
    out = [f"{'benchmark':<{w}}  {'base':>10} {'cand':>10} {'unit':<12} {'ratio':>7} {'95% interval':>15} {'p':>8} "
           f"{'noise':>11}  verdict"]
    for r in ordered(rows):
        interval = f"[{fmt_num(r['ratio_lo'], '.3f')}, {fmt_num(r['ratio_hi'], '.3f')}]"
        noise = (f"{100 * r['noise_ratio']:.1f}% pairs" if r.get("paired")
                 else f"{100 * r['noise_base']:.1f}/{100 * r['noise_cand']:.1f}%")
        tag = "" if r["gated"] else " (yardstick, not gated)"
        out.append(f"{r['benchmark']:<{w}}  {r['base']:>10.4g} {r['cand']:>10.4g} {r['unit']:<12} "
                   f"{r['ratio']:>7.3f} {interval:>15} {fmt_num(r['p_value'], '.4f'):>8} {noise:>11}  {r['verdict']}{tag}")
    return "\n".join(out + [""] + lines) + "\n"


def md_text(text):
    """Text safe inside a Markdown table cell of a PR comment: HTML-escaped, and the characters that
    start code spans, links, images, mentions, emphasis or cells written as entities."""
    out = html.escape(str(text), quote=True)
    for ch, ent in (("`", "&#96;"), ("|", "&#124;"), ("@", "&#64;"), ("[", "&#91;"), ("]", "&#93;"),
                    ("!", "&#33;"), ("*", "&#42;"), ("_", "&#95;"), ("\\", "&#92;"), ("\n", " "), ("\r", " ")):
        out = out.replace(ch, ent)
    return out


def as_markdown(rows, lines):
    out = ["| benchmark | base | candidate | unit | ratio | 95 % interval | p | noise | verdict |",
           "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |"]
    for r in ordered(rows):
        mark = {"slower": "**slower**", "faster": "faster", "same": "same"}.get(r["verdict"], r["verdict"])
        out.append(f"| <code>{md_text(r['benchmark'])}</code> | {r['base']:.4g} | {r['cand']:.4g} | {md_text(r['unit'])} | "
                   f"{r['ratio']:.3f} | "
                   f"{fmt_num(r['ratio_lo'], '.3f')}–{fmt_num(r['ratio_hi'], '.3f')} | {fmt_num(r['p_value'], '.4f')} | "
                   + (f"{100 * r['noise_ratio']:.1f} % of the pairs" if r.get("paired") else
                      f"{100 * r['noise_base']:.1f} % / {100 * r['noise_cand']:.1f} %") + f" | {mark}"
                   f"{'' if r['gated'] else ' (yardstick)'} |")
    return "\n".join(out + [""] + [f"- {md_text(line)}" for line in lines]) + "\n"


def csv_cell(v):
    """A spreadsheet reads a cell that starts with = + - @ (or a tab / carriage return) as a formula:
    such text cells get a leading apostrophe (numbers are left alone)."""
    if isinstance(v, str) and v[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + v
    return v


def as_csv(rows):
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({k: csv_cell(v) for k, v in r.items()})
    return buf.getvalue()


def as_jsonl(rows):
    clean = lambda v: None if isinstance(v, float) and math.isnan(v) else v  # noqa: E731 (JSON has no NaN)
    return "".join(json.dumps({k: clean(v) for k, v in r.items()}) + "\n" for r in rows)


def render(rows, lines, form):
    if form == "text":
        return as_text(rows, lines)
    if form == "markdown":
        return as_markdown(rows, lines)
    return as_csv(rows) if form == "csv" else as_jsonl(rows)


class UsageParser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"{self.prog}: {message}", file=sys.stderr)
        sys.exit(2)


def main(argv=None):
    ap = UsageParser(prog="lobench compare", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base", metavar="BASE")
    ap.add_argument("cand", metavar="CANDIDATE")
    ap.add_argument("--threshold", type=float, default=10.0, help="percent slower that fails (default 10)")
    ap.add_argument("--alpha", type=float, default=0.05, help="significance level of the test (default 0.05)")
    ap.add_argument("--format", choices=("text", "csv", "jsonl", "markdown"), default="text")
    ap.add_argument("--clock", choices=perf_runs.CLOCKS, default=perf_runs.DEFAULT_CLOCK,
                    help="step_bench JSON: compare process CPU time (default) or wall time (plots/perf_runs.py)")
    ap.add_argument("--filter", default="", help="only benchmarks whose name contains this")
    ap.add_argument("--allow-untested", action="store_true",
                    help="exit 0 rather than 2 when benchmarks have too few repetitions to test")
    ap.add_argument("--exit-offset", type=int, default=0, help=argparse.SUPPRESS)  # `lobench compare`'s protocol
    args = ap.parse_args(argv)
    if not (0 <= args.threshold < 1000) or not (0 < args.alpha < 1):
        ap.error(f"--threshold {args.threshold} must be in [0, 1000) percent and --alpha {args.alpha} in (0, 1)")
    try:
        rc = compare(args)
    except (perf_runs.RunFileError, ValueError, TypeError, KeyError, MemoryError, RecursionError) as e:
        # Whatever a malformed file gets through the readers' checks ends here, as a refusal: exit 1 is
        # "slower", and a traceback must never read as a verdict.
        print(f"lobench compare: {str(e)[:500]}", file=sys.stderr)
        rc = 2
    return rc + args.exit_offset


def compare(args):
    base, cand = perf_runs.load(args.base, args.clock), perf_runs.load(args.cand, args.clock)
    threshold = args.threshold / 100
    rows = [r for r in compare_runs(base, cand, threshold, args.alpha) if args.filter in r["benchmark"]]
    if not rows:
        print(f"lobench compare: {args.base} and {args.cand} have no benchmark in common"
              f"{' matching ' + repr(args.filter) if args.filter else ''}", file=sys.stderr)
        return 2
    lines = summary(rows, base, cand, threshold, args.alpha)
    sys.stdout.write(render(rows, lines, args.format))
    sys.stdout.flush()  # the table before any message on stderr
    if args.format in ("csv", "jsonl"):
        print("\n".join(lines), file=sys.stderr)
    if any(r["gated"] and r["verdict"] == "slower" for r in rows):
        return 1
    if not args.allow_untested and any(r["gated"] and r["verdict"] == "untested" for r in rows):
        print("lobench compare: gated benchmarks were not tested (too few repetitions); --allow-untested accepts that",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
