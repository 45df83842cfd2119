"""Scaling and convergence experiments: plans, slopes, plots."""
from __future__ import annotations

import numpy as np
import pytest
from rich.console import Console

from tests.conftest import tiny_config
from tkbench.bench.plan import make_plan
from tkbench.bench.runner import run_experiment
from tkbench.bench.store import ResultStore
from tkbench.config import load_config
from tkbench.report.build import build_report
from tkbench.report.plots import fit_slope


def test_fit_slope_recovers_a_power_law():
    m = np.array([100, 200, 400, 800])
    slope, _ = fit_slope(m, 3e-6 * m ** 2.3)
    assert slope == pytest.approx(2.3)
    assert np.isnan(fit_slope([100, 100], [1.0, 2.0])[0])


@pytest.mark.slow
def test_scaling_experiment(write_config, tmp_path):
    cfg = tiny_config(name="scal", kind="scaling",
                      scaling={"sizes": [40, 80, 160], "repeats": 2, "test_size": 50,
                               "vary": {"param": "n_estimators", "values": [5, 20]}})
    cfg["datasets"] = ["pima"]
    cfg["methods"] = [{"name": "rf", "family": "random_forest"}]
    exp = load_config(write_config(cfg))
    plan = make_plan(exp)
    assert len(plan) == 3 * 2 * 2 and all(not s.grid for s in plan)
    outcome = run_experiment(exp, out_dir=tmp_path, progress=False)
    assert outcome.counts["ok"] == 12
    rows = ResultStore(tmp_path).rows()
    assert sorted({r["n_train"] for r in rows}) == [40, 80, 160] and {r["n_test"] for r in rows} == {50}
    assert {r["size_value"] for r in rows} == {5, 20}
    written = build_report(tmp_path, formats=["md"])
    names = {p.name for p in written}
    assert {"scaling_pima_m.png", "scaling_pima_m.svg", "scaling_pima_size.png", "scaling_pima_memory.png"} <= names
    md = (tmp_path / "report" / "report.md").read_text()
    assert "Fitted complexity exponents" in md and "| pima | rf | m | n_estimators=5 |" in md
    assert "| pima | rf | n_estimators | m=40 |" in md and "| m=160 |" in md


@pytest.mark.slow
def test_sdp_timing_report_states_solver_status_and_every_worker_setup(write_config, tmp_path):
    cfg = tiny_config(name="sdpt", kind="scaling", scaling={"sizes": [20], "repeats": 1, "test_size": 20})
    cfg["datasets"] = ["liver"]
    cfg["methods"] = [{"name": "tk_sdp", "family": "tk", "solver": "sdp",
                       "params": {"C": 1.0, "delta": 0.1, "degree": 1, "sdp_solver": "clarabel"}},
                      {"name": "tk_fw", "family": "tk", "solver": "fw", "params": {"C": 1.0, "delta": 0.1}}]
    run_experiment(load_config(write_config(cfg)), out_dir=tmp_path, n_jobs=1, progress=False)
    cfg["scaling"]["sizes"] = [20, 30]  # resumed later with two workers
    run_experiment(load_config(write_config(cfg)), out_dir=tmp_path, n_jobs=2, progress=False)
    build_report(tmp_path, formats=["md"])
    md = (tmp_path / "report" / "report.md").read_text()
    assert "- tk_sdp: solver status " in md and "of 2 runs; every solution is checked by the duality gap" in md
    assert "2 of 2 within tolerance" in md and "tk_fw: solver status" not in md
    assert "1 worker(s) x 1 BLAS thread(s) (2 runs), 2 worker(s) x 1 BLAS thread(s) (2 runs)" in md
    store = ResultStore(tmp_path)  # an answer the certificate rejects is named, with where it happened
    row = next(r for r in store.rows() if r["method"] == "tk_sdp" and r["size"] == 30)
    row["diagnostics"].update(converged=False, relative_gap=0.25)
    store.write_row(row)
    build_report(tmp_path, formats=["md"])
    md = (tmp_path / "report" / "report.md").read_text()
    assert "1 of 2 within tolerance (not certified: liver m=30 (1))" in md
    assert "largest relative gap 2.5e-01" in md


@pytest.mark.slow
def test_full_size_runs_use_the_whole_training_part_and_report_failures(write_config, tmp_path):
    cfg = tiny_config(name="full", kind="scaling",
                      scaling={"sizes": [30, 60], "repeats": 2, "test_size": 40, "full_size": True})
    cfg["datasets"] = ["liver"]
    cfg["methods"] = [{"name": "rf", "family": "random_forest", "params": {"n_estimators": 10}},
                      {"name": "svm", "family": "svm_rbf", "params": {"C": 1.0}},
                      {"name": "broken", "family": "debug_fail", "params": {"mode": "raise"}}]
    exp = load_config(write_config(cfg))
    plan = make_plan(exp)
    assert len(plan) == 3 * 3 * 2 and sum(s.size is None for s in plan) == 6
    run_experiment(exp, out_dir=tmp_path, progress=False)
    rows = [r for r in ResultStore(tmp_path).rows() if r["status"] == "ok"]
    assert {r["n_train"] for r in rows if r["size"] is None} == {259}  # 345 rows, 25 % test
    assert {r["n_test"] for r in rows} == {40}
    build_report(tmp_path, formats=["md"])
    md = (tmp_path / "report" / "report.md").read_text()
    assert "| liver | 259 (full) |" in md and md.index("| liver | 60 |") < md.index("| liver | 259 (full) |")
    assert "broken on liver at m = 30, 60, 259 (full) (6 runs): failed; at m = 30: RuntimeError" in md
    assert "| liver | rf | m | - |" in md and "| 3 | m=259 |" in md  # the full-size point is on the curve


def test_scaling_rejects_grids(write_config):
    from tkbench.errors import ConfigError

    cfg = tiny_config(kind="scaling", scaling={"sizes": [40]})
    with pytest.raises(ConfigError, match="no CV grid in a scaling experiment"):
        load_config(write_config(cfg))


def test_convergence_experiment_records_traces(write_config, tmp_path):
    cfg = tiny_config(name="conv", kind="convergence")
    cfg["protocol"]["splits"] = 2
    cfg["datasets"] = ["liver"]
    cfg["methods"] = [{"name": "mlp", "family": "neural_net", "grid": {},
                       "params": {"n_iter_no_change": 5, "max_iter": 60}}]
    exp = load_config(write_config(cfg))
    run_experiment(exp, out_dir=tmp_path, progress=False)
    rows = ResultStore(tmp_path).rows()
    assert all(len(r["trace"]) == r["diagnostics"]["iterations"] for r in rows)
    assert all(r["trace"][0]["iteration"] == 1 and r["trace"][0]["loss"] > 0 for r in rows)
    written = build_report(tmp_path, formats=["html"])
    assert "convergence_liver.png" in {p.name for p in written}


def test_slope_table_shows_the_papers_exponent_per_task(write_config, tmp_path):
    cfg = tiny_config(name="scal2", kind="scaling", reference="reference/scaling.yaml",
                      scaling={"sizes": [40, 80], "repeats": 1, "test_size": 30})
    cfg["datasets"] = [{"name": "ccpp", "alias": "ccpp_classification", "options": {"task": "classification"}}]
    cfg["methods"] = [{"name": "rf", "family": "random_forest", "params": {"n_estimators": 5},
                       "reference": "tk_fw"}]
    path = write_config(cfg)
    path.parent.joinpath("reference").mkdir()
    path.parent.joinpath("reference", "scaling.yaml").write_text(
        "tk_fw_classification: {m_exponent: 2.28, q_exponent: 0.57}\ntk_fw_regression: {m_exponent: 2.34}\n")
    run_experiment(load_config(path), out_dir=tmp_path / "out", progress=False)
    md = build_report(tmp_path / "out", formats=["md"])[0].read_text()
    assert "| ccpp_classification | rf | m | - |" in md and "| 2.28 |" in md


@pytest.mark.slow
def test_methods_can_vary_their_own_parameter(write_config, tmp_path):
    cfg = tiny_config(name="scal3", kind="scaling", scaling={"sizes": [40, 80], "repeats": 1, "test_size": 30})
    cfg["datasets"] = ["pima"]
    cfg["methods"] = [
        {"name": "rf", "family": "random_forest", "vary": {"param": "n_estimators", "values": [5, 10]}},
        {"name": "svm", "family": "svm_rbf", "params": {"gamma": 0.1}, "vary": {"param": "C", "values": [1.0, 10.0]}},
    ]
    exp = load_config(write_config(cfg))
    plan = make_plan(exp)
    assert {(s.method, s.vary["param"]) for s in plan} == {("rf", "n_estimators"), ("svm", "C")}
    assert all(s.params[s.vary["param"]] == s.vary["value"] for s in plan) and len(plan) == 8
    run_experiment(exp, out_dir=tmp_path / "out", progress=False)
    written = {p.name for p in build_report(tmp_path / "out", formats=["md"])}
    assert {"scaling_pima_size_n_estimators.png", "scaling_pima_size_C.png"} <= written
    md = (tmp_path / "out" / "report" / "report.md").read_text()
    assert "| pima | rf | m | n_estimators=5 |" in md and "| pima | svm | m | C=10 |" in md
    bad = dict(cfg, methods=[{"name": "rf", "family": "random_forest", "vary": {"param": "C", "values": [1]}}])
    from tkbench.errors import ConfigError
    with pytest.raises(ConfigError, match=r"methods\[0\]\.vary\.param"):
        load_config(write_config(bad, "bad.yaml"))


def test_surface_experiment_stores_and_draws_decision_surfaces(write_config, tmp_path):
    cfg = tiny_config(name="surf", kind="surface")
    cfg["protocol"]["splits"] = 1
    cfg["datasets"] = [{"name": "circle", "alias": "circle_40", "options": {"n_samples": 400, "seed": 1},
                        "subsample": 50}]
    cfg["methods"] = [{"name": "svm", "family": "svm_rbf", "grid": {}, "params": {"C": 10.0, "gamma": 1.0}}]
    run_experiment(load_config(write_config(cfg)), out_dir=tmp_path / "out", progress=False)
    row = ResultStore(tmp_path / "out").rows()[0]
    z = np.asarray(row["surface"]["z"])
    assert z.shape == (100, 100) and len(row["surface"]["train_x"]) == row["n_train"] == 38  # 50 rows, 25 % test
    # the circle's inside and outside get opposite signs: the centre and a corner of the box disagree
    assert np.sign(z[50, 50]) != np.sign(z[0, 0])
    written = {p.name for p in build_report(tmp_path / "out", formats=["md"])}
    assert "surface_circle_40.png" in written
    bad = dict(cfg, datasets=["liver"])
    run_experiment(load_config(write_config(bad, "bad.yaml")), out_dir=tmp_path / "bad", progress=False)
    assert "needs data with 1 or 2 features" in ResultStore(tmp_path / "bad").rows()[0]["error"]


def test_a_run_is_executed_by_its_kind_with_the_typed_spec(write_config, monkeypatch):
    """Issue 49: the spec stays typed through execution (it used to reach the run as a dict read by 31 string
    keys); the kind of the experiment, not a branch on its name, runs it; the row keeps the plain spec."""
    from tkbench.bench.execute import execute
    from tkbench.bench.spec import RunSpec
    from tkbench.kinds import KINDS

    seen = []
    real = type(KINDS["accuracy"]).execute

    def spy(self, spec, row, threads, root):
        seen.append((self.name, type(spec)))
        return real(self, spec, row, threads, root)

    monkeypatch.setattr(type(KINDS["accuracy"]), "execute", spy)
    spec = make_plan(load_config(write_config(tiny_config())))[0]
    row = execute(spec.to_dict(), {})
    assert row["status"] == "ok", row.get("traceback")
    assert seen == [("accuracy", RunSpec)] and row["spec"] == spec.to_dict()
    assert RunSpec.from_dict(spec.to_dict()) == spec and RunSpec.from_dict(spec.to_dict()).key == spec.key


@pytest.mark.slow
def test_a_scaling_budget_stops_each_series_at_its_first_run_over_it(write_config, tmp_path):
    """scaling.budget_seconds: a series' larger sizes are not started once a run of it took longer (here every
    run does), the sweep ends ok, a resumed sweep stops at the same place, the report names what was left out and
    why, and a larger budget later runs the rest into the same folder."""
    cfg = tiny_config(name="budget", kind="scaling",
                      scaling={"sizes": [40, 80, 160], "repeats": 2, "test_size": 30, "budget_seconds": 1e-9,
                               "vary": {"param": "n_estimators", "values": [5, 10]}})
    cfg["datasets"] = ["pima"]
    cfg["methods"] = [{"name": "rf", "family": "random_forest"}]
    outcome = run_experiment(load_config(write_config(cfg)), out_dir=tmp_path, n_jobs=1, progress=False)
    rows = ResultStore(tmp_path).rows()
    assert sorted((r["size"], r["vary_value"]) for r in rows) == [(40, 5), (40, 5), (40, 10), (40, 10)]
    assert len(outcome.gated) == 8 and not outcome.not_ok
    assert all(v.startswith("not reached: at m = 40 the run took") for v in outcome.gated.values())
    again = run_experiment(load_config(write_config(cfg)), out_dir=tmp_path, n_jobs=1, progress=False)
    assert again.executed == 0 and len(again.gated) == 8
    run_experiment(load_config(write_config(cfg)), out_dir=tmp_path, dry_run=True, console=(con := Console(
        record=True, width=200)))
    assert "8 of the 8 runs to run are left out by the rows so far" in con.export_text()
    build_report(tmp_path, formats=["md"])
    md = (tmp_path / "report" / "report.md").read_text()
    assert "rf on pima (n_estimators = 5): m = 80, 160 not run (at m = 40 the run took" in md
    assert "the budget per run is 1e-09 s" in md
    cfg["scaling"]["budget_seconds"] = 1e6
    more = run_experiment(load_config(write_config(cfg)), out_dir=tmp_path, n_jobs=1, progress=False)
    assert more.counts["ok"] == 8 and not more.gated and len(ResultStore(tmp_path).rows()) == 12


def test_a_run_that_timed_out_is_not_run_again_under_a_budget_until_the_timeout_is_raised(write_config):
    """Resuming a budget sweep used to re-run every timed-out run (the runner retries what is not ok), spending its
    timeout again for the same end. The gate now leaves such a run out while the config's timeout is not larger
    than the one it was killed at; its series' larger sizes stay cut either way."""
    from tkbench.kinds.budget import SizeBudget

    cfg = tiny_config(name="budget3", kind="scaling",
                      scaling={"sizes": [40, 80], "repeats": 1, "test_size": 30, "budget_seconds": 100})
    cfg["datasets"] = ["pima"]
    cfg["methods"] = [{"name": "rf", "family": "random_forest"}]
    cfg["protocol"]["timeout"] = 60
    plan = make_plan(load_config(write_config(cfg)))
    small, large = sorted(plan, key=lambda s: s.size)
    row = {"key": small.key, "status": "timeout", "total_seconds": None, "spec": small.to_dict()}
    gate = SizeBudget(100, plan).note_rows([row])
    assert gate(small) == ("not run again: at m = 40 it timed out at 60 s in an earlier attempt (raise "
                           "protocol.timeout to retry it)")
    assert gate(large) == "not reached: at m = 40 the run was timeout"
    cfg["protocol"]["timeout"] = 120  # not part of the run key: the same runs, a longer limit
    raised = make_plan(load_config(write_config(cfg)))
    assert [s.key for s in raised] == [s.key for s in plan]
    gate = SizeBudget(100, raised).note_rows([row])
    assert gate(next(s for s in raised if s.size == 40)) is None
    assert gate(next(s for s in raised if s.size == 80)).startswith("not reached")
    failed = SizeBudget(100, plan).note_rows([{**row, "status": "failed"}])  # a failure is retried, as before
    assert failed(small) is None


def test_a_budget_counts_every_session_of_a_resumed_run(write_config):
    """A run continued from its saved state finished in a session whose wall clock (``total_seconds``) leaves out
    the earlier ones; its timed parts count them (tkbench.bench.cost.run_parts). 3 sessions of 50 s are 150 s,
    over a 100 s budget: the larger size is not started (it was, when the last session's 50 s were taken)."""
    from tkbench.kinds.budget import SizeBudget

    cfg = tiny_config(name="budget4", kind="scaling",
                      scaling={"sizes": [40, 80], "repeats": 1, "test_size": 30, "budget_seconds": 100})
    cfg["datasets"] = ["pima"]
    cfg["methods"] = [{"name": "rf", "family": "random_forest"}]
    plan = make_plan(load_config(write_config(cfg)))
    small, large = sorted(plan, key=lambda s: s.size)
    row = {"key": small.key, "status": "ok", "total_seconds": 50.0, "cv": None, "cv_seconds": 0.0,
           "fit_seconds": 148.0, "predict_seconds": 1.0, "resumed": {"seconds": 100.0}, "spec": small.to_dict()}
    assert SizeBudget(100, plan).note_rows([row])(large) == "not reached: at m = 40 the run took 149 s, over " \
                                                           "the budget of 100 s"
    fresh = {**row, "fit_seconds": 48.0, "resumed": None}
    assert SizeBudget(100, plan).note_rows([fresh])(large) is None


def test_a_failed_run_ends_its_series_but_not_the_others(write_config, tmp_path):
    """The gate keys on the series: a run that failed at m = 40 (n_estimators = 0 is refused) leaves out that
    value's larger sizes; the other value's series runs whole."""
    cfg = tiny_config(name="budget2", kind="scaling",
                      scaling={"sizes": [40, 80], "repeats": 1, "test_size": 30, "budget_seconds": 3600,
                               "vary": {"param": "n_estimators", "values": [0, 5]}})
    cfg["datasets"] = ["pima"]
    cfg["methods"] = [{"name": "rf", "family": "random_forest"}]
    outcome = run_experiment(load_config(write_config(cfg)), out_dir=tmp_path, n_jobs=1, progress=False)
    rows = ResultStore(tmp_path).rows()
    assert sorted((r["size"], r["vary_value"], r["status"]) for r in rows) == [
        (40, 0, "failed"), (40, 5, "ok"), (80, 5, "ok")]
    assert list(outcome.gated.values()) == ["not reached: at m = 40 the run was failed"]


def test_a_one_feature_surface_records_f_on_a_line_and_draws_the_curves(write_config, tmp_path):
    """Paper 000 Figure 1(a): on one-feature data (sine1d) a surface run stores f(z) on a line over the data's range
    (no y grid) and the report draws every method's curve on one axis, in the config's order."""
    cfg = tiny_config(name="line", kind="surface")
    cfg["protocol"]["splits"] = 1
    cfg["datasets"] = [{"name": "sine1d", "options": {"n_samples": 40, "noise": 0.2}}]
    cfg["methods"] = [{"name": "svm", "family": "svm_rbf", "grid": {}}, {"name": "rf", "family": "random_forest",
                                                                        "grid": {}}]
    outcome = run_experiment(load_config(write_config(cfg)), out_dir=tmp_path, progress=False)
    assert outcome.counts["ok"] == 2
    row = next(r for r in ResultStore(tmp_path).rows() if r["method"] == "svm")
    surf = row["surface"]
    assert "y" not in surf and len(surf["x"]) == len(surf["z"]) > 100 and len(surf["train_x"]) == row["n_train"]
    assert min(surf["x"]) < min(x[0] for x in surf["train_x"]) and np.all(np.diff(surf["x"]) > 0)
    written = build_report(tmp_path, formats=["md"])
    assert {"surface_sine1d.png", "surface_sine1d.svg"} <= {p.name for p in written}
