"""The statistics of the performance gate (`lobench compare`, scripts/bench_check.sh, the dashboard's
regression markers): one implementation, used by all three.

    mann_whitney(x, y)            U statistic of x and its two-sided p-value
    ratio_interval(base, cand)    bootstrap interval of median(cand) / median(base)
    relative_spread(x)            the noise of one set of repetitions (coefficient of variation)
    verdict(ratio, p, ...)        slower / faster / same

Mann–Whitney U, like Google Benchmark's compare.py: it asks whether one set of repetitions tends to be
larger than the other without assuming normal timings (timings on a shared machine have long right
tails). The p-value is exact (the distribution of U over every arrangement of the ranks) when there are
no ties and both sets are small, else from the normal approximation with the tie correction and a
continuity correction. With few repetitions no difference can reach a small p (3 against 3: p >= 0.1),
which min_p() tells the caller so that it can say so instead of passing silently.
"""
import math
from functools import lru_cache

import numpy as np

EXACT_MAX_N = 30  # exact p-values while n_x + n_y is at most this and there are no ties


def ranks(values):
    """1-based ranks of values, ties given their mean rank."""
    values = np.asarray(values, dtype=float)
    order = np.argsort(values, kind="mergesort")
    r = np.empty(len(values))
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[order[j + 1]] == values[order[i]]:
            j += 1
        r[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return r


@lru_cache(maxsize=256)
def _u_counts(n_x, n_y):
    """counts[u] = number of the C(n_x + n_y, n_x) rank arrangements whose U statistic of x is u.
    Recurrence on the largest value: it is an x (adds n_y to U) or a y (adds nothing)."""
    table = {(0, k): np.ones(1, dtype=object) for k in range(n_y + 1)}
    for i in range(1, n_x + 1):
        table[(i, 0)] = np.ones(1, dtype=object)
        for k in range(1, n_y + 1):
            a, b = table[(i - 1, k)], table[(i, k - 1)]
            out = np.zeros(i * k + 1, dtype=object)
            out[k:k + len(a)] += a
            out[:len(b)] += b
            table[(i, k)] = out
    return tuple(table[(n_x, n_y)])


def mann_whitney(x, y):
    """(U of x, two-sided p-value) for the hypothesis that x and y come from the same distribution."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n_x, n_y = len(x), len(y)
    if n_x == 0 or n_y == 0:
        raise ValueError("mann_whitney: both samples need at least one value")
    r = ranks(np.concatenate([x, y]))
    u = float(r[:n_x].sum() - n_x * (n_x + 1) / 2)
    _, tie_sizes = np.unique(np.concatenate([x, y]), return_counts=True)
    ties = bool((tie_sizes > 1).any())
    if not ties and n_x + n_y <= EXACT_MAX_N:
        counts = _u_counts(n_x, n_y)
        total = sum(counts)
        k = int(round(u))
        cdf = sum(counts[:k + 1]) / total
        sf = sum(counts[k:]) / total
        return u, float(min(1.0, 2 * min(cdf, sf)))
    n = n_x + n_y
    mean = n_x * n_y / 2
    tie_term = float((tie_sizes.astype(float) ** 3 - tie_sizes).sum()) / (n * (n - 1))
    var = n_x * n_y / 12 * ((n + 1) - tie_term)
    if var <= 0:  # every value equal
        return u, 1.0
    z = (abs(u - mean) - 0.5) / math.sqrt(var)
    return u, float(min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2))))


def min_p(n_x, n_y):
    """The smallest two-sided p-value Mann–Whitney can give for these sizes (all of one set above the
    other, no ties): a threshold alpha below it can never be reached."""
    if n_x == 0 or n_y == 0:
        return 1.0
    return min(1.0, 2 / math.comb(n_x + n_y, n_x))


def ratio_interval(base, cand, level=0.95, resamples=2000, seed=0):
    """Percentile bootstrap interval (lo, hi) of median(cand) / median(base): each set resampled with
    replacement, independently. Deterministic for a given seed."""
    base, cand = np.asarray(base, dtype=float), np.asarray(cand, dtype=float)
    rng = np.random.default_rng(seed)
    b = np.median(base[rng.integers(0, len(base), (resamples, len(base)))], axis=1)
    c = np.median(cand[rng.integers(0, len(cand), (resamples, len(cand)))], axis=1)
    ratios = c / b
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(ratios, [tail, 100 - tail])
    return float(lo), float(hi)


def relative_spread(x):
    """Coefficient of variation (sample standard deviation over the mean) of a set of repetitions;
    0 for a single value."""
    x = np.asarray(x, dtype=float)
    if len(x) < 2 or np.mean(x) == 0:
        return 0.0
    return float(np.std(x, ddof=1) / np.mean(x))


def verdict(ratio, p, threshold=0.10, alpha=0.05):
    """slower: the candidate takes more than (1 + threshold) times the baseline and the U test says the
    difference is not chance (p < alpha); faster: the mirror image; same: anything else."""
    if p < alpha and ratio > 1 + threshold:
        return "slower"
    if p < alpha and ratio < 1 / (1 + threshold):
        return "faster"
    return "same"
