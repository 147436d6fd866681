#!/usr/bin/env python3
"""Trials of the paired performance gate (issue 41): how often it flags an unchanged candidate, and how
often it catches injected slowdowns, on this machine as it is (run it beside other work for a loaded one).

    python3 plots/gate_trials.py --base BIN --cand BIN --trials 10 --out results/bench/gate_trials.json
                                 [--factors 1,1.3,2] [--rounds 9]

Each trial runs scripts/bench_check.sh once per factor (1: unchanged; F: the candidate's variants do F
times their work, --inject F), the factors in a random order, and keeps the gate's exit status, the load
average before and after, and every paired ratio of every set of rounds (first and confirming). The
output JSON is what results/bench/README.md's table is generated from (plots/gate_trials.py --table).

    python3 plots/gate_trials.py --table results/bench/gate_trials.json     (Markdown, to stdout)
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

import numpy as np

import perf_compare
import perf_paired
import perf_runs

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def cpu_model():
    info = perf_paired.cpuinfo()
    return f"{info.get('model name', '?')} (family {info.get('cpu family', '?')}, model {info.get('model', '?')})"


def set_rows(path):
    """The gated rows of one set of rounds (paired/ or confirm/): the gate's own comparison of its files."""
    if not os.path.isfile(os.path.join(path, "cand.json")):
        return None
    base, cand = (perf_runs.load(os.path.join(path, f"{side}.json")) for side in ("base", "cand"))
    return [{k: row[k] for k in ("benchmark", "ratio", "ratio_lo", "ratio_hi", "p_value", "verdict", "ratios")}
            for row in perf_compare.compare_runs(base, cand) if row["gated"]]


def trial(args, factor, work):
    cmd = ["bash", os.path.join(ROOT, "scripts/bench_check.sh"), "--baseline-bench", args.base, "--step-bench",
           args.cand, "--rounds", str(args.rounds), work]
    if factor != 1:
        cmd[-1:-1] = ["--inject", str(factor)]
    load0, start = os.getloadavg()[0], time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    verdict = [ln for ln in r.stdout.splitlines() if ln.startswith("bench_check: ")][-1:]
    return {"factor": factor, "exit": r.returncode, "seconds": round(time.time() - start, 1),
            "load_before": load0, "load_after": os.getloadavg()[0], "verdict_line": verdict[0] if verdict else "",
            "sets": [s for s in (set_rows(os.path.join(work, "paired")), set_rows(os.path.join(work, "confirm")))
                     if s is not None]}


def run(args):
    factors = [float(f) for f in args.factors.split(",")]
    rng = random.Random(args.seed)
    results = {"cpu": cpu_model(), "rounds": args.rounds, "factors": factors, "threshold_pct": 10,
               "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "trials": []}
    for t in range(args.trials):
        order = factors[:]
        rng.shuffle(order)
        for f in order:
            work = os.path.join(args.work, f"t{t}_x{f:g}")
            results["trials"].append(dict(trial(args, f, work), trial=t))
            last = results["trials"][-1]
            print(f"gate_trials: trial {t + 1}/{args.trials} x{f:g}: exit {last['exit']} in {last['seconds']} s, "
                  f"load {last['load_before']:.1f}", file=sys.stderr, flush=True)
            with open(args.out, "w") as fh:  # after every trial: an interrupted campaign keeps what it measured
                json.dump(results, fh, indent=1)
    return results


def table(path):
    d = json.load(open(path))
    out = [f"CPU: {d['cpu']}; {d['rounds']} rounds per set; threshold {d['threshold_pct']} %; started {d['started_utc']}.",
           "", "| injected | runs | exit 0 (pass) | exit 1 (slower, confirmed) | other | load 1-min, median (min-max) "
           "| first set's median ratio per benchmark: median [min-max] over runs |", "|---|---:|---:|---:|---:|---|---|"]
    for f in d["factors"]:
        ts = [t for t in d["trials"] if t["factor"] == f]
        if not ts:
            continue
        loads = [t["load_before"] for t in ts]
        by_bench = {}
        for t in ts:
            for row in (t["sets"][0] if t["sets"] else []):
                by_bench.setdefault(row["benchmark"].replace("/manual_time", ""), []).append(row["ratio"])
        ratios = "; ".join(f"{b} {np.median(v):.3f} [{min(v):.3f}-{max(v):.3f}]" for b, v in sorted(by_bench.items()))
        out.append(f"| {'none' if f == 1 else f'{f:g}x'} | {len(ts)} | {sum(t['exit'] == 0 for t in ts)} | "
                   f"{sum(t['exit'] == 1 for t in ts)} | {sum(t['exit'] not in (0, 1) for t in ts)} | "
                   f"{np.median(loads):.1f} ({min(loads):.1f}-{max(loads):.1f}) | {ratios} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base")
    ap.add_argument("--cand")
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--factors", default="1,1.3,2")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "gate-trials"))
    ap.add_argument("--out")
    ap.add_argument("--table", metavar="JSON")
    args = ap.parse_args()
    if args.table:
        sys.stdout.write(table(args.table))
        return 0
    if not (args.base and args.cand and args.out):
        ap.error("--base, --cand and --out are needed (or --table JSON)")
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
