"""plots/e_format_heatmap.py: named storage formats land on their eXmY cells, failed cells stay grey."""
import os

import numpy as np
import pytest

import e_format_heatmap as hm
from run_file_fixture import write_run

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("name,cell", [
    ("e4m3", (4, 3, "")), ("float8_e4m3fn", (4, 3, "float8_e4m3fn")), ("float8_e4m3", (4, 3, "float8_e4m3")),
    ("float8_e5m2", (5, 2, "float8_e5m2")), ("float8_e3m4", (3, 4, "float8_e3m4")),
    ("float8_e5m2fnuz", (5, 2, "float8_e5m2fnuz")), ("float8_e4m3b11fnuz", (4, 3, "float8_e4m3b11fnuz")),
    ("float16", (5, 10, "float16")), ("bfloat16", (8, 7, "bfloat16")), ("tf32", (8, 10, "tf32")),
])
def test_names_map_to_their_cells(name, cell):
    assert hm.exmy_cell(name) == cell


def test_not_a_format_is_not_mapped():
    assert hm.exmy_cell("int8") is None
    assert hm.exmy_cell("float8_") is None


def grid_run(tmp_path):
    rows = []
    for e in (2, 4, 5, 8):
        for m in (2, 3, 7, 10):
            name = {(4, 3): "float8_e4m3fn", (5, 2): "float8_e5m2", (5, 10): "float16", (8, 7): "bfloat16",
                    (8, 10): "tf32"}.get((e, m), f"e{e}m{m}")
            ok = e > 2
            err = 2.0 ** -(m + 1)
            rows.append({"e_format": name, "status": "ok" if ok else "failed", "reason": "" if ok else "overflow",
                         "rel_loss_err": err if ok else np.nan, "rel_dA_err": err if ok else np.nan,
                         "rel_dE_err": err if ok else np.nan})
    return write_run(str(tmp_path / "grid.h5"), rows)


def cell_values(ax):
    """The drawn grid (masked where grey) with its axis tick labels as ints."""
    grid = ax.images[0].get_array()
    E = [int(t.get_text()) for t in ax.get_yticklabels()]
    M = [int(t.get_text()) for t in ax.get_xticklabels()]
    return grid, E, M


def test_named_formats_are_drawn_in_colour(tmp_path):
    fig = hm.draw(grid_run(tmp_path), "fused")
    fig.canvas.draw()
    ax = fig.axes[0]
    grid, E, M = cell_values(ax)
    for e, m in ((4, 3), (5, 2), (5, 10), (8, 7), (8, 10)):
        value = grid[E.index(e), M.index(m)]
        assert not np.ma.is_masked(value), f"e{e}m{m} drawn grey"
        assert value == pytest.approx(np.log10(2.0 ** -(m + 1)))
    # the failed e2 row stays on the axes, grey
    assert 2 in E and all(np.ma.is_masked(grid[E.index(2), b]) for b in range(len(M)))
    labels = " ".join(t.get_text() for t in ax.texts)
    for name in ("e4m3fn", "e5m2", "fp16", "bf16", "tf32"):
        assert name in labels
    for a in fig.axes:
        assert "nan" not in a.get_title().lower()


def test_cell_labels_are_legible_and_the_grey_cells_are_explained(tmp_path):
    # issue 43: 4.5-point white labels on yellow cells, and a grey row no legend explained
    fig = hm.draw(grid_run(tmp_path), "fused")
    ax = fig.axes[0]
    cmap = ax.images[0].get_cmap()
    for t in ax.texts:
        assert t.get_fontsize() >= 7
        value = float(t.get_text().split("\n")[0])
        r, g, b, _ = cmap((value + 8) / 8)  # the cell's colour (vmin -8, vmax 0)
        luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
        text_luminance = 1.0 if t.get_color() == "white" else 0.0
        assert abs(luminance - text_luminance) > 0.4, f"label {t.get_text()!r} on a cell of luminance {luminance:.2f}"
    legend = " ".join(t.get_text() for lg in fig.legends for t in lg.get_texts())
    assert "grey" in legend and "overflow" in legend  # with the failed rows' reason


def test_committed_grid_shows_fp8_fp16_bf16():
    path = os.path.join(REPO, "results", "cpu", "e_format_grid.h5")
    fig = hm.draw(path, "fused")
    grid, E, M = cell_values(fig.axes[0])
    for e, m in ((3, 4), (4, 3), (5, 2), (5, 10), (8, 7), (8, 10)):
        assert not np.ma.is_masked(grid[E.index(e), M.index(m)]), f"e{e}m{m} grey in the committed grid"
