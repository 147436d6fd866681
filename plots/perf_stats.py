"""The statistics of the performance gate (`lobench compare`, scripts/bench_check.sh, the dashboard's
regression markers): one implementation, used by all three.

    mann_whitney(x, y)            U statistic of x and its two-sided p-value
    ratio_interval(base, cand)    bootstrap interval of median(cand) / median(base)
    relative_spread(x)            the noise of one set of repetitions (coefficient of variation)
    verdict(ratio, p, ...)        slower / faster / same
    signed_rank_greater(d)        Wilcoxon signed-rank: one-sided p that d is centred above 0
    paired_test(ratios, ...)      the paired gate (scripts/bench_check.sh): per-round ratios -> verdict

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
    # In blocks of about a million values at a time: a run with a million repetitions must not ask for
    # resamples x n doubles at once (16 GB).
    block = max(1, 1_000_000 // max(len(base), len(cand)))
    b, c = [], []
    for start in range(0, resamples, block):
        k = min(block, resamples - start)
        b.append(np.median(base[rng.integers(0, len(base), (k, len(base)))], axis=1))
        c.append(np.median(cand[rng.integers(0, len(cand), (k, len(cand)))], axis=1))
    ratios = np.concatenate(c) / np.concatenate(b)
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


# --- The paired design (scripts/bench_check.sh, issue 41) ---------------------------------------------
# The baseline and the candidate binaries run alternately in one session, one process each per round, so
# round k gives one ratio per benchmark, candidate / baseline, measured seconds apart on the same machine.
# A slow minute of a shared machine falls on both sides of a round and cancels in its ratio; what is left
# is tested directly against the threshold: "slower" means the ratios are centred above 1 + threshold
# (not merely above 1), one-sided Wilcoxon signed-rank test on log(ratio) - log(1 + threshold), p < alpha.

EXACT_SIGNED_RANK_MAX_N = 40


@lru_cache(maxsize=64)
def _signed_rank_counts(doubled_ranks):
    """counts[w] = number of the 2^n sign assignments whose sum of positive (doubled) ranks is w."""
    counts = np.zeros(sum(doubled_ranks) + 1, dtype=object)
    counts[0] = 1
    for r in doubled_ranks:
        shifted = np.zeros_like(counts)
        shifted[r:] = counts[:len(counts) - r]
        counts = counts + shifted
    return tuple(counts)


def signed_rank_greater(d):
    """One-sided p-value of the Wilcoxon signed-rank test that the values d are centred above 0 (the
    alternative), against symmetry about 0 (the null). Zeros are dropped (Wilcoxon's rule); ties among
    |d| share their mean rank. Exact (every sign assignment counted) up to EXACT_SIGNED_RANK_MAX_N values,
    else the normal approximation with the tie and continuity corrections. 1.0 when nothing is left."""
    d = np.asarray(d, dtype=float)
    if not np.all(np.isfinite(d)):
        raise ValueError("signed_rank_greater: non-finite values")
    d = d[d != 0]
    n = len(d)
    if n == 0:
        return 1.0
    r = ranks(np.abs(d))
    w_plus = float(r[d > 0].sum())
    if n <= EXACT_SIGNED_RANK_MAX_N:
        doubled = tuple(int(round(2 * x)) for x in r)  # mid-ranks are halves: doubled, they are integers
        counts = _signed_rank_counts(doubled)
        k = int(round(2 * w_plus))
        return float(sum(counts[k:]) / sum(counts))
    mean = n * (n + 1) / 4
    _, tie_sizes = np.unique(np.abs(d), return_counts=True)
    var = n * (n + 1) * (2 * n + 1) / 24 - float((tie_sizes.astype(float) ** 3 - tie_sizes).sum()) / 48
    if var <= 0:
        return 1.0
    z = (w_plus - mean - 0.5) / math.sqrt(var)
    return float(0.5 * math.erfc(z / math.sqrt(2)))


def min_p_paired(n):
    """The smallest one-sided p the signed-rank test can give with n rounds (every sign alike): 2^-n."""
    return 0.5 ** n if n > 0 else 1.0


def median_interval(values, level=0.95):
    """Distribution-free interval (lo, hi) for the median of values: the order statistics whose binomial
    coverage is at least `level` (the sign-test interval); the whole range when there are too few."""
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    if n == 0:
        return math.nan, math.nan
    tail = (1 - level) / 2
    k, acc = 0, 0.5 ** n  # acc: P(Binomial(n, 1/2) <= k)
    while k + 1 < n and acc + math.comb(n, k + 1) * 0.5 ** n <= tail:
        k += 1
        acc += math.comb(n, k) * 0.5 ** n
    lo_i = k if acc <= tail else 0
    return float(x[lo_i]), float(x[n - 1 - lo_i])


def paired_test(ratios, threshold=0.10, alpha=0.05):
    """The paired gate's row for one benchmark: ratios are candidate / baseline per round (positive,
    finite). Returns {ratio (median), ratio_lo, ratio_hi, p_value (the smaller one-sided p: slower beyond
    the threshold, or faster beyond it), noise (CV of the ratios), verdict, testable}."""
    r = np.asarray(ratios, dtype=float)
    if len(r) == 0 or not np.all(np.isfinite(r)) or np.any(r <= 0):
        raise ValueError("paired_test: ratios must be positive and finite")
    logs = np.log(r)
    p_slower = signed_rank_greater(logs - math.log1p(threshold))
    p_faster = signed_rank_greater(-math.log1p(threshold) - logs)
    lo, hi = median_interval(r)
    testable = min_p_paired(len(r)) < alpha
    if not testable:
        v = "untested"
    elif p_slower < alpha:
        v = "slower"
    elif p_faster < alpha:
        v = "faster"
    else:
        v = "same"
    return {"ratio": float(np.median(r)), "ratio_lo": lo, "ratio_hi": hi, "p_value": min(p_slower, p_faster),
            "noise": relative_spread(r), "verdict": v, "testable": testable}
