"""plots/seqrec_figures.py parity (issue 43: 9 legend entries for 3 visible lines): one legend entry per
seed and per variant, the other variants drawn as markers on the reference's lines, their difference
from it drawn in numbers."""
import glob
import os

import seqrec_figures

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_parity_names_seeds_and_variants_once_and_draws_the_differences():
    paths = sorted(glob.glob(os.path.join(REPO, "results", "seqrec", "lastfm_L8_*_s*.h5")))
    assert len(paths) == 9
    fig = seqrec_figures.parity_figure(paths)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert len(labels) == 6 and labels[:3] == ["seed 0", "seed 1", "seed 2"]
    top, middle, bottom = fig.axes
    assert len([ln for ln in top.get_lines() if ln.get_linestyle() == "-"]) == 3  # dense, one line per seed
    assert len([ln for ln in top.get_lines() if ln.get_linestyle() == "None"]) == 6  # chunked, fused: markers
    differences = middle.get_lines()
    assert len(differences) == 2
    for ln in differences:  # the committed runs agree with dense to float32 rounding, not exactly
        assert 1e-9 < max(ln.get_ydata()) < 1e-5
    # the three variants at each epoch sit side by side, never on one another
    xs = sorted({round(x, 3) for ln in bottom.get_lines() for x in ln.get_xdata()})
    assert len(xs) == 3 * len({round(x) for x in xs})
