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
    assert out.returncode == 2 and "--table fused and --table steps compare several" in out.stderr


def test_steps_table_has_a_row_per_run_shape_and_named_row_in_order(tmp_path):
    def write(path, commit, times_ms, x_bf16):
        shape = "V:100000/D:128/manual_time"
        benchmarks = [{"name": f"fused_bf16/{shape}", "run_name": f"fused_bf16/{shape}", "run_type": "iteration",
                       "repetition_index": i, "real_time": t, "GFLOP/s": 78643.2 / t} for i, t in enumerate(times_ms)]
        benchmarks += [{"name": f"fused_e4m3/{shape}", "run_name": f"fused_e4m3/{shape}", "run_type": "iteration",
                        "repetition_index": i, "real_time": t / x, "GFLOP/s": 78643.2 * x / t, "x_bf16": x}
                       for i, (t, x) in enumerate(zip(times_ms, x_bf16))]
        with open(path, "w") as f:
            json.dump({"context": {"commit": commit}, "benchmarks": benchmarks}, f)
        return str(path)

    a = write(tmp_path / "a.json", "1111111aaa", [80.0, 82.0, 81.0], [0.95, 0.94, 0.96])
    b = write(tmp_path / "b.json", "2222222bbb", [70.0, 72.0], [0.97, 0.98])
    out = run(b, a, "--table", "steps", "--rows", "fused_bf16,fused_e4m3")
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith("| a.json") or line.startswith("| b.json")]
    assert rows[0] == ("| b.json | 2222222 | V:100000/D:128 | fused_bf16 | 71.0 [70.0–72.0] (2) | 1108 [1092–1123] "
                       "| 1.000 [1.000–1.000] |  |")
    # e4m3's median time over bf16's in the same run: median(70/0.97, 72/0.98) / 71
    e4m3_b = (70 / 0.97 + 72 / 0.98) / 2 / 71
    assert rows[1].startswith("| b.json | 2222222 | V:100000/D:128 | fused_e4m3 | ")
    assert rows[1].endswith(f"| {e4m3_b:.3f} [{e4m3_b:.3f}–{e4m3_b:.3f}] | 0.975 [0.970–0.980] |")
    assert rows[2] == ("| a.json | 1111111 | V:100000/D:128 | fused_bf16 | 81.0 [80.0–82.0] (3) | 971 [959–983] "
                       "| 1.000 [1.000–1.000] |  |")
    assert len(rows) == 4

    # --by-commit: each commit's runs together, the spread over the runs' medians (x_bf16 too)
    a2 = write(tmp_path / "a2.json", "1111111aaa", [90.0, 92.0, 91.0], [0.9, 0.9, 0.9])
    out = run(a, b, a2, "--table", "steps", "--rows", "fused_bf16,fused_e4m3", "--by-commit")
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith("| 1111111") or line.startswith("| 2222222")]
    assert rows[0] == ("| 1111111 | V:100000/D:128 | fused_bf16 | 2 | 86.0 [81.0–91.0] | 918 [864–971] "
                       "| 1.000 [1.000–1.000] |  |")
    assert rows[1].startswith("| 1111111 | V:100000/D:128 | fused_e4m3 | 2 | ")
    assert rows[1].endswith("| 0.925 [0.900–0.950] |")  # (the median of the runs' medians 0.95 and 0.9)
    assert [r.split(" | ")[0] for r in rows] == ["| 1111111", "| 1111111", "| 2222222", "| 2222222"]
