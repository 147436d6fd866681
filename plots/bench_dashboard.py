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
    """(context, {benchmark: median entry}, {benchmark: (min, max) of the repetitions' values per metric})."""
    with open(path) as f:
        data = json.load(f)
    ctx = data.get("context", {})
    rows, reps = {}, {}
    for b in data.get("benchmarks", []):
        name = b.get("run_name", b["name"])
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                rows[name] = b
            continue
        reps.setdefault(name, []).append(b)
        rows.setdefault(name, b)  # a run without aggregates: its first repetition
    spread = {}
    for name, entries in reps.items():
        for metric in ("GFLOP/s", "frac_gemm"):
            vals = [e[metric] for e in entries if metric in e]
            if vals:
                spread[(name, metric)] = (min(vals), max(vals))
    return ctx, rows, spread


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    ap.add_argument("-o", "--out", required=True)
    args = ap.parse_args()
    history = sorted((load(p) + (p,) for p in args.runs), key=lambda x: x[0].get("date", ""))
    labels = [f"{ctx.get('commit', os.path.basename(p))[:8]}\n{ctx.get('date', '')[:10]}" for ctx, _, _, p in history]
    names = sorted({n for _, rows, _, _ in history for n in rows if not n.startswith("gemm/")})
    outdir = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(outdir, exist_ok=True)

    figs = []
    panels = (("GFLOP/s", "effective rate (GFLOP/s; 6·P·V·D flop per step)",
               "Effective rate of each step benchmark per commit"),
              ("frac_gemm", "fraction of the same run's SGEMM rate (1 = SGEMM)",
               "Rate relative to the SGEMM measured in the same run (comparable across machines)"))
    for metric, ylabel, title in panels:
        fig, ax = plt.subplots(figsize=(12, 4.8))
        for n in names:
            ys, lo, hi = [], [], []
            for _, rows, spread, _ in history:
                y = rows.get(n, {}).get(metric, float("nan"))
                a, b = spread.get((n, metric), (y, y))
                ys.append(y)
                lo.append(y - a)
                hi.append(b - y)
            ax.errorbar(range(len(history)), ys, yerr=[lo, hi], fmt="o-", capsize=3, label=n)
        ax.set_xticks(range(len(history)))
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_xlabel("commit and date of the run (median of the repetitions; bars: their min–max)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
        # Outside the axes, so that no series is hidden behind it.
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
        fig.tight_layout()
        png = os.path.join(outdir, "dashboard_" + metric.replace("/", "_per_") + ".png")
        fig.savefig(png, dpi=110, bbox_inches="tight")
        plt.close(fig)
        figs.append(os.path.basename(png))

    last_ctx, last_rows, last_spread, last_path = history[-1]
    def spread_text(n):
        a, b = last_spread.get((n, "frac_gemm"), (float("nan"), float("nan")))
        return f"{100 * a:.0f}–{100 * b:.0f} %"
    table = "".join(
        f"<tr><td>{n}</td><td>{last_rows[n].get('real_time', float('nan')):.2f} {last_rows[n].get('time_unit', '')}</td>"
        f"<td>{last_rows[n].get('GFLOP/s', float('nan')):.1f}</td><td>{100 * last_rows[n].get('frac_gemm', float('nan')):.0f} %</td>"
        f"<td>{spread_text(n)}</td></tr>"
        for n in names if n in last_rows)
    html = f"""<!doctype html><html><head><meta charset="utf-8"><title>lobench performance</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:auto}}td,th{{padding:2px 10px;text-align:right}}td:first-child{{text-align:left}}</style></head>
<body><h1>lobench CPU step benchmark</h1>
<p>{len(history)} runs of <code>step_bench</code>. Absolute rates depend on the machine and its load; the fraction of the
SGEMM rate measured in the same run is the comparable number.</p>
{''.join(f'<p><img src="{f}" width="100%"></p>' for f in figs)}
<h2>Latest run: {last_ctx.get('commit', '?')} ({last_ctx.get('date', '')}, {last_ctx.get('host_name', '')})</h2>
<table><tr><th>benchmark</th><th>median time per step</th><th>GFLOP/s</th><th>of SGEMM (median)</th><th>of SGEMM (min–max)</th></tr>{table}</table>
</body></html>"""
    with open(args.out, "w") as f:
        f.write(html)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
