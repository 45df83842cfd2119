"""Paired comparisons (config ``compare``), the RMSE and final-fit tables of accuracy reports."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wilcoxon

from tkbench.report.paired import paired_stats


def test_paired_stats_counts_and_matches_scipy():
    ours = pd.Series([90.0, 85.0, 88.0, 92.0, 80.0, 86.0], index=range(6))
    ref = pd.Series([88.0, 85.0, 89.0, 90.0, 79.0, 83.0, 70.0], index=range(7))  # split 6: ours missing
    s = paired_stats(ours, ref, "accuracy")
    assert (s["n"], s["wins"], s["ties"], s["losses"]) == (6, 4, 1, 1)
    diff = ours.to_numpy() - ref[:6].to_numpy()
    assert s["mean_diff"] == pytest.approx(diff.mean())
    assert s["p"] == pytest.approx(wilcoxon(diff, zero_method="zsplit").pvalue)
    mse = paired_stats(ours, ref, "mse")  # lower is better: wins and losses swap, the difference keeps its sign
    assert (mse["wins"], mse["losses"], mse["mean_diff"]) == (1, 4, s["mean_diff"]) and mse["better"] < 0
    same = paired_stats(ref[:5], ref[:5], "accuracy")
    assert same["ties"] == 5 and np.isnan(same["p"])
    assert paired_stats(ours, pd.Series([1.0], index=[9]), "accuracy") is None


def test_paired_verdict_takes_its_direction_from_the_wilcoxon_rank_sums():
    """Issue 48 (Abalone, nkrr_d2 against linear_l2): most splits won, the mean dragged the other way by a few
    outlying splits. The verdict must follow the test that was run (Wilcoxon: rank sums), not the mean."""
    from tkbench.report.paired import _verdict

    ref = pd.Series(np.full(30, 4.0), index=range(30))
    delta = -np.linspace(0.08, 0.3, 30)  # MSE: 22 splits where ours is lower ...
    delta[22:] = [0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 3.0, 2.5]  # ... 6 slightly higher and 2 far higher
    ours = ref + delta
    s = paired_stats(ours, ref, "mse")
    assert s["mean_diff"] > 0  # the mean says worse
    assert (s["wins"], s["losses"]) == (22, 8)
    w = wilcoxon(delta, zero_method="zsplit")
    assert s["p"] == pytest.approx(w.pvalue) and s["p"] < 0.05
    assert min(s["rank_sum_better"], s["rank_sum_worse"]) == pytest.approx(w.statistic)
    assert s["rank_sum_better"] > s["rank_sum_worse"] and s["median_diff"] < 0
    assert _verdict(s) == "better"
    assert _verdict(paired_stats(ref, ours, "mse")) == "worse"


@pytest.mark.slow
def test_accuracy_report_has_paired_rmse_and_final_fit_tables(write_config, tmp_path):
    from tests.conftest import tiny_config
    from tkbench.bench.runner import run_experiment
    from tkbench.config import load_config
    from tkbench.report.build import build_report

    cfg = tiny_config()
    cfg["datasets"] = ["sonar"]
    cfg["methods"] = [
        {"name": "uniform", "family": "nkrr", "solver": "fixed", "params": {"degree": 1}, "grid": {"lam": [0.1, 1]}},
        {"name": "l2", "family": "nkrr", "params": {"degree": 1}, "grid": {"lam": [0.1, 1]}},
        {"name": "d2", "family": "nkrr", "params": {"degree": 2}, "grid": {"lam": [0.1, 1]}}]
    cfg["compare"] = [{"methods": ["d2"], "against": ["uniform", "l2"]}]
    run_experiment(load_config(write_config(cfg)), out_dir=tmp_path, progress=False)
    build_report(tmp_path, formats=["md"])
    text = (tmp_path / "report" / "report.md").read_text()
    assert "Paired comparison: d2 against the best of uniform, l2" in text
    assert "Test RMSE of the decision values on ±1 labels" in text
    assert "Final fits: solver iterations" in text and "lam: " in text
    line = next(x for x in text.splitlines() if x.startswith("| sonar | d2 |") and "/ 3 |" not in x and " W " not in x
                and ("uniform" in x or "| l2 |" in x))
    assert "| 3 |" in line  # three shared splits


def test_compare_names_must_be_methods(write_config):
    from tests.conftest import tiny_config
    from tkbench.config import load_config
    from tkbench.errors import ConfigError

    cfg = tiny_config(compare=[{"methods": ["svm"], "against": ["nope"]}])
    with pytest.raises(ConfigError, match=r"compare\[0\]\.against: 'nope'"):
        load_config(write_config(cfg))
    np.testing.assert_equal(load_config(write_config(tiny_config(compare=[{"methods": ["svm"],
                                                                           "against": ["rf"]}]))).compare[0].against,
                            ["rf"])


def test_a_pairs_corrected_t_test_uses_the_pairs_own_sizes_not_the_other_methods_rows():
    """The corrected t-test's n_test / n_train come from the two methods' own rows (the larger correction when
    they trained on different numbers of rows), so a third method's runs cannot move a pair's p-value or verdict
    (until 2026-12-02 the dataset's medians over every method were used)."""
    from tkbench.report.leaderboard import _verdict
    from tkbench.report.significance import pair_sizes
    from tkbench.report.statistics import paired_test

    rng = np.random.default_rng(4)
    a = 80.0 + rng.normal(0, 1, 12)
    b = a - 0.6 + rng.normal(0, 0.8, 12)

    def rows(c_train: int, c_splits: int) -> pd.DataFrame:
        out = [{"dataset": "d", "method": m, "split": i, "accuracy": v, "n_train": 1000, "n_test": 250}
               for m, vals in (("A", a), ("B", b)) for i, v in enumerate(vals)]
        out += [{"dataset": "d", "method": "C", "split": i, "accuracy": 70.0, "n_train": c_train, "n_test": 250}
                for i in range(c_splits)]
        return pd.DataFrame(out)

    expected = paired_test(a, b, 1000, 250, wilcoxon=False)
    for c_train, c_splits in ((100, 30), (100, 5), (20000, 30)):
        ok = rows(c_train, c_splits)
        assert pair_sizes(ok, "A", "B", range(12)) == (1000.0, 250.0)
        assert _verdict(ok, "d", "A", "B", "accuracy") == {"tie": "tie", "better": "win", "worse": "loss"}[
            expected.verdict(True, 0.05)]
    # methods trained on different numbers of rows: the smaller n_train (the larger variance correction)
    ok = rows(100, 12)
    assert pair_sizes(ok, "A", "C", range(12)) == (100.0, 250.0)
    assert np.isnan(pair_sizes(ok.drop(columns="n_train"), "A", "B", range(12))[0])
    assert np.isnan(pair_sizes(ok, "A", "missing", range(12))[0])
