#!/usr/bin/env python3
"""A static performance site from a history store of benchmark runs (plots/perf_history.py).

Usage: python3 plots/bench_dashboard.py STORE -o SITE [--threshold 10] [--alpha 0.05] [--clock cpu]
                                        [--baseline COMMIT] [--commit-url URL_WITH_{commit}]

STORE is the history folder (STORE/<machine>/<date>_<commit>.json|.h5), never the source tree; SITE is
written new (index.html, one page per machine and benchmark, dashboard.js, and plotly.min.js copied from
the installed `plotly` Python package, so the site works offline and from file://).

Every benchmark page has two interactive time series (Plotly): the gated metric (time relative to the
yardstick of the same run, plots/perf_runs.py; the median of the repetitions, bars from their min to
max) and its fraction of the yardstick's rate; hovering a point shows the commit, date, machine, spread
and the gate's verdict against the previous run. Points where the gate (plots/perf_stats.py, the same
test and metric as `lobench compare`) finds the run slower than the previous one carry a red marker,
faster ones a green one. The page and the index give the latest run against the previous one and
against the baseline (the run of --baseline COMMIT, else the machine's first run; a machine without that
commit has no baseline comparison, and a commit that matches no run is an error, exit 2), and flag rows above
their yardstick (a fraction over 1 is a measurement error), untested ones and noisy ones (CV > 5 %).

Paired entries (scripts/bench_check.sh --record: the baseline commit's step_bench measured beside the
candidate's in one session) get pages of their own, "NAME (paired)": per run, the candidate / baseline
ratio of the same rounds (median, distribution-free 95 % interval) and the gate's paired verdict, so
runs from different CPUs sit on one honest scale; beside it, each run's absolute times on its machine
(candidate and baseline).
"""
import argparse
import hashlib
import html
import json
import os
import re
import shutil
import sys

import numpy as np

import perf_compare
import perf_history
import perf_runs

NOISY_CV = 0.05
HERE = os.path.dirname(os.path.abspath(__file__))


def plotly_js():
    """Path of plotly.min.js inside the installed plotly package (vendored into the site)."""
    try:
        import plotly
    except ImportError:
        raise perf_runs.RunFileError("the dashboard needs the Python package plotly (pip install plotly)")
    path = os.path.join(os.path.dirname(plotly.__file__), "package_data", "plotly.min.js")
    if not os.path.isfile(path):
        raise perf_runs.RunFileError(f"{path}: missing from the installed plotly package")
    return path


def slug(name):
    """A file name for a benchmark or machine: readable, at most ~100 bytes, and one-to-one (two names
    that differ only in a character the readable part replaces, '/' against '_', get different hashes)."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_.")[:80]
    return f"{readable}-{hashlib.sha1(name.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def machine_dir(machine):
    """The folder of a machine's pages: its fingerprint, already file-safe (plots/perf_runs.fingerprint)."""
    return machine if re.fullmatch(r"[A-Za-z0-9._-]{1,100}", machine) and machine not in (".", "..") else slug(machine)


def pair(base_run, cand_run, name, threshold, alpha):
    """The gate's row for one benchmark between two runs, or None when either lacks it."""
    b, c = base_run.series.get(name), cand_run.series.get(name)
    if b is None or c is None:
        return None
    one = perf_runs.Run(base_run.path, base_run.kind, series={name: b})
    two = perf_runs.Run(cand_run.path, cand_run.kind, series={name: c})
    rows = perf_compare.compare_runs(one, two, threshold, alpha)
    return rows[0] if rows else None


def point(run, name, vs_prev):
    s = run.series[name]
    frac = s.fraction
    return {"date": run.date, "commit": run.commit, "machine": run.machine_text, "file": os.path.basename(run.path),
            "median": float(np.median(s.values)), "min": float(np.min(s.values)), "max": float(np.max(s.values)),
            "cv": perf_compare.perf_stats.relative_spread(s.values), "n": int(len(s.values)),
            "frac": None if frac is None else float(np.median(frac)),
            "frac_min": None if frac is None else float(np.min(frac)),
            "frac_max": None if frac is None else float(np.max(frac)),
            "verdict": vs_prev["verdict"] if vs_prev else "first",
            "ratio": vs_prev["ratio"] if vs_prev else None, "p": vs_prev["p_value"] if vs_prev else None}


def clean(x):
    """JSON has no NaN: None instead."""
    if isinstance(x, float) and not np.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [clean(v) for v in x]
    return x


def benchmark_series(runs, name, baseline, threshold, alpha):
    """(points in time order, latest vs previous, latest vs baseline) of one benchmark on one machine."""
    having = [r for r in runs if name in r.series]
    points, prev = [], None
    for r in having:
        points.append(point(r, name, pair(prev, r, name, threshold, alpha) if prev else None))
        prev = r
    latest = having[-1]
    vs_prev = pair(having[-2], latest, name, threshold, alpha) if len(having) > 1 else None
    vs_base = pair(baseline, latest, name, threshold, alpha) if baseline is not None and baseline is not latest else None
    return points, vs_prev, vs_base


def flags(points, series):
    out = []
    last = points[-1]
    if last["frac"] is not None and last["frac"] > 1:
        out.append("above yardstick")
    if last["cv"] > NOISY_CV:
        out.append(f"noisy (CV {100 * last['cv']:.0f} %)")
    if not series.gated:
        out.append("yardstick")
    return out


def verdict_cell(row):
    if row is None:
        return "<td>-</td>"
    v = row["verdict"]
    interval = "" if row["ratio_lo"] is None or not np.isfinite(row["ratio_lo"]) else \
        f" [{row['ratio_lo']:.3f}, {row['ratio_hi']:.3f}]"
    p = "" if not np.isfinite(row["p_value"]) else f", p {row['p_value']:.3g}"
    return f'<td class="{v}">{row["ratio"]:.3f}{interval}{p} <b>{v}</b></td>'


def paired_point(entry, name, threshold, alpha):
    """One paired entry's point on a benchmark's page: the ratio to the baseline commit measured beside it."""
    b, c = entry.base.series[name], entry.cand.series[name]
    row = perf_compare.compare_paired(name, b, c, threshold, alpha)
    return row, {"date": entry.cand.date, "commit": entry.cand.commit, "base_commit": entry.base.commit,
                 "machine": entry.cand.machine_text, "file": os.path.basename(entry.path),
                 "median": row["ratio"], "min": row["ratio_lo"], "max": row["ratio_hi"], "cv": row["noise_ratio"],
                 "n": row["n_cand"], "frac": None, "verdict": row["verdict"], "ratio": row["ratio"],
                 "p": row["p_value"], "seconds": float(np.median(c.seconds)), "seconds_min": float(np.min(c.seconds)),
                 "seconds_max": float(np.max(c.seconds)), "base_seconds": float(np.median(b.seconds)),
                 "base_seconds_min": float(np.min(b.seconds)), "base_seconds_max": float(np.max(b.seconds))}


PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>{title}</title>
<script>window.lobenchErrors = [];
window.addEventListener("error", function (e) {{ window.lobenchErrors.push(String(e.message)); }});
(function () {{ var f = console.error; console.error = function () {{
  window.lobenchErrors.push(Array.prototype.join.call(arguments, " ")); f.apply(console, arguments); }}; }})();</script>
<style>body{{font-family:sans-serif;max-width:1200px;margin:auto;padding:0 1em}}
table{{border-collapse:collapse}}td,th{{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;font-size:13px}}
.slower{{background:#fdd}}.faster{{background:#dfd}}.flag{{color:#b60}}.chart{{height:420px}}</style>
{head}</head><body>
<div id="lobench-status" data-charts="0" data-regressions="0" data-errors="0" data-ready="0"></div>
{body}</body></html>
"""


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def benchmark_page(site, machine, name, points, vs_prev, vs_base, fl, metric, commit_url, paired=False,
                   threshold=0.10):
    data = clean({"name": name, "machine": machine, "metric": metric, "points": points, "commitUrl": commit_url,
                  "paired": paired, "threshold": threshold})
    data_json = json.dumps(data).replace("</", "<\\/")  # no "</script>" inside the script element
    body = (f'<p><a href="../index.html">all benchmarks</a></p><h1>{html.escape(name)}</h1>'
            f'<p>machine <code>{html.escape(machine)}</code> ({html.escape(points[-1]["machine"])}); '
            f'{len(points)} runs; metric: {html.escape(metric)} (lower is faster)'
            f'{"; <span class=flag>" + html.escape(", ".join(fl)) + "</span>" if fl else ""}</p>'
            '<table><tr><th>latest against</th><th>ratio [95 % interval], p, verdict</th></tr>'
            f'<tr><td>previous run</td>{verdict_cell(vs_prev)}</tr><tr><td>baseline</td>{verdict_cell(vs_base)}</tr>'
            '</table><div id="metric" class="chart"></div><div id="fraction" class="chart"></div>'
            f'<script type="application/json" id="lobench-data">{data_json}</script>'
            '<script src="../dashboard.js"></script>')
    head = '<script src="../plotly.min.js"></script>'
    write(os.path.join(site, machine_dir(machine), page_name(name)),
          PAGE.format(title=html.escape(name), head=head, body=body))


def page_name(name):
    return slug(name) + ".html"


def commit_link(commit, url):
    """The commit (already escaped), linked when a --commit-url template was given."""
    if not url:
        return commit
    return f'<a href="{html.escape(url.replace("{commit}", commit))}">{commit}</a>'


def index_page(site, entries, args, across=()):
    rows = []
    for e in sorted(entries, key=lambda e: (e["rank"], e["machine"], e["name"])):
        rows.append(f'<tr><td><code>{html.escape(e["machine"])}</code></td><td><a href="{e["href"]}">'
                    f'{html.escape(e["name"])}</a></td><td>{e["latest"]:.4g}</td><td>{commit_link(e["commit"], args.commit_url)}</td>'
                    f'{verdict_cell(e["vs_prev"])}{verdict_cell(e["vs_base"])}'
                    f'<td class="flag">{html.escape(", ".join(e["flags"]))}</td></tr>')
    links = "".join(f'<li><a href="{href}">{html.escape(name)}</a></li>' for name, href in across)
    body = (f"<h1>Benchmarks</h1><p>History {html.escape(os.path.abspath(args.store))}; gate: threshold "
            f"{args.threshold:g} %, alpha {args.alpha}; paired runs: one-sided Wilcoxon signed-rank on the per-round "
            f"ratios to the baseline commit measured beside them; runs made alone: Mann–Whitney U on the repetitions; "
            f"clock {args.clock}. Regressions first.</p>"
            + (f"<h2>Paired runs, every machine on one chart</h2><ul>{links}</ul>" if links else "")
            + "<table><tr><th>machine</th><th>benchmark</th><th>latest (median)</th>"
            "<th>commit</th><th>vs previous run</th><th>vs baseline</th><th>flags</th></tr>"
            + "".join(rows) + "</table><script src=\"dashboard.js\"></script>")
    write(os.path.join(site, "index.html"), PAGE.format(title="lobench benchmarks", head="", body=body))


def single_entries(args, machine, runs, threshold):
    """Pages and index rows of a machine's runs made alone (compared run against run)."""
    entries = []
    # (--baseline: that commit's run; a machine without one has no baseline column, not its first run)
    baseline = next((r for r in runs if r.commit.startswith(args.baseline)), None) if args.baseline else runs[0]
    for name in dict.fromkeys(n for r in runs for n in r.series):
        points, vs_prev, vs_base = benchmark_series(runs, name, baseline, threshold, args.alpha)
        series = next(r.series[name] for r in reversed(runs) if name in r.series)
        fl = flags(points, series)
        benchmark_page(args.out, machine, name, points, vs_prev, vs_base, fl, series.metric, args.commit_url)
        verdicts = {(vs_prev or {}).get("verdict"), (vs_base or {}).get("verdict")}
        entries.append({"machine": machine, "name": name, "href": f"{machine_dir(machine)}/{page_name(name)}",
                        "latest": points[-1]["median"], "commit": html.escape(points[-1]["commit"]),
                        "vs_prev": vs_prev, "vs_base": vs_base, "flags": fl,
                        "rank": 0 if "slower" in verdicts and series.gated else 1})
    return entries


def paired_entries(args, machine, runs, threshold):
    """Pages and index rows of a machine's paired runs: each against the baseline commit beside it."""
    entries = []
    for name in dict.fromkeys(n for r in runs for n in r.cand.series if n in r.base.series):
        having = [r for r in runs if name in r.cand.series and name in r.base.series]
        rows, points = zip(*(paired_point(r, name, threshold, args.alpha) for r in having))
        gated = having[-1].cand.series[name].gated
        fl = [] if gated else ["yardstick"]
        if points[-1]["cv"] is not None and points[-1]["cv"] > NOISY_CV:
            fl.append(f"noisy pairs (CV {100 * points[-1]['cv']:.0f} %)")
        label = f"{name} (paired)"
        metric = f"candidate / baseline commit, {having[-1].cand.series[name].metric}, ratio of the same round"
        benchmark_page(args.out, machine, label, list(points), None, rows[-1], fl, metric, args.commit_url,
                       paired=True, threshold=threshold)
        entries.append({"machine": machine, "name": label, "href": f"{machine_dir(machine)}/{page_name(label)}",
                        "latest": points[-1]["median"], "commit": html.escape(points[-1]["commit"]),
                        "vs_prev": None, "vs_base": rows[-1], "flags": fl,
                        "rank": 0 if rows[-1]["verdict"] == "slower" and gated else 1, "points": list(points)})
    return entries


ACROSS = "all-machines"


def across_machines_pages(site, entries, threshold):
    """One page per paired benchmark with every machine's ratios on one chart: each ratio is to a baseline
    measured on its own machine in the same minutes, so the scales agree. Returns [(name, href)]."""
    by_name = {}
    for e in entries:
        if "points" in e:
            by_name.setdefault(e["name"], []).append({"machine": e["machine"], "text": e["points"][-1]["machine"],
                                                      "points": e["points"]})
    out = []
    for name, machines in sorted(by_name.items()):
        data = clean({"name": name, "paired": True, "threshold": threshold, "machines": machines})
        data_json = json.dumps(data).replace("</", "<\\/")
        body = (f'<p><a href="../index.html">all benchmarks</a></p><h1>{html.escape(name)}: every machine</h1>'
                f'<p>{len(machines)} machine(s). Each point: the candidate / baseline ratio of the same rounds, the '
                'baseline commit built and measured beside the candidate on that machine; absolute times below are '
                'per machine only.</p><div id="metric" class="chart"></div><div id="fraction" class="chart"></div>'
                f'<script type="application/json" id="lobench-data">{data_json}</script>'
                '<script src="../dashboard.js"></script>')
        write(os.path.join(site, ACROSS, page_name(name)),
              PAGE.format(title=html.escape(name), head='<script src="../plotly.min.js"></script>', body=body))
        out.append((name, f"{ACROSS}/{page_name(name)}"))
    return out


def build(args):
    skipped = []
    machines = perf_history.machines(args.store, args.clock, skipped)
    for why in skipped:
        print(f"bench_dashboard: skipped an unreadable entry: {why}", file=sys.stderr)
    if not machines:
        raise perf_runs.RunFileError(f"{args.store}: no runs in the history folder")
    if os.path.abspath(args.out) == os.path.abspath(args.store):
        raise perf_runs.RunFileError("the site and the history store must be different folders")
    if args.baseline:  # a typo would otherwise compare against something else, silently
        commits = sorted({r.commit for runs in machines.values() for r in runs if isinstance(r, perf_runs.Run)})
        if not any(c.startswith(args.baseline) for c in commits):
            shown = ", ".join(commits[:10]) + (f" and {len(commits) - 10} more" if len(commits) > 10 else "")
            raise perf_runs.RunFileError(f"--baseline {args.baseline!r} matches no run made alone in {args.store} "
                                         f"(their commits: {shown or 'none'})")
    os.makedirs(args.out, exist_ok=True)
    shutil.copyfile(plotly_js(), os.path.join(args.out, "plotly.min.js"))
    shutil.copyfile(os.path.join(HERE, "bench_dashboard.js"), os.path.join(args.out, "dashboard.js"))
    entries, threshold = [], args.threshold / 100
    for machine, runs in machines.items():
        singles = [r for r in runs if isinstance(r, perf_runs.Run)]
        paired = [r for r in runs if isinstance(r, perf_history.Paired)]
        if singles:
            entries += single_entries(args, machine, singles, threshold)
        if paired:
            entries += paired_entries(args, machine, paired, threshold)
    across = across_machines_pages(args.out, entries, threshold)
    index_page(args.out, entries, args, across)
    return entries


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("store")
    ap.add_argument("-o", "--out", required=True, help="the site folder")
    ap.add_argument("--threshold", type=float, default=10.0, help="percent (the gate's, default 10)")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--clock", choices=perf_runs.CLOCKS, default=perf_runs.DEFAULT_CLOCK)
    ap.add_argument("--baseline", default="", help="commit (prefix) of the baseline run (default: each machine's first); one that matches no run made "
                    "alone is an error")
    ap.add_argument("--commit-url", default="", help="link for a commit, {commit} replaced (e.g. a web view of the repo)")
    args = ap.parse_args()
    try:
        entries = build(args)
    except perf_runs.RunFileError as e:
        print(f"bench_dashboard: {e}", file=sys.stderr)
        return 2
    slower = sum(e["rank"] == 0 for e in entries)
    print(f"wrote {args.out}/index.html: {len(entries)} benchmark pages, {slower} with a regression")
    return 0


if __name__ == "__main__":
    sys.exit(main())
