"""plots/yardstick_table.py and plots/epilogue_table.py on committed run files (schema version 5): every row
that ran is a line, and the numbers in it are the row's own (%GEMM over the larger yardstick, the errors over
the epilogue's unit roundoff, the times over the fp32 epilogue's)."""
import math
import os
import statistics
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, ".."))
from lobench_results import load, text  # noqa: E402

YARDSTICK_RUN = os.path.join(ROOT, "results/cpu/zen5_shape_yardstick_1_20261206.h5")
EPILOGUE_RUN = os.path.join(ROOT, "results/cpu/epilogue_fp32_operands_zen5_20261206.h5")


def table(script, *runs):
    out = subprocess.run([sys.executable, os.path.join(ROOT, "plots", script), *runs], capture_output=True, text=True,
                         check=True).stdout
    return [[c.strip() for c in line.strip("|").split("|")] for line in out.splitlines()
            if line.startswith("| ") and not line.startswith("| ---")]


def test_yardstick_table_divides_by_the_larger_yardstick():
    header, *lines = table("yardstick_table.py", YARDSTICK_RUN)
    rows, attrs = load(YARDSTICK_RUN)
    assert len(lines) == len(rows) > 0
    for cells, r in zip(lines, rows):
        line = dict(zip(header, cells))
        rate, square, shape = float(r["effective_gflops"]), float(attrs["sgemm_best_gflops"]), float(r["shape_gemm_gflops"])
        assert line["variant"] == text(r["variant"])
        assert float(line["%GEMM"].rstrip(" %")) == pytest.approx(100 * rate / max(square, shape), abs=0.05)
        assert float(line["over the square alone"].rstrip(" %")) == pytest.approx(100 * rate / square, abs=0.05)
        assert float(line["square product"]) == pytest.approx(square, abs=0.05)
        assert line["operand"] == "fp32"


def test_epilogue_table_measures_errors_in_the_formats_unit_roundoff():
    header, *lines = table("epilogue_table.py", EPILOGUE_RUN)
    rows, _ = load(EPILOGUE_RUN)
    assert len(lines) == sum(text(r["status"]) == "ok" for r in rows) > 0
    seen = set()
    for cells in lines:
        line = dict(zip(header, cells))
        seen.add(line["epilogue"])
        if line["epilogue"] == "fp32":
            assert line["largest / u"] == "–" and line["× fp32 epilogue's time"] == "1"
            continue
        u = {"bf16": 2.0 ** -8, "fp16": 2.0 ** -11}[line["epilogue"]]
        largest = max(float(line[c]) for c in ("rel. loss error", "rel. dA error", "rel. dE error"))
        # (the errors are printed to two digits)
        assert float(line["largest / u"]) == pytest.approx(largest / u, rel=0.06)
        assert float(line["× fp32 epilogue's time"]) > 1
    assert seen == {"fp32", "bf16", "fp16"}


ONEDNN_RUN = os.path.join(ROOT, "results/cpu/zen5_onednn_yardstick_1_20261206.h5")


def test_square_products_table_reads_every_library_and_the_bf16_ratio():
    header, *lines = table("square_products_table.py", ONEDNN_RUN, YARDSTICK_RUN)
    assert len(lines) == 2
    _, attrs = load(ONEDNN_RUN)
    line = dict(zip(header, lines[0]))
    assert float(line["oneDNN (GFLOP/s)"]) == pytest.approx(float(attrs["sgemm_onednn_gflops"]), abs=0.05)
    assert float(line["best SGEMM (GFLOP/s)"]) == pytest.approx(float(attrs["sgemm_best_gflops"]), abs=0.05)
    ratio = float(attrs["bf16_gemm_gflops"]) / float(attrs["bf16_gemm_onednn_gflops"])
    assert float(line["lobench bf16 / oneDNN bf16"]) == pytest.approx(ratio, abs=0.005)
    # a file from before oneDNN entered the yardsticks: its libraries dashed, not an error
    older = dict(zip(header, lines[1]))
    assert older["oneDNN (GFLOP/s)"] == "–" and older["lobench bf16 / oneDNN bf16"] == "–"


@pytest.mark.parametrize("script", ["square_products_table.py", "products_paths_table.py", "cpu_targets_table.py"])
def test_a_table_refuses_a_missing_file_in_one_line(tmp_path, script):
    missing = str(tmp_path / "none.h5")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "plots", script), ONEDNN_RUN, missing],
                       capture_output=True, text=True)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.strip().count("\n") == 0 and missing in r.stderr, r.stderr
    assert r.stderr.startswith(script[:-3] + ": "), r.stderr


PRODUCTS_RUNS = [os.path.join(ROOT, f"results/cpu/zen5_products_{path}_{i}_20261207.h5")
                 for i in (1, 2, 3) for path in ("own", "onednn")] + [
    os.path.join(ROOT, "results/cpu/zen5_products_auto_20261207.h5")]


def test_products_paths_table_names_each_files_path_and_compares_medians():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "plots", "products_paths_table.py"), *PRODUCTS_RUNS],
                         capture_output=True, text=True, check=True).stdout
    lines = [[c.strip() for c in line.strip("|").split("|")] for line in out.splitlines()
             if line.startswith("| ") and not line.startswith("| ---")]
    per_file = [dict(zip(lines[0], cells)) for cells in lines[1:] if len(cells) == len(lines[0])]
    summary_at = next(i for i, cells in enumerate(lines) if cells[0] == "variant")
    summary = [dict(zip(lines[summary_at], cells)) for cells in lines[summary_at + 1:]]
    times = {}
    for path in PRODUCTS_RUNS:  # every fp32 row of every file is a line, with the file's own path and time
        rows, attrs = load(path)
        name = os.path.basename(path)
        mine = [line for line in per_file if line["run file"] == name]
        assert len(mine) == len(rows) == 2
        expected = "oneDNN" if "onednn" in name else "own"
        for line, r in zip(mine, rows):
            assert line["fp32 products"] == expected
            assert line["how"] == ("measured now" if "auto" in name else f"forced (LOBENCH_PRODUCTS={expected.lower()})")
            assert float(line["median ms"]) == pytest.approx(1e3 * float(r["time_median_s"]), abs=0.05)
            times.setdefault((int(r["D"]), expected), []).append(1e3 * float(r["time_median_s"]))
    assert len(summary) == 4
    for line in summary:
        ms = times[(int(line["D"]), line["path"])]
        assert int(line["files"]) == len(ms)
        assert float(line["median ms [min–max]"].split(" ")[0]) == pytest.approx(statistics.median(ms), abs=0.05)
        ratio = statistics.median(ms) / statistics.median(times[(int(line["D"]), "own")])
        assert float(line["/ own's median"]) == pytest.approx(ratio, abs=0.0005)
    assert "the choice's basis: measured now on 2 threads" in out


def targets_line(*runs):
    header, *lines = table("cpu_targets_table.py", *runs)
    return [dict(zip(header, cells)) for cells in lines]


def test_cpu_targets_table_judges_each_ratio_of_the_run():
    (line,) = targets_line(ONEDNN_RUN)
    rows, attrs = load(ONEDNN_RUN)

    def fraction(variant, operand, D=None):
        return [float(r["gemm_fraction"]) for r in rows if text(r["variant"]) == variant
                and text(r["operand"]) == operand and (D is None or int(r["D"]) == D)]

    for D, target in ((128, 0.90), (256, 0.95)):
        (f,) = fraction("fused", "fp32", D)
        value, mark = line[f"fp32 fused, D = {D} (≥ {int(100 * target)} %)"].rsplit(" ", 1)
        assert float(value.rstrip(" %")) == pytest.approx(100 * f, abs=0.01)
        assert float(value.rstrip(" %")) <= 100 * f  # (rounded down: never reads as meeting a target it misses)
        assert mark == ("✓" if f >= target else "✗")
    chunked = min(fraction("chunked", "fp32")) * 8 / 6
    value, mark = line["chunked, 8·P·V·D (≥ 85 %)"].rsplit(" ", 1)
    assert float(value.rstrip(" %")) == pytest.approx(100 * chunked, abs=0.01) and mark == ("✓" if chunked >= 0.85 else "✗")
    # the AMX targets on a CPU without AMX: the value shown, not judged
    assert line["AMX"] == "no"
    assert line["bf16 fused, D = 128 (≥ 70 % on AMX)"].endswith("(no AMX)")
    ratio = float(attrs["bf16_gemm_gflops"]) / float(attrs["bf16_gemm_onednn_gflops"])
    assert line["bf16 GEMM / oneDNN (≥ 1.00 on AMX)"] == f"{math.floor(100 * ratio) / 100:.2f} (no AMX)"
    assert line["e4m3 / bf16 time (≤ 1.05)"] == "–"  # (no e4m3 rows in this run)


def test_cpu_targets_table_judges_the_amx_targets_where_the_cpu_has_amx(tmp_path):
    import h5py
    import shutil
    amx = str(tmp_path / "amx.h5")
    shutil.copy(ONEDNN_RUN, amx)
    with h5py.File(amx, "r+") as f:
        f.attrs["cpu_simd"] = "avx2,fma,avx512f,avx512_bf16,amx_tile,amx_bf16"
    (line,) = targets_line(amx)
    rows, attrs = load(amx)
    (bf16,) = [float(r["gemm_fraction"]) for r in rows if text(r["variant"]) == "fused"
               and text(r["operand"]) == "bf16" and int(r["D"]) == 128]
    assert line["AMX"] == "yes"
    assert line["bf16 fused, D = 128 (≥ 70 % on AMX)"] == f"{math.floor(1e4 * bf16) / 100:.2f} % {'✓' if bf16 >= 0.70 else '✗'}"
    ratio = float(attrs["bf16_gemm_gflops"]) / float(attrs["bf16_gemm_onednn_gflops"])
    assert line["bf16 GEMM / oneDNN (≥ 1.00 on AMX)"] == f"{math.floor(100 * ratio) / 100:.2f} {'✓' if ratio >= 1.0 else '✗'}"


def test_cpu_targets_table_counts_under_several_runs_how_often_each_target_was_met(tmp_path):
    import h5py
    import shutil
    runs = [os.path.join(ROOT, f"results/cpu/zen5_targets_{i}_20261207.h5") for i in (1, 2, 3)]
    amx = str(tmp_path / "amx.h5")  # a fourth run that judges the AMX targets too
    shutil.copy(runs[0], amx)
    with h5py.File(amx, "r+") as f:
        f.attrs["cpu_simd"] = "avx2,fma,avx512f,avx512_bf16,amx_tile,amx_bf16"
    runs.append(amx)
    out = subprocess.run([sys.executable, os.path.join(ROOT, "plots", "cpu_targets_table.py"), *runs],
                         capture_output=True, text=True, check=True).stdout
    lines = targets_line(*runs)
    assert len(lines) == 4
    (summary,) = [s for s in out.splitlines() if s.startswith("Targets met")]
    counts = dict(part.rsplit(": ", 1) for part in summary.split(": ", 1)[1].rstrip(".").split("; "))
    columns = {"fp32 fused, D = 128": "fp32 fused, D = 128 (≥ 90 %)", "fp32 fused, D = 256": "fp32 fused, D = 256 (≥ 95 %)",
               "chunked": "chunked, 8·P·V·D (≥ 85 %)", "bf16 fused, D = 128": "bf16 fused, D = 128 (≥ 70 % on AMX)",
               "e4m3 / bf16 time": "e4m3 / bf16 time (≤ 1.05)", "bf16 GEMM / oneDNN": "bf16 GEMM / oneDNN (≥ 1.00 on AMX)"}
    for name, column in columns.items():
        cells = [line[column] for line in lines]
        judged = [c for c in cells if c.endswith("✓") or c.endswith("✗")]
        assert counts[name] == f"{sum(c.endswith('✓') for c in judged)} of {len(judged)}", (name, cells)
    assert counts["bf16 fused, D = 128"].endswith("of 1")  # (judged in the AMX run only)
    # one run: no such line
    one = subprocess.run([sys.executable, os.path.join(ROOT, "plots", "cpu_targets_table.py"), runs[0]],
                         capture_output=True, text=True, check=True).stdout
    assert "Targets met" not in one


def test_cpu_targets_table_reads_the_e4m3_rows_and_counts_the_flagged_ones():
    runs = [os.path.join(ROOT, f"results/cpu/zen5_targets_{i}_20261207.h5") for i in (1, 2, 3)]
    lines = targets_line(*runs)
    assert len(lines) == 3
    for path, line in zip(runs, lines):
        rows, _ = load(path)
        seconds = {text(r["operand"]): float(r["time_median_s"]) for r in rows
                   if text(r["variant"]) == "fused" and int(r["D"]) == 128}
        ratio = seconds["e4m3"] / seconds["bf16"]
        value, mark = line["e4m3 / bf16 time (≤ 1.05)"].rsplit(" ", 1)
        assert float(value) == pytest.approx(ratio, abs=0.001) and float(value) >= ratio  # (rounded up)
        assert mark == ("✓" if ratio <= 1.05 else "✗")
        fp32 = [float(r["time_median_s"]) for r in rows if text(r["variant"]) == "fused" and text(r["operand"]) == "fp32"
                and int(r["D"]) == 128]
        assert line["bf16 / fp32 fused speed, D = 128 (shown)"] == f"{fp32[0] / seconds['bf16']:.2f}×"
        flagged = sum(text(r["flags"]) != "" for r in rows)
        assert line["rows flagged"] == f"{flagged} of {len(rows)}"
        assert line["CPU"].startswith("AMD EPYC, family 26 model 2")
