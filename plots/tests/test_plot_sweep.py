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
    return [ln for ln in ax.get_lines() if ln.get_label() not in ("_predicted",) and len(ln.get_xdata()) > 0
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
        assert drawn == expected
    styles = {(ln.get_marker(), str(ln.get_linestyle())) for ln in data_lines(ax_m)}
    assert len(styles) == 3, "two series share marker and line style, so one can hide the other"


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
