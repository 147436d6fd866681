"""plots/plot_sweep.py: every ok row drawn and distinguishable, the yardstick in the title, reasons and
legend outside the data."""
import os

import numpy as np
import pytest

import plot_sweep
from run_file_fixture import write_run

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LONG_REASON = "OOM predicted: 3·P·V floats of working memory exceed the 24 GiB the machine has free at this point"


def sweep_run(tmp_path, attrs):
    rows = []
    for variant in ("fused", "chunked", "dense"):
        for V in (1000, 2000, 4000):
            skipped = variant == "dense" and V == 4000
            rows.append({"variant": variant, "V": V, "status": "skipped" if skipped else "ok",
                         "reason": LONG_REASON if skipped else "",
                         # fused and chunked: the same memory, so one series lies on the other
                         "time_median_s": np.nan if skipped else V * 1e-6 * (1 + ("chunked" == variant)),
                         "peak_bytes": np.nan if skipped else (2**20 if variant != "dense" else V * 4096.0),
                         "predicted_bytes": np.nan if skipped else (2**20 if variant != "dense" else V * 4096.0),
                         "gemm_gflops": 123.0})
    return write_run(str(tmp_path / "sweep.h5"), rows, {**attrs, "cpu_model": "test cpu", "git_commit": "abc"})


def data_lines(ax):
    return [ln for ln in ax.get_lines() if not ln.get_label().startswith("_") and len(ln.get_xdata()) > 0
            and ln.get_transform() == ax.transData]


@pytest.mark.parametrize("attrs,rate", [({"sgemm_best_gflops": 144.3}, "SGEMM 144 GFLOP/s"), ({}, "SGEMM 123 GFLOP/s")])
def test_title_names_the_yardstick_the_file_has(tmp_path, attrs, rate):
    fig = plot_sweep.draw(sweep_run(tmp_path, attrs))
    title = fig._suptitle.get_text()
    assert "nan" not in title.lower() and rate in title


def test_every_ok_row_is_drawn_and_series_are_distinct(tmp_path):
    fig = plot_sweep.draw(sweep_run(tmp_path, {"sgemm_best_gflops": 100.0}))
    ax_t, ax_m = fig.axes[:2]
    expected = {"fused": [1000, 2000, 4000], "chunked": [1000, 2000, 4000], "dense": [1000, 2000]}
    for ax in (ax_t, ax_m):
        drawn = {ln.get_label(): list(ln.get_xdata()) for ln in data_lines(ax)}
        assert drawn.keys() == expected.keys()
        for label, xs in drawn.items():  # dodged sideways by a few percent, never onto another V
            assert len(xs) == len(expected[label])
            assert all(abs(x / v - 1) < 0.1 for x, v in zip(xs, expected[label])), (label, xs)
    styles = {(ln.get_marker(), str(ln.get_linestyle())) for ln in data_lines(ax_m)}
    assert len(styles) == 3, "two series share marker and line style, so one can hide the other"
    # chunked and fused have equal memory: their points must not sit on each other
    mem = {ln.get_label(): np.asarray(ln.get_xdata()) for ln in data_lines(ax_m)}
    assert np.all(np.abs(mem["fused"] / mem["chunked"] - 1) > 0.03)


def noisy_run(tmp_path):
    """fused's V=2000 point measured under load: flagged, and slower than V=4000 with the spreads apart."""
    rows, samples = [], {}
    for V, sec, flags in ((1000, [1e-3, 1.1e-3, 1.3e-3], ""), (2000, [9e-3, 12e-3, 15e-3], "busy,noisy"),
                          (4000, [4e-3, 4.2e-3, 4.4e-3], "")):
        samples[len(rows)] = sec
        rows.append({"variant": "fused", "V": V, "time_median_s": float(np.median(sec)), "flags": flags,
                     "peak_bytes": 2.0**20, "predicted_bytes": 2.0**21, "gemm_gflops": 100.0})
    return write_run(str(tmp_path / "noisy.h5"), rows, {"cpu_model": "test cpu"}, samples=samples)


def test_every_timing_point_draws_the_spread_of_its_samples(tmp_path):
    fig = plot_sweep.draw(noisy_run(tmp_path))
    ax_t = fig.axes[0]
    bars = [c for c in ax_t.containers if c.get_label() == "_spread"]
    assert len(bars) == 1
    segments = bars[0].lines[2][0].get_segments()
    spans = sorted((round(seg[0][1], 6), round(seg[1][1], 6)) for seg in segments)
    assert spans == [(1.0, 1.3), (4.0, 4.4), (9.0, 15.0)]  # ms: fastest to slowest sample of each row


def test_flagged_and_unsettled_points_are_ringed_and_named(tmp_path):
    fig = plot_sweep.draw(noisy_run(tmp_path))
    ax_t = fig.axes[0]
    rings = [ln for ln in ax_t.get_lines() if ln.get_label() in ("_flagged", "_unsettled")]
    assert {ln.get_label() for ln in rings} == {"_flagged", "_unsettled"}
    assert all(abs(ln.get_xdata()[0] / 2000 - 1) < 0.1 for ln in rings)
    assert any(t.get_text() == "busy,noisy" for t in ax_t.texts)
    notes = " ".join(t.get_text() for t in fig.texts)
    assert "V=2000: slower than at V=4000" in " ".join(notes.split())


def test_the_predicted_memory_is_visible_beside_the_measured(tmp_path):
    fig = plot_sweep.draw(noisy_run(tmp_path))
    ax_m = fig.axes[1]
    predicted = [ln for ln in ax_m.get_lines() if ln.get_label() == "_predicted"]
    measured = data_lines(ax_m)
    assert len(predicted) == 1 and len(measured) == 1
    assert list(predicted[0].get_ydata()) == [2.0] * 3 and list(measured[0].get_ydata()) == [1.0] * 3
    # wider than the measured line, so that where the two agree it still shows as a band around it
    assert predicted[0].get_linewidth() > 3 * measured[0].get_linewidth()


def test_reasons_are_whole_and_legend_outside_the_axes(tmp_path):
    fig = plot_sweep.draw(sweep_run(tmp_path, {"sgemm_best_gflops": 100.0}))
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    fig_box = fig.bbox
    notes = [t for t in fig.texts if "OOM predicted" in t.get_text()]
    assert notes and "".join(notes[0].get_text().split()).endswith("".join(LONG_REASON.split()))
    nb = notes[0].get_window_extent(renderer)
    assert nb.x0 >= fig_box.x0 and nb.x1 <= fig_box.x1 and nb.y0 >= fig_box.y0
    legend = fig.legends[0].get_window_extent(renderer)
    assert legend.x0 >= fig_box.x0 and legend.x1 <= fig_box.x1 and legend.y0 >= fig_box.y0
    for ax in fig.axes[:2]:
        assert not legend.overlaps(ax.get_window_extent(renderer)), "the legend covers a panel"
        assert ax.get_legend() is None


def test_committed_table2_draws_every_ok_row():
    path = os.path.join(REPO, "results", "cpu", "table2.h5")
    rows, _ = plot_sweep.load(path)
    fig = plot_sweep.draw(path)
    drawn = sum(len(ln.get_xdata()) for ln in data_lines(fig.axes[0]))
    assert drawn == sum(plot_sweep.text(r["status"]) == "ok" for r in rows)
    assert "nan" not in fig._suptitle.get_text().lower()


def test_a_sweep_over_e_formats_draws_a_series_per_format(tmp_path):
    """Rows of several E formats are separate series labelled by format (not one line per variant
    zigzagging between the formats at each V), and a skip note says which format it is about."""
    rows = []
    for fmt in ("fp32", "bfloat16"):
        for variant in ("fused", "dense"):
            for V in (1000, 2000):
                skipped = variant == "dense" and fmt != "fp32"
                rows.append({"variant": variant, "V": V, "e_format": fmt, "status": "skipped" if skipped else "ok",
                             "reason": "reads E in float32 only" if skipped else "",
                             "time_median_s": np.nan if skipped else V * 1e-6 * (2 if fmt == "fp32" else 1),
                             "peak_bytes": np.nan if skipped else 2.0**20, "predicted_bytes": 2.0**20,
                             "gemm_gflops": 100.0})
    fig = plot_sweep.draw(write_run(str(tmp_path / "formats.h5"), rows, {"cpu_model": "test cpu"}))
    ax_t = fig.axes[0]
    drawn = {ln.get_label(): len(ln.get_xdata()) for ln in data_lines(ax_t)}
    assert drawn == {"fused e_format=fp32": 2, "fused e_format=bfloat16": 2, "dense e_format=fp32": 2}, drawn
    notes = "\n".join(t.get_text() for t in fig.texts)
    assert "dense e_format=bfloat16 V=1000: skipped: reads E in float32 only" in notes, notes
