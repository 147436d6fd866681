"""plots/frontier_heatmap.py: each searched cell coloured by its seeds' mean gap to fp32, the frontier outlined
where the /frontier table puts it, blank where the search ran nothing, and "none" for a line without one."""
import h5py
import numpy as np
import pytest
from matplotlib.patches import Rectangle

import frontier_heatmap as fh

CELL = [("line", "<i8"), ("tensor", "S8"), ("rounding", "S16"), ("exponent_bits", "<i8"), ("mantissa_bits", "<i8"),
        ("seed", "<i8"), ("metric", "<f8"), ("status", "S8")]
LINE = [("line", "<i8"), ("tensor", "S8"), ("rounding", "S16"), ("exponent_bits", "<i8"), ("mantissa_bits", "<i8"),
        ("metric_at", "<f8"), ("std_at", "<f8"), ("metric_below", "<f8"), ("std_below", "<f8"),
        ("baseline_mean", "<f8"), ("baseline_std", "<f8"), ("tolerance", "<f8"), ("runs", "<i8")]


def frontier_file(path):
    """fp32 at 0.60; clf nearest: frontier e3 -> m4 (cells m 3..5 over two seeds), e4 -> none (m 6 only)."""
    cells = [(-1, "fp32", "nearest_even", 0, 0, s, 0.60, "ok") for s in (0, 1)]
    for m, value in ((3, 0.50), (4, 0.598), (5, 0.60)):
        cells += [(0, "clf", "nearest_even", 3, m, s, value + 0.002 * s, "ok") for s in (0, 1)]
    cells += [(1, "clf", "nearest_even", 4, 6, 0, 0.30, "ok")]
    lines = [(0, "clf", "nearest_even", 3, 4, 0.599, 0.001, 0.501, 0.001, 0.60, 0.0, 0.005, 7),
             (1, "clf", "nearest_even", 4, -1, np.nan, np.nan, np.nan, np.nan, 0.60, 0.0, 0.005, 1)]
    with h5py.File(path, "w") as f:
        f.create_dataset("cells", data=np.array(cells, dtype=CELL))
        f.create_dataset("frontier", data=np.array(lines, dtype=LINE))
        f.attrs["schema"] = "lobench train-xmc frontier, version 1"
        f.attrs["metric"] = "p@1"
        f.attrs["dataset"] = "synthetic:tiny"
    return str(path)


def test_cells_are_the_seed_mean_gap_and_the_frontier_is_outlined(tmp_path):
    fig = fh.draw(frontier_file(tmp_path / "f.h5"))
    ax = fig.axes[0]
    grid = ax.images[0].get_array()
    E = [int(t.get_text()) for t in ax.get_yticklabels()]
    M = [int(t.get_text()) for t in ax.get_xticklabels()]
    assert E == [3, 4] and M == [3, 4, 5, 6]
    assert grid[E.index(3), M.index(4)] == pytest.approx(100 * (0.599 - 0.60))  # mean of 0.598 and 0.600
    assert grid[E.index(3), M.index(3)] == pytest.approx(100 * (0.501 - 0.60))
    assert np.ma.is_masked(grid[E.index(3), M.index(6)])  # not run: blank, not a zero gap
    outlined = [(p.get_x() + 0.5, p.get_y() + 0.5) for p in ax.patches if isinstance(p, Rectangle)]
    assert outlined == [(M.index(4), E.index(3))]
    assert any(t.get_text().strip() == "none" for t in ax.texts)  # e4 has no frontier in the range
    assert "0.50 points" in fig._suptitle.get_text() and "60.00 %" in fig._suptitle.get_text()


def test_not_a_frontier_file_is_refused(tmp_path):
    path = tmp_path / "x.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("results", data=np.zeros(1))
    with pytest.raises(SystemExit, match="not a frontier run file"):
        fh.draw(str(path))


def test_table_gives_the_fewest_bits_per_width_with_the_metric_at_and_below():
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        lines = fh.table(frontier_file(f"{d}/f.h5"))
    assert lines[0].startswith("fp32 60.00 ± 0.00 %, tolerance 0.50 points")
    assert lines[2] == "| tensor | rounding | e3 | e4 |"
    assert lines[4] == "| classifier weights | nearest | **4** (59.90 ± 0.10 \\| 50.10 ± 0.10) | none |"
    assert len(lines) == 5


def test_cells_table_gives_each_cells_metric_and_train_loss_against_fp32(tmp_path):
    """--cells: the seeds' mean ± std, the gap in points, the mean finite train loss and its change, overflows."""
    dtype = CELL + [("train_loss", "<f8"), ("weight_non_finite", "<i8")]
    cells = [(-1, "fp32", "nearest_even", 0, 0, s, 0.60, "ok", 2.0, 0) for s in (0, 1)]
    cells += [(0, "clf", "stochastic", 2, 1, 0, 0.50, "ok", 3.0, 0), (0, "clf", "stochastic", 2, 1, 1, 0.40, "ok", np.inf, 1)]
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("cells", data=np.array(cells, dtype=dtype))
        f.create_dataset("frontier", data=np.array([], dtype=LINE))
        f.attrs["metric"] = "p@1"
    out = fh.cells_table(str(path))
    assert out[0] == "fp32: p@1 60.00 %, train loss 2.00 nats/row (2 seeds)"
    std = np.std([50.0, 40.0], ddof=1)
    assert out[-1] == f"| clf | stochastic | e2m1 | 2 | 45.00 ± {std:.2f} | -15.00 | 3.00 | +50.0 % | 1 |"
