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
    assert S.corrected_resampled_ttest([0.0, 0.0, 0.0], 10, 2) == (0.0, 1.0)


def test_paired_test_has_wilcoxon_beside_the_t_test():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 0.1, 30), rng.normal(0.9, 0.1, 30)
    res = S.paired_test(a, b, 800, 200)
    assert res.n == 30 and res.mean_diff == pytest.approx(np.mean(a - b))
    assert res.p_wilcoxon == pytest.approx(stats.wilcoxon(a - b, zero_method="zsplit").pvalue)
    assert S.paired_test(a, a, 800, 200).p_wilcoxon == 1.0


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


def test_every_accuracy_report_gets_paired_tests_ranks_and_the_cd_diagram(results_folder):
    from tkbench.bench.plan import make_plan
    from tkbench.report.build import build_report

    cfg = {"name": "sigfix", "protocol": {"splits": 5, "seed": 1}, "datasets": ["liver", "pima", "sonar"],
           "methods": [{"name": "a", "family": "svm_rbf"}, {"name": "b", "family": "random_forest"},
                       {"name": "c", "family": "krr_rbf"}]}
    exp, store, out = results_folder(cfg)
    level = {"a": 80.0, "b": 70.0, "c": 79.9}  # c (80.5 on average) ties with a and clearly beats b
    for spec in make_plan(exp):
        noise = [0.5, -0.3, 0.2, -0.6, 0.1][spec.split]
        store.write_row({"key": spec.key, "dataset": spec.label, "method": spec.method, "split": spec.split,
                         "task": "classification", "status": "ok", "error": None, "fit_seconds": 1.0,
                         "cv_seconds": 0.0, "predict_seconds": 0.1, "n_train": 400, "n_test": 100,
                         "accuracy": level[spec.method] + noise + (0.3 * spec.split if spec.method == "c" else 0)})
    text = build_report(out, ["md"])[0].read_text()
    assert "### Each method against the dataset's best" in text
    lines = [line for line in text.splitlines() if line.startswith("| liver |")]
    assert "| liver | b | c | 5 | -10.5 | 5.0e-06 | 0.062 | worse |" in lines
    assert "| liver | a | c | 5 | -0.5 | 0.191 | 0.125 | tie |" in lines
    assert "| c | **1.00** | 3 |" in text and "| a | 2.00 | 0 |" in text and "| b | 3.00 | 0 |" in text
    assert "Friedman test: chi² = 6.00" in text and "CD = 1.91" in text
    assert (out / "report" / "critical_difference.png").exists()
