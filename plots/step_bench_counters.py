"""The counters of a step_bench JSON run, per row and shape, one value per repetition: what the results
tables made from step_bench runs read (step_bench_bf16.py, step_bench_targets.py)."""
import json
from collections import defaultdict


def counters(path):
    """{(row, shape): {counter: [value per repetition]}}; shape "V:…/D:…", or "" for a row without one
    (the peak row)."""
    with open(path) as f:
        run = json.load(f)
    out = defaultdict(lambda: defaultdict(list))
    for b in run["benchmarks"]:
        if b.get("run_type") != "iteration" or b.get("error_occurred"):
            continue
        row, _, shape = b["run_name"].replace("/manual_time", "").partition("/")
        for k, v in b.items():
            if isinstance(v, (int, float)):
                out[(row, shape if shape.startswith("V:") else "")][k].append(float(v))
    return out
