"""Which method wins, with what confidence: the tests a benchmark report needs (issue 22).

- Per dataset, two methods on the same J random train/test splits: the *corrected resampled t-test* of Nadeau &
  Bengio (2003, Machine Learning 52): the J differences d_j are not independent (the training sets overlap), so the
  variance of their mean is (1/J + n_test/n_train) s^2 instead of s^2 / J; t = mean(d) / sqrt((1/J + n_test /
  n_train) s^2) with J - 1 degrees of freedom. Beside it the Wilcoxon signed-rank test (no normality assumed).
- Across N datasets, k methods: average ranks (1 = best, ties share the mean rank), the Friedman test on them,
  and the Nemenyi critical difference CD = q_alpha sqrt(k (k + 1) / (6 N)), q_alpha the studentized range
  quantile over sqrt(2) (Demsar 2006, JMLR 7, section 3.2.2): two methods whose average ranks differ by less than CD
  are not significantly different. :func:`cd_diagram` draws Demsar's figure.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

# A p-value needs enough splits and differences that are not floating-point noise. With fewer than MIN_SPLITS
# paired values the corrected t-test has at most 3 degrees of freedom and the two-sided Wilcoxon test cannot go
# below 0.0625 (2 / 2^5), so neither can carry a verdict; we say "undefined" instead of printing a number.
MIN_SPLITS = 5
# Differences at most NOISE times the values' magnitude are rounding, not a difference between methods
# (identical models fitted in a different order differ by ~1e-15 relative).
NOISE = 1e-9


@dataclass(frozen=True)
class PairedTest:
    """Both paired tests on J differences d_j = ours_j - theirs_j.

    ``undefined`` is the reason no p-value is given (too few splits, identical results, zero variance), or "";
    ``rank_sum_pos`` / ``rank_sum_neg`` are Wilcoxon's W+ and W- (zero differences split between them), whose
    order is the direction the Wilcoxon test tested; ``median_diff`` is the median of d."""
    n: int
    mean_diff: float
    t: float
    p_corrected_t: float
    p_wilcoxon: float
    median_diff: float = math.nan
    rank_sum_pos: float = math.nan
    rank_sum_neg: float = math.nan
    undefined: str = ""

    def verdict(self, higher_is_better: bool, level: float = 0.05) -> str:
        """The corrected t-test's verdict for "ours": the reason when undefined, 'tie' when its p >= ``level``,
        else 'better' or 'worse' by the sign of t (the significance table and the leaderboard's win / tie / loss
        matrix read it here, so that they cannot disagree)."""
        if self.undefined:
            return self.undefined
        if not self.p_corrected_t < level:
            return "tie"
        return "better" if (self.t > 0) == bool(higher_is_better) else "worse"

    @property
    def wilcoxon_direction(self) -> int:
        """+1 when the positive differences carry more rank (ours larger), -1 when the negative ones do, 0 on a tie."""
        if math.isnan(self.rank_sum_pos) or self.rank_sum_pos == self.rank_sum_neg:
            return 0
        return 1 if self.rank_sum_pos > self.rank_sum_neg else -1


def noise_tolerance(*values) -> float:
    """The largest |difference| treated as zero: NOISE times the largest magnitude among the compared values."""
    scale = max([1.0, *(float(np.max(np.abs(v))) for v in values if np.size(v))])
    return NOISE * scale


def degenerate(diffs, tol: float) -> str:
    """Why paired differences support no p-value ("" when they do): too few, all zero, or not varying."""
    d = np.asarray(diffs, dtype=float)
    if len(d) < MIN_SPLITS:
        return f"undefined: {len(d)} paired splits (a p-value needs at least {MIN_SPLITS})"
    if np.all(np.abs(d) <= tol):
        return "undefined: identical on every split"
    if float(np.std(d, ddof=1)) <= tol:
        return "undefined: the differences do not vary (zero variance)"
    return ""


def corrected_resampled_ttest(diffs, n_train: int, n_test: int, tol: float = 0.0) -> tuple[float, float]:
    """(t, two-sided p) of Nadeau & Bengio's corrected resampled t-test for J paired differences; (nan, nan)
    when :func:`degenerate` finds no basis for a p-value (``tol``: the |difference| counted as zero)."""
    d = np.asarray(diffs, dtype=float)
    J = len(d)
    if degenerate(d, tol):
        return math.nan, math.nan
    var = float(np.var(d, ddof=1))
    t = float(np.mean(d)) / math.sqrt((1.0 / J + n_test / n_train) * var)
    return t, float(2.0 * stats.t.sf(abs(t), J - 1))


def signed_rank_sums(diffs, tol: float = 0.0) -> tuple[float, float]:
    """Wilcoxon's (W+, W-): the ranks of |d| summed over positive and negative differences, differences with
    |d| <= tol counted as zero and their ranks split half to each side (SciPy's ``zero_method="zsplit"``)."""
    d = np.asarray(diffs, dtype=float)
    d = np.where(np.abs(d) <= tol, 0.0, d)
    if len(d) == 0:
        return math.nan, math.nan
    r = stats.rankdata(np.abs(d))
    zero = r[d == 0].sum() / 2.0
    return float(r[d > 0].sum() + zero), float(r[d < 0].sum() + zero)


EXACT_TIES_MAX = 13  # SciPy's bound for its exact sign-flip test when there are ties or zeros (2^13 < 9999)


def wilcoxon_p(diffs, tol: float = 0.0) -> float:
    """Two-sided p of the Wilcoxon signed-rank test (differences with |d| <= tol are zeros, split between the
    signs); nan when every difference is zero (nothing to rank: no test, not "p = 1").

    SciPy's ``wilcoxon(d, zero_method="zsplit")`` decides the method: exact without ties or zeros, the normal
    approximation beyond 13 differences with ties or zeros. In between (at most 13 differences, with ties or
    zeros) SciPy runs an exact permutation test over all 2^n sign flips, evaluating the statistic once per flip
    in Python: 0.4 s a call, 28 s of ``tkbench report --all``. There the same exact p comes from
    :func:`_signed_rank_exact_p` (the null distribution by convolution; equal to SciPy's to rounding, tested)."""
    d = np.asarray(diffs, dtype=float)
    d = np.where(np.abs(d) <= tol, 0.0, d)
    if len(d) == 0 or np.all(d == 0):
        return math.nan
    ranks = stats.rankdata(np.abs(d))
    if len(d) <= EXACT_TIES_MAX and (np.any(d == 0) or len(np.unique(ranks)) < len(d)):
        return _signed_rank_exact_p(d, ranks)
    return float(stats.wilcoxon(d, zero_method="zsplit").pvalue)


def _signed_rank_exact_p(d: np.ndarray, ranks: np.ndarray) -> float:
    """The two-sided p of the sign-flip test on W+ (zsplit: each zero adds half its rank to both sides), exact.

    Under the null every sign is + or - with probability 1/2, independently; a zero's sign changes nothing. So
    W+ = (sum of the zeros' ranks) / 2 + sum over the non-zero differences of r_i b_i, b_i in {0, 1}. Mid-ranks
    are multiples of 1/2: in units of 1/2 the ranks are integers and the distribution of the sum is the
    convolution of the two-point laws {0, 2 r_i}, counted exactly in integers. p = min(1, 2 min(P(W+ <= w),
    P(W+ >= w))), the definition of SciPy's ``permutation_test`` (alternative "two-sided") that its
    ``wilcoxon`` uses for such samples."""
    nonzero = d != 0
    units = np.rint(2 * ranks[nonzero]).astype(np.int64)  # (mid-ranks: exact multiples of 1/2)
    observed = int(units[d[nonzero] > 0].sum())
    counts = np.zeros(int(units.sum()) + 1, dtype=np.int64)
    counts[0] = 1
    for u in units:  # the number of sign patterns reaching each sum (u >= 2: a rank is at least 1)
        counts[u:] = counts[u:] + counts[:-u]
    total = float(2 ** len(units))
    below = counts[:observed + 1].sum() / total
    above = counts[observed:].sum() / total
    return float(min(1.0, 2 * min(below, above)))


def paired_test(ours, theirs, n_train: int, n_test: int, wilcoxon: bool = True) -> PairedTest:
    """Both tests on the splits' paired values (ours - theirs), with differences below :data:`NOISE` of the
    values' magnitude counted as zero. The Wilcoxon p is given whenever some difference is not zero (it is exact
    for any J); the t-test's only when :func:`degenerate` allows it. ``wilcoxon=False`` leaves the Wilcoxon p out
    (nan) for callers that read only the t-test's verdict (the leaderboard's win / tie / loss matrix; it was
    22 of the 60 s of the benchmark's report while SciPy's permutation test computed the p of small samples with
    ties, before :func:`_signed_rank_exact_p`)."""
    ours, theirs = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    d = ours - theirs
    tol = noise_tolerance(ours, theirs)
    t, p = corrected_resampled_ttest(d, n_train, n_test, tol)
    pos, neg = signed_rank_sums(d, tol)
    return PairedTest(len(d), float(np.mean(d)) if len(d) else math.nan, t, p,
                      wilcoxon_p(d, tol) if wilcoxon else math.nan,
                      float(np.median(d)) if len(d) else math.nan, pos, neg, degenerate(d, tol))


def average_ranks(scores: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """Mean rank of each method (columns) over datasets (rows); rank 1 is the best, ties share their mean rank."""
    s = np.asarray(scores, dtype=float)
    ranks = stats.rankdata(-s if higher_is_better else s, axis=1)
    return ranks.mean(axis=0)


def friedman(scores: np.ndarray) -> tuple[float, float]:
    """Friedman's chi-square statistic and p-value for k methods (columns) on N datasets (rows)."""
    s = np.asarray(scores, dtype=float)
    if s.shape[1] < 3 or s.shape[0] < 2:  # scipy needs k >= 3; with two methods use the paired tests
        return math.nan, math.nan
    res = stats.friedmanchisquare(*s.T)
    return float(res.statistic), float(res.pvalue)


def nemenyi_cd(k: int, n_datasets: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference of average ranks for k methods on N datasets (Demsar 2006, Eq. 3.2.2)."""
    q = float(stats.studentized_range.ppf(1.0 - alpha, k, np.inf)) / math.sqrt(2.0)
    return q * math.sqrt(k * (k + 1) / (6.0 * n_datasets))


def cd_diagram(names: list[str], ranks, cd: float, path, title: str = "") -> None:
    """Demsar's critical-difference diagram: methods on the average-rank axis (best on the left), the CD as a bar,
    and a thick line joining each maximal group of methods whose ranks lie within CD of each other."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = np.argsort(ranks)
    r = np.asarray(ranks, dtype=float)[order]
    labels = [names[i] for i in order]
    k = len(r)
    fig, ax = plt.subplots(figsize=(9.0, 1.6 + 0.32 * k))
    lo, hi = 1, max(k, int(math.ceil(r.max())))
    ax.set_xlim(lo - 0.3, hi + 0.3)
    ax.set_ylim(-(k + 2), 2.2)
    ax.hlines(0, lo, hi, color="black")
    for x in range(lo, hi + 1):
        ax.vlines(x, 0, 0.2, color="black")
        ax.text(x, 0.35, str(x), ha="center", va="bottom", fontsize=9)
    for i, (x, name) in enumerate(zip(r, labels, strict=True)):
        y = -(i + 1)
        left = i < (k + 1) // 2
        end = lo - 0.2 if left else hi + 0.2
        ax.plot([x, x, end], [0, y, y], color="black", linewidth=0.8)
        ax.text(end, y, f"{name} ({x:.2f})", ha="right" if left else "left", va="center", fontsize=10)
    groups: list[tuple[int, int]] = []
    for i in range(k):  # maximal runs of consecutive methods within CD
        j = i
        while j + 1 < k and r[j + 1] - r[i] < cd:
            j += 1
        if j > i and not any(a <= i and j <= b for a, b in groups):
            groups.append((i, j))
    for g, (i, j) in enumerate(groups):
        y = -0.4 - 0.25 * g
        ax.hlines(y, r[i] - 0.03, r[j] + 0.03, color="black", linewidth=3)
    shown = min(cd, hi - lo)  # a CD longer than the rank axis: drawn to the axis's end and said in its label
    ax.hlines(1.4, lo, lo + shown, color="black", linewidth=1.5)
    ax.vlines([lo, lo + shown], 1.3, 1.5, color="black", linewidth=1.5)
    label = f"CD = {cd:.2f}" + (" (longer than the rank axis: no difference can be significant)" if cd > hi - lo
                                else "")
    ax.text(lo + shown / 2 if cd <= hi - lo else lo, 1.6, label, ha="center" if cd <= hi - lo else "left",
            va="bottom", fontsize=9)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=150, bbox_inches="tight")  # names beside the axis are not cut off
    plt.close(fig)
