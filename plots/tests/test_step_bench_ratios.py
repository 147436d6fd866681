"""plots/step_bench_ratios.py's --table fused: one row per run and shape, in the order given, medians and
spreads of each row's own counters; the one-run tables refuse several runs."""
import json
import os
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "step_bench_ratios.py")


def write_run(path, commit, fused, chunked, products, epilogue_ns):
    """A step_bench-shaped run of one shape whose repetitions carry the given counter values."""
    benchmarks = []
    shape = "V:100000/D:128/manual_time"
    rows = {"fused": [{"frac_gemm_cpu": v, "GFLOP/s_cpu": 500 * v} for v in fused],
            "chunked": [{"frac_gemm_cpu_8PVD": v} for v in chunked],
            "gemm_products_own": [{"frac_gemm_cpu": v} for v in products],
            "epilogue": [{"ns_per_logit_cpu": v} for v in epilogue_ns]}
    for row, reps in rows.items():
        for i, counters in enumerate(reps):
            benchmarks.append({"name": f"{row}/{shape}", "run_name": f"{row}/{shape}", "run_type": "iteration",
                               "repetition_index": i, **counters})
    with open(path, "w") as f:
        json.dump({"context": {"commit": commit}, "benchmarks": benchmarks}, f)
    return str(path)


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def test_fused_table_has_a_row_per_run_in_order(tmp_path):
    before = write_run(tmp_path / "before.json", "03acbef0123", [0.86, 0.87, 0.88], [0.9, 0.91, 0.89],
                       [0.95, 0.96, 0.97], [0.12, 0.118, 0.121])
    after = write_run(tmp_path / "after.json", "5e230ac9999", [0.9, 0.89, 0.91], [0.92, 0.9, 0.93],
                      [0.96, 0.97, 0.95], [0.1, 0.107, 0.108])
    out = run(after, before, "--table", "fused")
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith("| after") or line.startswith("| before")]
    assert rows == [
        "| after.json | 5e230ac | V:100000/D:128 | 500 [500–500] | 450 [445–455] | 0.107 [0.1–0.108] | 0.96 [0.95–0.97] "
        "| 0.9 [0.89–0.91] | 0.92 [0.9–0.93] |",
        "| before.json | 03acbef | V:100000/D:128 | 500 [500–500] | 435 [430–440] | 0.12 [0.118–0.121] | 0.96 [0.95–0.97] "
        "| 0.87 [0.86–0.88] | 0.9 [0.89–0.91] |",
    ]


def test_one_run_tables_refuse_several_runs(tmp_path):
    a = write_run(tmp_path / "a.json", "a", [0.9], [0.9], [0.9], [0.1])
    out = run(a, a)
    assert out.returncode == 2 and "--table fused compares several" in out.stderr
