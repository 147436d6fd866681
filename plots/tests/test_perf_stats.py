"""plots/perf_stats.py against SciPy where it is installed, and against cases worked by hand."""
import math

import numpy as np
import pytest

import perf_stats as ps


def test_ranks_share_ties():
    assert list(ps.ranks([3.0, 1.0, 3.0, 2.0])) == [3.5, 1.0, 3.5, 2.0]


def test_exact_by_hand():
    # x entirely above y, 3 against 3: U = 9, one arrangement in C(6, 3) = 20 on each side.
    u, p = ps.mann_whitney([4, 5, 6], [1, 2, 3])
    assert u == 9 and p == pytest.approx(2 / 20)
    assert ps.min_p(3, 3) == pytest.approx(0.1)
    assert ps.min_p(5, 5) == pytest.approx(2 / 252)


def test_identical_samples_are_not_different():
    u, p = ps.mann_whitney([1.0] * 6, [1.0] * 6)
    assert p == 1.0


@pytest.mark.parametrize("seed", range(8))
def test_matches_scipy(seed):
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(seed)
    n_x, n_y = rng.integers(3, 12, 2)
    x = rng.lognormal(0, 0.2, n_x)
    y = rng.lognormal(0.1 * seed, 0.2, n_y)
    u, p = ps.mann_whitney(x, y)
    ref = stats.mannwhitneyu(x, y, alternative="two-sided", method="exact")
    assert u == ref.statistic and p == pytest.approx(ref.pvalue, rel=1e-9)
    # with ties: the normal approximation with tie and continuity corrections
    xt, yt = np.round(x, 1), np.round(y, 1)
    u, p = ps.mann_whitney(xt, yt)
    ref = stats.mannwhitneyu(xt, yt, alternative="two-sided", method="asymptotic", use_continuity=True)
    assert u == ref.statistic and p == pytest.approx(ref.pvalue, rel=1e-9)


def test_large_samples_use_the_normal_approximation():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(1)
    x, y = rng.normal(0, 1, 40), rng.normal(0.5, 1, 40)
    u, p = ps.mann_whitney(x, y)
    ref = stats.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic")
    assert p == pytest.approx(ref.pvalue, rel=1e-9)


def test_ratio_interval_covers_a_known_shift():
    rng = np.random.default_rng(2)
    base = rng.normal(1.0, 0.02, 9)
    lo, hi = ps.ratio_interval(base, base * 1.3)
    assert lo <= 1.3 <= hi and lo > 1.2
    lo, hi = ps.ratio_interval(base, base)
    assert lo <= 1.0 <= hi


def test_verdicts():
    assert ps.verdict(1.3, 0.001) == "slower"
    assert ps.verdict(1.3, 0.2) == "same"      # not significant
    assert ps.verdict(1.05, 0.001) == "same"   # significant but within the threshold
    assert ps.verdict(0.7, 0.001) == "faster"
    assert ps.verdict(1.3, 0.001, threshold=0.5) == "same"


def test_relative_spread():
    assert ps.relative_spread([2.0]) == 0.0
    assert ps.relative_spread([1.0, 3.0]) == pytest.approx(math.sqrt(2) / 2)
