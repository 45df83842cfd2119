"""The report's statistics (tkbench.report.statistics) against SciPy and the published tables."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from tkbench.report import statistics as S


def test_corrected_resampled_ttest_by_hand_and_its_correction():
    d = np.array([0.8, 1.2, 0.5, 1.0, 0.9, 1.4, 0.7, 1.1])
    J, n_train, n_test = len(d), 400, 100
    t_hand = d.mean() / math.sqrt((1 / J + n_test / n_train) * d.var(ddof=1))
    t, p = S.corrected_resampled_ttest(d, n_train, n_test)
    assert t == pytest.approx(t_hand) and p == pytest.approx(2 * stats.t.sf(abs(t_hand), J - 1))
    # with no overlap correction (n_test / n_train -> 0) it is the ordinary one-sample t-test
    t0, p0 = S.corrected_resampled_ttest(d, 10**12, 1)
    ref = stats.ttest_1samp(d, 0.0)
    assert t0 == pytest.approx(ref.statistic, rel=1e-9) and p0 == pytest.approx(ref.pvalue, rel=1e-9)
    assert p > p0  # the correction makes the test more conservative
    assert all(math.isnan(v) for v in S.corrected_resampled_ttest([1.0], 10, 2))  # one split: no test
    assert all(math.isnan(v) for v in S.corrected_resampled_ttest([0.0] * 8, 10, 2))  # identical: no test


def test_no_p_value_from_floating_point_noise_or_too_few_splits():
    """Issue 48: identical per-split differences (zero variance, or variance of rounding size) used to give
    p = 0.0e+00 or 4.4e-31 and a verdict; three splits gave p < 0.05 where Wilcoxon says 0.25."""
    ref = np.array([80.0, 81.5, 79.25, 82.0, 80.75, 79.5, 81.0, 80.25])
    ours = ref + 0.2  # the same shift on every split: zero variance (up to rounding)
    assert np.var(ours - ref, ddof=1) < 1e-25  # rounding left a tiny non-zero variance: the case that printed 4e-31
    res = S.paired_test(ours, ref, 400, 100)
    assert math.isnan(res.p_corrected_t) and "zero variance" in res.undefined
    exact = S.paired_test(np.full(8, 0.7), np.full(8, 0.5), 400, 100)
    assert math.isnan(exact.p_corrected_t) and "zero variance" in exact.undefined
    three = S.paired_test(ref[:3] + [0.2, 0.21, 0.19], ref[:3], 400, 100)
    assert math.isnan(three.p_corrected_t) and "3 paired splits" in three.undefined
    assert three.p_wilcoxon == pytest.approx(stats.wilcoxon([0.2, 0.21, 0.19]).pvalue) == 0.25
    same = S.paired_test(ref, ref.copy(), 400, 100)
    assert "identical" in same.undefined and math.isnan(same.p_wilcoxon)
    noise = S.paired_test(ref + 1e-13 * np.arange(8), ref, 400, 100)  # rounding-size differences are ties
    assert "identical" in noise.undefined and math.isnan(noise.p_wilcoxon)
    fine = S.paired_test(ref + [0.2, 0.1, 0.3, 0.25, 0.15, 0.2, 0.22, 0.18], ref, 400, 100)
    assert fine.undefined == "" and fine.p_corrected_t < 0.05


def test_signed_rank_sums_match_scipy_and_give_the_tested_direction():
    d = np.array([-0.5, 0.1, 0.2, 0.0, 0.15, -0.05, 0.3, 0.12, -0.02])
    pos, neg = S.signed_rank_sums(d)
    assert pos + neg == pytest.approx(len(d) * (len(d) + 1) / 2)
    assert min(pos, neg) == pytest.approx(stats.wilcoxon(d, zero_method="zsplit").statistic)
    assert pos > neg and S.paired_test(d, np.zeros_like(d), 400, 100).wilcoxon_direction == 1


def test_paired_test_has_wilcoxon_beside_the_t_test():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 0.1, 30), rng.normal(0.9, 0.1, 30)
    res = S.paired_test(a, b, 800, 200)
    assert res.n == 30 and res.mean_diff == pytest.approx(np.mean(a - b))
    assert res.p_wilcoxon == pytest.approx(stats.wilcoxon(a - b, zero_method="zsplit").pvalue)
    assert math.isnan(S.paired_test(a, a, 800, 200).p_wilcoxon)  # nothing to rank: no test, not p = 1


def test_exact_signed_rank_p_with_ties_and_zeros_equals_scipy_and_brute_force():
    """At most 13 differences with ties or zeros: the p comes from the exact null distribution by convolution
    (SciPy runs a 0.4 s permutation test there at 13). It equals a brute-force enumeration of the 2^n sign flips
    written here from the definition, on samples with half-integer mid-ranks, zeros and ties, and SciPy's own p
    on the smaller of them (SciPy's cost doubles with each difference)."""
    import itertools

    rng = np.random.default_rng(1)
    cases = [np.array([0.0, 1.0, 1.0, -2.0, 3.0]), np.array([0.5, -0.5, 0.5, 0.0, 0.0, 2.0, -3.0, 1.5]),
             np.array([1.0, 1.0]), np.array([-2.0, 0.0]), np.full(13, 1.0)]
    cases += [rng.integers(-3, 4, size=n).astype(float) for n in rng.integers(1, 14, size=40)]
    checked = against_scipy = 0
    for d in cases:
        if np.all(d == 0):
            continue
        ranks = stats.rankdata(np.abs(d))
        signs = np.array(list(itertools.product([0.0, 1.0], repeat=len(d))))  # every sign pattern, one per row
        flips = (signs * np.where(d != 0, ranks, 0.0)).sum(axis=1) + ranks[d == 0].sum() / 2
        w = ranks[d > 0].sum() + ranks[d == 0].sum() / 2
        brute = min(1.0, 2 * min(np.mean(flips <= w + 1e-9), np.mean(flips >= w - 1e-9)))
        ours = S.wilcoxon_p(d)
        assert ours == pytest.approx(brute, abs=1e-12), d
        if len(d) <= 9:
            assert ours == pytest.approx(stats.wilcoxon(d, zero_method="zsplit").pvalue, abs=1e-12), d
            against_scipy += 1
        checked += 1
    assert checked >= 40 and against_scipy >= 10


def test_average_ranks_share_ties_and_friedman_equals_scipy():
    scores = np.array([[0.9, 0.8, 0.7], [0.85, 0.85, 0.6], [0.7, 0.9, 0.5], [0.95, 0.9, 0.9]])
    ranks = S.average_ranks(scores, higher_is_better=True)
    assert np.allclose(ranks, [(1 + 1.5 + 2 + 1) / 4, (2 + 1.5 + 1 + 2.5) / 4, (3 + 3 + 3 + 2.5) / 4])
    assert np.allclose(S.average_ranks(-scores, higher_is_better=False), ranks)
    chi2, p = S.friedman(scores)
    ref = stats.friedmanchisquare(*scores.T)
    assert chi2 == pytest.approx(ref.statistic) and p == pytest.approx(ref.pvalue)
    assert all(math.isnan(v) for v in S.friedman(scores[:, :2]))


def test_nemenyi_critical_difference_matches_demsars_table():
    # Demsar (2006), Table 5(a): q_0.05 for k = 2..10
    q = {2: 1.960, 3: 2.343, 4: 2.569, 5: 2.728, 6: 2.850, 7: 2.949, 8: 3.031, 9: 3.102, 10: 3.164}
    for k, qk in q.items():
        assert S.nemenyi_cd(k, 14) == pytest.approx(qk * math.sqrt(k * (k + 1) / (6 * 14)), abs=2e-3)


def test_cd_diagram_is_drawn(tmp_path):
    path = tmp_path / "cd.png"
    S.cd_diagram(["HGK", "RF", "SVM", "DNN"], [1.6, 1.9, 3.2, 3.3], 1.25, path, title="11 data sets")
    assert path.stat().st_size > 1000


def _report_of(results_folder, cfg, accuracy):
    """(the markdown report, the results folder) of ``cfg`` with one ok row per planned run, ``accuracy(spec)``
    its accuracy (None: no row for that run)."""
    from tkbench.bench.plan import make_plan
    from tkbench.report.build import build_report

    exp, store, out = results_folder(cfg)
    for spec in make_plan(exp):
        value = accuracy(spec)
        if value is not None:
            store.write_row({"key": spec.key, "dataset": spec.label, "method": spec.method, "split": spec.split,
                             "task": "classification", "status": "ok", "error": None, "fit_seconds": 1.0,
                             "cv_seconds": 0.0, "predict_seconds": 0.1, "n_train": 400, "n_test": 100,
                             "accuracy": value})
    return build_report(out, ["md"])[0].read_text(), out


def test_every_accuracy_report_gets_paired_tests_ranks_and_the_cd_diagram(results_folder):
    cfg = {"name": "sigfix", "protocol": {"splits": 5, "seed": 1}, "datasets": ["liver", "pima", "sonar"],
           "methods": [{"name": "a", "family": "svm_rbf"}, {"name": "b", "family": "random_forest"},
                       {"name": "c", "family": "krr_rbf"}]}
    level = {"a": 80.0, "b": 70.0, "c": 79.9}  # c (80.5 on average) ties with a and clearly beats b
    text, out = _report_of(results_folder, cfg, lambda spec: level[spec.method] + [0.5, -0.3, 0.2, -0.6, 0.1][
        spec.split] + (0.3 * spec.split if spec.method == "c" else 0))
    assert "### Each method against the dataset's best" in text
    lines = [line for line in text.splitlines() if line.startswith("| liver |")]
    assert "| liver | b | c | 5 | -10.5 | 5.0e-06 | 0.062 | worse |" in lines
    assert "| liver | a | c | 5 | -0.5 | 0.191 | 0.125 | tie |" in lines
    assert "| c | **1.00** | 3 |" in text and "| a | 2.00 | 0 |" in text and "| b | 3.00 | 0 |" in text
    assert "Friedman test: chi² = 6.00" in text and "CD = 1.91" in text
    assert (out / "report" / "critical_difference.png").exists()


def test_a_method_run_on_one_dataset_only_is_left_out_of_the_ranks_not_the_ranks_out(results_folder):
    """A side-check method confined to one dataset by its config (``datasets:``) once emptied the datasets where
    every method has a mean, and the ranks vanished from the report; it is now left out of them, by name."""
    cfg = {"name": "confined", "protocol": {"splits": 5, "seed": 1}, "datasets": ["liver", "pima", "sonar"],
           "methods": [{"name": "a", "family": "svm_rbf"}, {"name": "b", "family": "random_forest"},
                       {"name": "c", "family": "krr_rbf"},
                       {"name": "a_wide", "family": "svm_rbf", "grid": {"C": [1.0, 10.0]}, "datasets": ["liver"]}]}
    level = {"a": 80.0, "b": 70.0, "c": 79.9, "a_wide": 81.0}
    text, _ = _report_of(results_folder, cfg, lambda spec: level[spec.method] + [0.5, -0.3, 0.2, -0.6, 0.1][spec.split]
                      + (0.3 * spec.split if spec.method == "c" else 0))
    assert "### Average ranks across datasets" in text
    assert "| c | **1.00** | 3 |" in text and "| a | 2.00 | 0 |" in text and "| b | 3.00 | 0 |" in text
    assert "| a_wide |" not in text.split("### Average ranks across datasets")[1].split("###")[0].split("Not ranked")[0]
    assert "Not ranked: a_wide (the config runs it on fewer than half the datasets); compared per dataset above." in text
    assert "3 datasets where every method has a mean" in text
    assert "Means of fewer than" not in text  # every ranked mean has 5 splits here
    assert any(line.startswith("| liver | a_wide |") for line in text.splitlines())  # still compared per dataset


def test_ranks_from_means_of_few_splits_say_how_few(results_folder):
    cfg = {"name": "thin", "protocol": {"splits": 5, "seed": 1}, "datasets": ["liver", "pima", "sonar"],
           "methods": [{"name": "a", "family": "svm_rbf"}, {"name": "b", "family": "random_forest"}]}
    # b: 3 splits on liver and sonar, 1 on pima
    text, _ = _report_of(results_folder, cfg, lambda spec: None if spec.method == "b" and spec.split > (
        0 if spec.label == "pima" else 2) else {"a": 80.0, "b": 70.0}[spec.method] + spec.split * 0.1)
    assert "Means of fewer than 5 finished splits behind these ranks: b (as few as n = 1)." in text


def test_a_dataset_where_a_ranked_method_has_no_mean_is_named_under_the_ranks(results_folder):
    cfg = {"name": "gap", "protocol": {"splits": 5, "seed": 1}, "datasets": ["liver", "pima", "sonar"],
           "methods": [{"name": "a", "family": "svm_rbf"}, {"name": "b", "family": "random_forest"}]}
    text, _ = _report_of(results_folder, cfg, lambda spec: None if spec.method == "b" and spec.label == "sonar"
                         else {"a": 80.0, "b": 70.0}[spec.method] + spec.split * 0.1)
    ranks = text.split("### Average ranks across datasets")[1].split("###")[0]
    assert "2 datasets where every method has a mean" in ranks
    assert "Left out of the ranks (a ranked method has no mean there): sonar (b)." in ranks


def test_a_method_whose_sweep_has_reached_few_datasets_is_set_aside_not_the_datasets(results_folder):
    """Paper 002's Table 1 ranked SVM, RF, DNN and HGK over 3 of its 13 datasets while HGK_refit's sweep had
    reached those 3: a method with means on fewer than half the datasets is now named and left out instead."""
    cfg = {"name": "sweeping", "protocol": {"splits": 5, "seed": 1},
           "datasets": ["liver", "pima", "sonar", "ionosphere", "heart"],
           "methods": [{"name": "a", "family": "svm_rbf"}, {"name": "b", "family": "random_forest"},
                       {"name": "late", "family": "krr_rbf"}]}
    text, _ = _report_of(results_folder, cfg, lambda spec: None if spec.method == "late" and spec.label != "liver"
                         else {"a": 80.0, "b": 70.0, "late": 90.0}[spec.method] + spec.split * 0.1)
    ranks = text.split("### Average ranks across datasets")[1].split("###")[0]
    assert "5 datasets where every method has a mean" in ranks
    assert "| a | **1.00** | 5 |" in ranks and "| late |" not in ranks.split("Not ranked")[0]
    assert "Not ranked: late (a mean on 1 of the 5 datasets so far); compared per dataset above." in ranks


def test_a_config_with_a_leaderboard_is_ranked_there_only(results_folder):
    """The leaderboard ranks per task over its own datasets; the average ranks of every task's datasets together
    beside it would be a second answer to the same question (the benchmark got one when GPyTorch_SM, on 4 of 16
    datasets, was set aside), so a config with a leaderboard has its ranks there only."""
    cfg = {"name": "boarded", "protocol": {"splits": 5, "seed": 1}, "datasets": ["liver", "pima", "sonar"],
           "methods": [{"name": "a", "family": "svm_rbf"}, {"name": "b", "family": "random_forest"}],
           "leaderboard": {"bootstrap": 100}}
    text, _ = _report_of(results_folder, cfg, lambda spec: {"a": 80.0, "b": 70.0}[spec.method] + spec.split * 0.1)
    assert "### Leaderboard: classification" in text and "### Each method against the dataset's best" in text
    assert "### Average ranks across datasets" not in text
