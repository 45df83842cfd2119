"""The per-task leaderboard (issue 51): ranks, their stability, the Bayesian signed-rank test, the win / tie /
loss matrix, on inputs whose answers are known."""
from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from tkbench.config.schema import Leaderboard
from tkbench.report.leaderboard import (
    bayesian_signed_rank,
    bootstrap_best,
    leaderboard_tables,
    leave_one_out_changes,
    unfinished_cells,
)


def test_bootstrap_gives_a_dominant_method_every_resample_and_splits_an_exact_tie():
    scores = np.array([[3.0, 2.0, 1.0], [5.0, 4.0, 0.0], [9.0, 1.0, 2.0]])
    np.testing.assert_allclose(bootstrap_best(scores, 200, 0), [1.0, 0.0, 0.0])
    tied = np.array([[2.0, 2.0, 1.0], [3.0, 3.0, 0.0]])
    np.testing.assert_allclose(bootstrap_best(tied, 200, 0), [0.5, 0.5, 0.0])


def test_leave_one_out_finds_the_datasets_the_leader_depends_on():
    # method 1 wins 3 of 5 datasets; leaving out one of its wins makes a 2-2 tie, which goes to method 0 (order)
    scores = np.array([[1.0, 3.0], [1.0, 3.0], [3.0, 1.0], [3.0, 1.0], [1.0, 3.0]])
    assert leave_one_out_changes(scores) == (1, [0, 1, 4])
    steady = np.array([[3.0, 1.0], [3.0, 2.0], [4.0, 1.0]])
    assert leave_one_out_changes(steady) == (0, [])


def test_bayesian_signed_rank_is_mirrored_and_sees_equivalence():
    rng = np.random.default_rng(0)
    a = rng.uniform(70, 90, 12)
    better = a + 3.0 + rng.normal(0, 0.2, 12)
    pa, pr, pb = bayesian_signed_rank(better, a, rope=1.0, seed=1)
    assert pa > 0.95 and pb < 0.01 and pa + pr + pb == pytest.approx(1.0)
    qa, qr, qb = bayesian_signed_rank(a, better, rope=1.0, seed=1)
    assert (qa, qr, qb) == pytest.approx((pb, pr, pa), abs=0.01)
    same = a + rng.normal(0, 0.05, 12)
    assert bayesian_signed_rank(same, a, rope=1.0, seed=1)[1] > 0.95


def test_bayesian_signed_rank_agrees_with_the_reference_implementation():
    """baycomp 1.0.3 (Benavoli et al.'s own package; not a dependency, see bayesian_signed_rank) printed
    (0.82988, 0.17012, 0.0) for SignedRankTest.probs(x, y, rope=0.01, nsamples=50000, random_state=1) on these
    values (2026-11-28); ours, with its own random draws, must agree to the sampling error."""
    x = np.array([0.80, 0.82, 0.75, 0.90, 0.66, 0.71])
    y = x - np.array([0.01, 0.02, -0.005, 0.03, 0.01, 0.015])
    assert bayesian_signed_rank(x, y, rope=0.01, seed=1) == pytest.approx((0.82988, 0.17012, 0.0), abs=0.01)


def _results():
    """Two classification datasets x three methods x 6 splits; A is 5 points better everywhere, B and C tie."""
    rng = np.random.default_rng(0)
    rows = []
    for ds, base in (("d1", 70.0), ("d2", 80.0), ("d3", 60.0)):
        for split in range(6):
            noise = rng.normal(0, 1.0)
            for method, shift in (("A", 5.0), ("B", 0.0), ("C", 0.0)):
                rows.append({"dataset": ds, "method": method, "split": split, "status": "ok", "n_train": 160,
                             "n_test": 40, "accuracy": base + shift + noise + rng.normal(0, 0.3)})
    frame = pd.DataFrame(rows)
    summary = (frame.groupby(["dataset", "method"], sort=False)["accuracy"].mean().rename("metric_mean")
               .reset_index().assign(task="classification", metric="accuracy", fit_mean=0.1))
    exp = SimpleNamespace(methods=[SimpleNamespace(name=m, datasets=None) for m in "ABC"],
                          protocol=SimpleNamespace(seed=7))
    return SimpleNamespace(rows=frame, experiment=exp, planned=frame[["dataset", "method", "split"]].copy()), summary


def test_the_leaderboard_ranks_the_better_method_first_with_its_wins(tmp_path):
    res, summary = _results()
    tables, images = leaderboard_tables(res, summary, tmp_path, Leaderboard(bootstrap=200))
    board = tables[0]
    assert board.title == "Leaderboard: classification"
    assert [r[0].text for r in board.rows][0] == "A" and board.rows[0][1].text == "1.00"
    assert board.rows[0][2].text == "1.00" and board.rows[0][3].text == "3"  # P(best), datasets won
    assert all(r[4].text == "0/0/3" for r in board.rows[1:])  # B and C lose to A on all three datasets
    pairs = tables[1]
    assert pairs.rows[0][0].text == "A" and float(pairs.rows[0][2].text) > 0.9
    matrix = tables[2]
    assert matrix.rows[0][0].text == "A" and {c.text for c in matrix.rows[0][2:]} == {"3/0/0"}
    assert images and images[0].exists()


def test_a_method_whose_sweep_is_still_running_is_not_ranked_on_its_first_splits(tmp_path):
    """A sweep over several sessions: A has run 1 of its 6 planned splits on d2. A mean of one split beside means of
    six is not ranked; the note says how far each such cell is, and the others are ranked as before."""
    res, summary = _results()
    res.rows = res.rows[~((res.rows["method"] == "A") & (res.rows["dataset"] == "d2") & (res.rows["split"] > 0))]
    tables, _ = leaderboard_tables(res, summary, tmp_path, Leaderboard(bootstrap=100))
    board = tables[0]
    assert [r[0].text for r in board.rows] == ["B", "C"] or [r[0].text for r in board.rows] == ["C", "B"]
    assert "A is not ranked: no finished mean on d2 (1 of 6 splits run)." in board.notes
    res.rows.loc[res.rows.index[0], "status"] = "failed"  # a finished run that failed still counts as finished
    assert unfinished_cells(res) == {("d2", "A"): (1, 6)}


def test_a_method_whose_every_run_failed_on_a_dataset_is_not_ranked_and_the_note_says_so(tmp_path):
    """MKLpy's GRAM fails on every split of Liver (no hard margin): the cell has no mean, the method is not ranked,
    and the note says that its runs finished and failed (not that they are still to run)."""
    res, summary = _results()
    cell = (res.rows["method"] == "A") & (res.rows["dataset"] == "d2")
    res.rows.loc[cell, "status"] = "failed"
    summary = summary[~((summary["method"] == "A") & (summary["dataset"] == "d2"))]
    tables, _ = leaderboard_tables(res, summary, tmp_path, Leaderboard(bootstrap=100))
    board = tables[0]
    assert sorted(r[0].text for r in board.rows) == ["B", "C"]
    assert "A is not ranked: no finished mean on d2 (none of its 6 runs ok)." in board.notes
    assert unfinished_cells(res) == {}


def test_a_method_not_planned_on_a_dataset_is_named_with_that_reason_or_as_confined(tmp_path):
    """The config runs A on some datasets only (``datasets:``): where it is not planned, the note says so rather
    than leaving a reader to wonder whether it failed or is still running; on fewer than half the datasets it is
    named once as not ranked for that reason (tkbench.report.ranking's rule)."""
    res, summary = _results()
    res.experiment.methods[0].datasets = ["d1", "d3"]
    for frame in ("rows", "planned"):
        table = getattr(res, frame)
        setattr(res, frame, table[~((table["method"] == "A") & (table["dataset"] == "d2"))])
    summary = summary[~((summary["method"] == "A") & (summary["dataset"] == "d2"))]
    board = leaderboard_tables(res, summary, tmp_path, Leaderboard(bootstrap=100))[0][0]
    assert sorted(r[0].text for r in board.rows) == ["B", "C"]
    assert "A is not ranked: no finished mean on d2 (not planned there)." in board.notes
    res.experiment.methods[0].datasets = ["d1"]
    keep = ~((res.rows["method"] == "A") & (res.rows["dataset"] == "d3"))
    res.rows, res.planned = res.rows[keep], res.planned[keep]
    summary = summary[~((summary["method"] == "A") & (summary["dataset"] == "d3"))]
    board = leaderboard_tables(res, summary, tmp_path, Leaderboard(bootstrap=100))[0][0]
    assert "Not ranked: A (the config runs it on fewer than half of these datasets)." in board.notes
    assert not any(n.startswith("A is not ranked") for n in board.notes)


def test_a_method_whose_sweep_has_reached_few_datasets_keeps_its_reasons_per_dataset(tmp_path):
    res, summary = _results()
    res.rows = res.rows[~((res.rows["method"] == "A") & (res.rows["dataset"] != "d1") & (res.rows["split"] > 0))]
    board = leaderboard_tables(res, summary, tmp_path, Leaderboard(bootstrap=100))[0][0]
    assert sorted(r[0].text for r in board.rows) == ["B", "C"]
    assert "A is not ranked: no finished mean on d2 (1 of 6 splits run), d3 (1 of 6 splits run)." in board.notes


def test_a_group_of_datasets_ranks_the_methods_finished_on_the_group(tmp_path):
    """leaderboard.groups: A has not finished d3, so the task's board ranks only B and C; the group {d1, d2} has
    its own board, on which A is ranked first (it is 5 points better on both), with its own notes and figure."""
    res, summary = _results()
    res.rows = res.rows[~((res.rows["method"] == "A") & (res.rows["dataset"] == "d3") & (res.rows["split"] > 0))]
    tables, images = leaderboard_tables(res, summary, tmp_path,
                                        Leaderboard(bootstrap=100, groups={"d1 and d2": ["d1", "d2"]}))
    titles = [t.title for t in tables]
    assert titles == ["Leaderboard: classification", "Leading pairs (classification): Bayesian signed-rank test "
                      "over datasets", "Win / tie / loss matrix (classification)",
                      "Leaderboard: classification, d1 and d2", "Leading pairs (classification, d1 and d2): "
                      "Bayesian signed-rank test over datasets", "Win / tie / loss matrix (classification, d1 and d2)"]
    whole, group = tables[0], tables[3]
    assert sorted(r[0].text for r in whole.rows) == ["B", "C"]
    assert [r[0].text for r in group.rows][0] == "A" and group.rows[0][3].text == "2"  # first, both datasets won
    assert group.notes[0].startswith("2 classification datasets (d1, d2)")
    assert any("leaderboard.groups" in n for n in group.notes)
    assert [p.name for p in images] == ["leaderboard_classification.png", "leaderboard_classification_group1.png"]
    assert all(p.exists() for p in images)
    # a group whose dataset has no finished mean yet says so, and ranks on what it has
    summary = summary[summary["dataset"] != "d2"]
    tables, _ = leaderboard_tables(res, summary, tmp_path, Leaderboard(bootstrap=100, groups={"g": ["d1", "d2",
                                                                                                   "d3"]}))
    group = [t for t in tables if t.title == "Leaderboard: classification, g"][0]
    assert any("Not in this ranking yet (no method has a finished mean there): d2." in n for n in group.notes)


def test_leaderboard_groups_are_checked_against_the_config(write_config):
    """A group names datasets of this config, of one task, at least two, none twice: each mistake is a config
    error naming the field and the value."""
    from tkbench.config import ConfigError, load_config

    def cfg(groups):
        return {"name": "x", "kind": "accuracy", "protocol": {"splits": 2},
                "datasets": ["liver", "pima", "airfoil"],
                "methods": [{"name": "svm", "family": "svm_rbf", "grid": {}},
                            {"name": "rf", "family": "random_forest"}],
                "leaderboard": {"groups": groups}}

    assert load_config(write_config(cfg({"small": ["liver", "pima"]}))).leaderboard.groups == {
        "small": ["liver", "pima"]}
    for groups, said in (({"small": ["liver", "sonar"]}, "leaderboard.groups.small.*sonar.*a dataset of this config"),
                         ({"mixed": ["liver", "airfoil"]}, "leaderboard.groups.mixed.*one task.*airfoil is "
                          "regression"),
                         ({"one": ["liver"]}, "at least two datasets"),
                         ({"twice": ["liver", "liver"]}, "liver listed twice")):
        with pytest.raises(ConfigError, match=said):
            load_config(write_config(cfg(groups)))


def test_a_leaderboard_outside_an_accuracy_experiment_is_a_config_error(write_config):
    from tkbench.config import ConfigError, load_config

    cfg = {"name": "x", "kind": "scaling", "protocol": {"splits": 1}, "datasets": ["liver"],
           "methods": [{"name": "svm", "family": "svm_rbf", "grid": {}}],
           "scaling": {"sizes": [50, 100]}, "leaderboard": {}}
    with pytest.raises(ConfigError, match="leaderboard"):
        load_config(write_config(cfg))


def test_the_leaderboard_and_the_significance_table_read_one_verdict_rule():
    """PairedTest.verdict is the one rule (corrected t-test at 0.05, sign of t by the metric's direction)."""
    from tkbench.report.statistics import paired_test

    rng = np.random.default_rng(3)
    base = rng.normal(80, 1, 30)
    test = paired_test(base + 2.0, base + rng.normal(0, 0.3, 30), 500, 100)
    assert test.verdict(True) == "better" and test.verdict(False) == "worse"
    tie = paired_test(base + rng.normal(0, 0.3, 30), base + rng.normal(0, 0.3, 30), 500, 100)
    assert tie.p_corrected_t >= 0.05 and tie.verdict(True) == "tie"
    assert paired_test(base, base, 500, 100).verdict(True) == paired_test(base, base, 500, 100).undefined != ""
    # the leaderboard skips the Wilcoxon p (its verdict reads the t-test only): every other field is the same
    other = base + rng.normal(0, 0.3, 30)
    quick, full = paired_test(base + 2.0, other, 500, 100, wilcoxon=False), paired_test(base + 2.0, other, 500, 100)
    assert np.isnan(quick.p_wilcoxon) and full.p_wilcoxon < 1e-5
    assert replace(quick, p_wilcoxon=full.p_wilcoxon) == full and quick.verdict(True) == full.verdict(True)


def test_gain_and_risk_count_what_paper_002_figure_2_counts():
    """Three methods on four sets: the gain counts sets where a method beats the best other by >= p %, the risk
    sets where it trails the best by > p %; from the paper's own Table 1 the gain at 5 % is its text's (5, 3, 1)."""
    from pathlib import Path

    import yaml

    from tkbench.report.relative import gain_risk

    errors = pd.DataFrame({"A": [1.0, 1.0, 2.0, 1.0], "B": [1.2, 0.9, 1.0, 1.0], "C": [1.04, 1.0, 1.0, 3.0]})
    gain, risk = gain_risk(errors, np.array([0.0, 5.0, 50.0]))
    assert gain["A"].tolist() == [2, 0, 0]  # set 0 by 4 %, set 3 a tie (ties count at p = 0)
    assert gain["B"].tolist() == [3, 1, 0] and gain["C"].tolist() == [1, 0, 0]  # B: set 1 by 11 %
    assert risk["A"].tolist() == [2, 2, 1] and risk["C"].tolist() == [3, 2, 1]  # A: 11 % on set 1, 100 % on set 2
    root = Path(__file__).resolve().parents[2]
    table = yaml.safe_load((root / "configs" / "reference" / "hgk2016_table1.yaml").read_text())["results"]
    frame = pd.DataFrame({ds: {m: v[0] for m, v in cells.items()} for ds, cells in table.items()}).T
    gain, _ = gain_risk(frame[["HGK", "RF", "DNN"]], np.array([5.0]))
    assert {m: int(g[0]) for m, g in gain.items()} == {"HGK": 5, "RF": 3, "DNN": 1}


def test_relative_errors_need_methods_of_the_config(write_config):
    from tests.conftest import tiny_config
    from tkbench.config import load_config
    from tkbench.errors import ConfigError

    cfg = tiny_config(name="rel")
    cfg["relative_errors"] = {"baseline": "svm", "methods": ["svm", "nosuch"]}
    with pytest.raises(ConfigError, match=r"relative_errors\.methods.*nosuch"):
        load_config(write_config(cfg))


def test_a_learning_curve_groups_the_sizes_of_one_dataset(write_config, tmp_path):
    """learning_curve: (paper 000 Figures 5 and 7): entries holding the same data at several sizes become one
    curve per method, x the training rows, with n per point; an entry alone is no curve."""
    from tests.conftest import tiny_config
    from tkbench.bench.runner import run_experiment
    from tkbench.config import load_config
    from tkbench.report.build import build_report

    cfg = tiny_config(name="lc")
    cfg["protocol"]["splits"] = 2
    cfg["learning_curve"] = {"residual": True}
    cfg["datasets"] = [{"name": "liver", "alias": "liver_40", "subsample": 50},
                       {"name": "liver", "alias": "liver_80", "subsample": 100}, "pima"]
    cfg["methods"] = [{"name": "svm", "family": "svm_rbf", "grid": {}}]
    run_experiment(load_config(write_config(cfg)), out_dir=tmp_path, progress=False)
    written = build_report(tmp_path, formats=["md"])
    assert "learning_curve_liver.png" in {p.name for p in written}
    md = (tmp_path / "report" / "report.md").read_text()
    assert "### Learning curve: liver (" in md and "| liver_40 | 38 |" in md and "(n = 2)" in md  # 50 rows, 25 % test
    assert "Learning curve: pima" not in md


def test_two_curves_of_one_generator_get_their_own_names_and_figures():
    """The learning-curve config draws the spiral twice (clean and noisy: the same generator, other options): each
    group is named from its labels, so the noisy curve no longer overwrote the clean one's figure and title."""
    from tkbench.report.learning import curve_name

    taken: set[str] = set()
    assert curve_name(["spiral_50", "spiral_100", "spiral_800"], "spiral", taken) == "spiral"
    assert curve_name(["noisy_spiral_100", "noisy_spiral_1120"], "spiral", taken) == "noisy_spiral"
    assert curve_name(["a1", "b2"], "spiral", taken) == "spiral_2"  # no common prefix, the name taken: numbered
    assert curve_name(["liver_50", "liver_276"], "liver", taken) == "liver"


def test_a_learning_curve_belongs_to_an_accuracy_experiment(write_config):
    from tests.conftest import tiny_config
    from tkbench.config import load_config
    from tkbench.errors import ConfigError

    cfg = tiny_config(name="lc2", kind="scaling", scaling={"sizes": [40, 80]})
    cfg["learning_curve"] = {"residual": False}
    cfg["methods"] = [{"name": "rf", "family": "random_forest"}]
    with pytest.raises(ConfigError, match="learning curves in an accuracy experiment only"):
        load_config(write_config(cfg))
