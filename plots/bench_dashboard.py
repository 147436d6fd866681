#!/usr/bin/env python3
"""Static HTML performance dashboard from the committed history of `step_bench` runs.

Usage: python3 plots/bench_dashboard.py results/bench/history/*.json -o results/bench/dashboard.html

Each JSON file is one Google Benchmark run of step_bench (its context carries the commit and date).
For each variant, two figures over the runs in commit-date order: effective GFLOP/s (the benchmark's
`GFLOP/s` counter) and its fraction of the SGEMM rate measured in the same run (`frac_gemm` (the ratio that is
comparable across machines). The page embeds the figures as PNG files written beside it.
"""
import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path) as f:
        data = json.load(f)
    ctx = data.get("context", {})
    rows = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b.get("run_name", b["name"])
        rows.setdefault(name, b)  # first (or median) entry per benchmark
    return ctx, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    ap.add_argument("-o", "--out", required=True)
    args = ap.parse_args()
    history = sorted((load(p) + (p,) for p in args.runs), key=lambda x: x[0].get("date", ""))
    labels = [f"{ctx.get('commit', os.path.basename(p))[:8]}\n{ctx.get('date', '')[:10]}" for ctx, _, p in history]
    names = sorted({n for _, rows, _ in history for n in rows if not n.startswith("gemm/")})
    outdir = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(outdir, exist_ok=True)

    figs = []
    for metric, ylabel in (("GFLOP/s", "effective GFLOP/s (6·P·V·D per step)"), ("frac_gemm", "fraction of the same run's SGEMM rate")):
        fig, ax = plt.subplots(figsize=(10, 4.5))
        for n in names:
            ys = [rows.get(n, {}).get(metric, float("nan")) for _, rows, _ in history]
            ax.plot(range(len(history)), ys, "o-", label=n)
        ax.set_xticks(range(len(history)))
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        png = os.path.join(outdir, "dashboard_" + metric.replace("/", "_per_") + ".png")
        fig.savefig(png, dpi=110)
        plt.close(fig)
        figs.append(os.path.basename(png))

    last_ctx, last_rows, last_path = history[-1]
    table = "".join(
        f"<tr><td>{n}</td><td>{last_rows[n].get('real_time', float('nan')):.2f} {last_rows[n].get('time_unit', '')}</td>"
        f"<td>{last_rows[n].get('GFLOP/s', float('nan')):.1f}</td><td>{100 * last_rows[n].get('frac_gemm', float('nan')):.0f} %</td></tr>"
        for n in names if n in last_rows)
    html = f"""<!doctype html><html><head><meta charset="utf-8"><title>lobench performance</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:auto}}td,th{{padding:2px 10px;text-align:right}}td:first-child{{text-align:left}}</style></head>
<body><h1>lobench CPU step benchmark</h1>
<p>{len(history)} runs of <code>step_bench</code>. Absolute rates depend on the machine and its load; the fraction of the
SGEMM rate measured in the same run is the comparable number.</p>
{''.join(f'<p><img src="{f}" width="100%"></p>' for f in figs)}
<h2>Latest run: {last_ctx.get('commit', '?')} ({last_ctx.get('date', '')}, {last_ctx.get('host_name', '')})</h2>
<table><tr><th>benchmark</th><th>time</th><th>GFLOP/s</th><th>of SGEMM</th></tr>{table}</table>
</body></html>"""
    with open(args.out, "w") as f:
        f.write(html)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
