"""Report and check on a hand-made fixture whose numbers are computed by hand."""
from __future__ import annotations

import json
import math
import shutil

import pytest
import yaml
from typer.testing import CliRunner

from tests.conftest import ROOT
from tkbench.bench.plan import make_plan
from tkbench.bench.store import ResultStore
from tkbench.cli import app
from tkbench.config import load_config
from tkbench.report.aggregate import load_results, summarize
from tkbench.report.build import build_report

ACC = {"svm": [70.0, 72.0, 74.0], "rf": [60.0, 65.0, 70.0]}   # liver: svm mean 72 (std 2), rf 65 (std 5)
MSE = {"svm": [1.0, 2.0, None], "rf": [4.0, 4.0, 4.0]}         # airfoil: svm mean 1.5 (std 0.7071), 1 failed
FIT = {"svm": 0.5, "rf": 2.0}


@pytest.fixture
def fixture_results(tmp_path):
    ref = tmp_path / "paper.yaml"
    ref.write_text(yaml.safe_dump({"source": "paper", "table": "Table 9", "results": {
        "liver": {"svm_paper": {"accuracy": [71.0, 1.5], "time": [3.0, 0.1]}},
        "airfoil": {"rf": {"mse": [5.0, 0.5]}}}}))
    cfg = {"name": "fixture", "reference": "paper.yaml", "protocol": {"splits": 3, "seed": 1},
           "datasets": ["liver", "airfoil"],
           "methods": [{"name": "svm", "family": "svm_rbf", "reference": "svm_paper"},
                       {"name": "rf", "family": "random_forest"}],
           "notes": ["hand-made fixture"]}
    path = tmp_path / "fixture.yaml"
    path.write_text(yaml.safe_dump(cfg))
    exp = load_config(path)
    out = tmp_path / "results"
    store = ResultStore(out)
    store.save_config(path.read_text())
    # as `tkbench run` does: remember where the config was, so "paper.yaml" resolves beside it
    (out / "meta.json").write_text(json.dumps({"config_source": "../fixture.yaml"}))
    for spec in make_plan(exp):
        row = {"key": spec.key, "dataset": spec.label, "method": spec.method, "split": spec.split,
               "task": spec.task, "status": "ok", "error": None, "fit_seconds": FIT[spec.method] * (1 + spec.split),
               "cv_seconds": 1.0, "predict_seconds": 0.01}
        if spec.task == "classification":
            row.update(metric="accuracy", accuracy=ACC[spec.method][spec.split])
        else:
            value = MSE[spec.method][spec.split]
            if value is None:
                row.update(status="failed", error="RuntimeError: boom", fit_seconds=None)
            row.update(metric="mse", mse=value)
        store.write_row(row)
    return out


def test_summary_equals_hand_computation(fixture_results):
    s = summarize(load_results(fixture_results)).set_index(["dataset", "method"])
    assert s.loc[("liver", "svm"), "metric_mean"] == pytest.approx(72.0)
    assert s.loc[("liver", "svm"), "metric_std"] == pytest.approx(2.0)
    assert s.loc[("liver", "rf"), "metric_std"] == pytest.approx(5.0)
    assert s.loc[("airfoil", "svm"), "metric_mean"] == pytest.approx(1.5)
    assert s.loc[("airfoil", "svm"), "metric_std"] == pytest.approx(0.5 ** 0.5)
    assert s.loc[("airfoil", "svm"), "n_ok"] == 2 and s.loc[("airfoil", "svm"), "n_failed"] == 1
    assert s.loc[("liver", "svm"), "fit_mean"] == pytest.approx(1.0)  # 0.5, 1.0, 1.5
    assert s.loc[("liver", "svm"), "best"] and not s.loc[("liver", "rf"), "best"]
    assert s.loc[("airfoil", "svm"), "best"]  # lower MSE wins


def test_report_notes_training_sizes_that_differ_from_the_papers_table(fixture_results):
    """Paper 003 says 80/20 but its Table 2 lists m = 1300, m_t = 203 on Airfoil (1503 rows): the report prints
    our sizes beside the table's where they differ by more than 2 %, and stays silent where they agree."""
    ref = fixture_results.parent / "paper.yaml"
    data = yaml.safe_load(ref.read_text())
    data["datasets"] = {"liver": {"m": 276, "m_test": 69}, "airfoil": {"m": 1300, "m_test": 203}}
    ref.write_text(yaml.safe_dump(data))
    for path in (fixture_results / "rows").glob("*.json"):
        row = json.loads(path.read_text())
        row["n_train"], row["n_test"] = (276, 69) if row["dataset"] == "liver" else (1202, 301)
        path.write_text(json.dumps(row))
    build_report(fixture_results, formats=["md"])
    md = (fixture_results / "report" / "report.md").read_text()
    assert ("Training / test sizes differ from the paper's table (paper Table 9): airfoil m = 1202, m_t = 301 "
            "(paper 1300, 203). Ours split every dataset by the protocol's test fraction 0.2.") in md
    assert "liver m = 276" not in md


def test_report_tables_in_three_formats(fixture_results):
    written = build_report(fixture_results)
    md = (fixture_results / "report" / "report.md").read_text()
    assert "| liver | svm | **72.00 ± 2.00** | 71.00 ± 1.50 | +1.00 | within 1 std |" in md
    assert "| liver | rf | 65.00 ± 5.00 |" in md
    assert "| airfoil | svm | **1.500 ± 0.707** |" in md
    assert "| airfoil | rf | 4.000 ± 0.000 | 5.000 ± 0.500 | -1.000 | better |" in md
    assert "1 failed" in md and "RuntimeError: boom" in md and "2/3" in md
    assert "hand-made fixture" in md and "Paper numbers: paper Table 9" in md
    tex = (fixture_results / "report" / "report.tex").read_text()
    assert r"\textbf{72.00 $\pm$ 2.00}" in tex and r"\begin{tabular}" in tex
    html = (fixture_results / "report" / "report.html").read_text()
    assert '<td class="num"><b>72.00 ± 2.00</b></td>' in html
    # issue 48: text left, numbers right, failed runs marked, figures captioned in words
    assert '<td class="text">liver</td>' in html and '<td class="num bad">1 failed' in html
    assert 'class="num bad">2/3</td>' in html and "<figcaption>Critical-difference diagram" in html
    assert {p.name for p in written} >= {"report.md", "report.tex", "report.html"}
    rows = (fixture_results / "report" / "rows.csv").read_text()
    assert rows.count("\n") == 13  # header + 12 rows


def test_verdict_against_the_paper():
    from tkbench.report.tables import verdict

    assert verdict(1.0, 1.5, "accuracy") == "within 1 std" and verdict(-1.5, 1.5, "accuracy") == "within 1 std"
    assert verdict(2.0, 1.5, "accuracy") == "better" and verdict(-2.0, 1.5, "accuracy") == "worse"
    assert verdict(-1.0, 0.5, "mse") == "better" and verdict(1.0, 0.5, "mse") == "worse"
    assert verdict(float("nan"), 1.0, "mse") == "-"
    # issue 48: a paper with no std (paper 004's digits, MNIST 4 vs 7: 0.20 against 0.20) gets no better / worse
    assert verdict(0.004, float("nan"), "accuracy") == "paper gives no std: see Δ"
    assert verdict(-3.0, float("nan"), "mse") == "paper gives no std: see Δ"


def _write_rows(store, exp, value, n_train=400, n_test=100):
    from tkbench.bench.plan import make_plan

    for spec in make_plan(exp):
        store.write_row({"key": spec.key, "dataset": spec.label, "method": spec.method, "split": spec.split,
                         "task": "classification", "status": "ok", "error": None, "fit_seconds": 1.0,
                         "cv_seconds": 0.0, "predict_seconds": 0.1, "n_train": n_train, "n_test": n_test,
                         "accuracy": value(spec)})


def test_one_run_cells_show_n_and_no_std_and_tied_ranks_are_all_bold(results_folder):
    cfg = {"name": "onedraw", "protocol": {"splits": 1, "seed": 1}, "datasets": ["liver", "pima"],
           "methods": [{"name": "a", "family": "svm_rbf"}, {"name": "b", "family": "random_forest"},
                       {"name": "c", "family": "krr_rbf"}]}
    exp, store, out = results_folder(cfg)
    _write_rows(store, exp, lambda spec: {"a": 80.0, "b": 80.0, "c": 70.0}[spec.method])
    text = build_report(out, ["md"])[0].read_text()
    assert "| liver | a | **80.00 (n = 1)** |" in text and "| liver | b | **80.00 (n = 1)** |" in text
    assert "± 0.00" not in text
    assert "| a | **1.50** | 2 |" in text and "| b | **1.50** | 2 |" in text and "| c | 3.00 | 0 |" in text
    # one split each: no p-value, no verdict
    assert "| liver | c | a | 1 | -10 | undefined | 1.000 | undefined: 1 paired splits" in text


def test_significance_verdicts_follow_the_t_statistic_and_refuse_degenerate_data(results_folder):
    cfg = {"name": "sigdir", "protocol": {"splits": 6, "seed": 1}, "datasets": ["liver"],
           "methods": [{"name": "a", "family": "svm_rbf"}, {"name": "b", "family": "random_forest"}]}
    exp, store, out = results_folder(cfg)
    # b is 0.5 below a on every split (zero variance of the differences): no p-value, however many splits
    _write_rows(store, exp, lambda spec: 70.0 + spec.split + (0.5 if spec.method == "a" else 0.0))
    text = build_report(out, ["md"])[0].read_text()
    assert "| liver | b | a | 6 | -0.5 | undefined |" in text and "zero variance" in text
    assert "0.0e+00" not in text


def test_a_mean_of_too_few_splits_is_compared_with_the_best_never_used_as_it(results_folder):
    """A cell with one finished split (a sweep under way) may have the best mean of its dataset: it is then compared
    with the best of the methods that have at least 5 splits, and the others keep their verdicts against that,
    instead of all reading 'undefined: 1 paired splits' against a single draw."""
    cfg = {"name": "fewbest", "protocol": {"splits": 6, "seed": 1}, "datasets": ["liver"],
           "methods": [{"name": "a", "family": "svm_rbf"}, {"name": "b", "family": "random_forest"},
                       {"name": "c", "family": "krr_rbf"}]}
    exp, store, out = results_folder(cfg)
    noise = [0.3, -0.2, 0.1, -0.4, 0.2, 0.0]
    _write_rows(store, exp, lambda spec: {"a": 75.0 + noise[spec.split], "b": 70.0 - noise[spec.split] * 2,
                                          "c": 90.0}[spec.method])
    for row in store.rows():  # c has finished split 0 only
        if row["method"] == "c" and row["split"] > 0:
            (out / "rows" / f"{row['key']}.json").unlink()
    text = build_report(out, ["md"])[0].read_text()
    assert "| liver | c | a | 1 | +14.7 | undefined | 1.000 | undefined: 1 paired splits" in text
    line = next(x for x in text.splitlines() if x.startswith("| liver | b | a | 6 |"))
    assert line.endswith("| worse |")
    assert "| liver | a | c |" not in text and "| liver | b | c |" not in text
    assert "a mean of fewer is compared with it, never used as the reference" in text


def test_check_passes_and_fails(fixture_results, tmp_path):
    runner = CliRunner()
    baseline = tmp_path / "baseline.json"
    made = runner.invoke(app, ["baseline", str(fixture_results), "-o", str(baseline)])
    assert made.exit_code == 0, made.output
    ok = runner.invoke(app, ["check", str(fixture_results), "--baseline", str(baseline)])
    assert ok.exit_code == 0, ok.output
    assert "passed" in ok.output

    data = json.loads(baseline.read_text())
    entry = next(e for e in data["entries"] if e["dataset"] == "liver" and e["method"] == "svm")
    entry["mean"] += 1.5  # edited upward beyond the 1-point tolerance
    baseline.write_text(json.dumps(data))
    bad = runner.invoke(app, ["check", str(fixture_results), "--baseline", str(baseline)])
    assert bad.exit_code == 1 and "regression" in bad.output

    entry["mean"] -= 1.0  # within tolerance again (72.5 - 1 < 72)
    baseline.write_text(json.dumps(data))
    assert runner.invoke(app, ["check", str(fixture_results), "--baseline", str(baseline)]).exit_code == 0

    mse_entry = next(e for e in data["entries"] if e["dataset"] == "airfoil" and e["method"] == "rf")
    mse_entry["mean"] = 3.5  # ours (4.0) is more than 5% worse than 3.5
    baseline.write_text(json.dumps(data))
    assert runner.invoke(app, ["check", str(fixture_results), "--baseline", str(baseline)]).exit_code == 1


def test_check_fails_when_runs_go_missing(fixture_results, tmp_path):
    baseline = tmp_path / "baseline.json"
    CliRunner().invoke(app, ["baseline", str(fixture_results), "-o", str(baseline)])
    victim = next((fixture_results / "rows").glob("*.json"))
    victim.unlink()
    result = CliRunner(env={"COLUMNS": "250"}).invoke(app, ["check", str(fixture_results), "--baseline", str(baseline)])
    assert result.exit_code == 1 and "only 2 ok runs" in result.output


def test_check_rejects_a_bad_baseline(fixture_results, tmp_path):
    # exit 2: a file that is not what it should be is bad input; 1 is kept for a real regression
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    result = CliRunner().invoke(app, ["check", str(fixture_results), "--baseline", str(bad)])
    assert result.exit_code == 2 and "not a tkbench baseline" in result.output


def test_report_of_a_non_results_folder(tmp_path):
    result = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2 and "not a results folder" in result.output


def test_stale_rows_are_ignored(fixture_results):
    source = next((fixture_results / "rows").glob("*.json"))
    stale = json.loads(source.read_text())
    stale["key"] = "0" * 64  # a row of a run the config no longer plans
    (fixture_results / "rows" / f"{stale['key']}.json").write_text(json.dumps(stale))
    shutil.copy(source, fixture_results / "rows" / ("1" * 64 + ".json"))  # a file whose name is not its key
    res = load_results(fixture_results)
    assert res.stale == 1 and len(res.rows) == 12


def test_report_all_collects_every_reproduction(write_config, tmp_path):
    import shutil

    from tests.conftest import tiny_config
    from tkbench.bench.runner import run_experiment
    from tkbench.config import load_config
    from tkbench.report.reproduction import build_all

    root = tmp_path / "repo"
    (root / "configs").mkdir(parents=True)
    cfg = tiny_config(name="colbert2020_table1")
    cfg["protocol"]["splits"] = 1
    path = write_config(cfg, "colbert2020_table1.yaml")
    shutil.copy(path, root / "configs" / "colbert2020_table1.yaml")
    (root / "configs" / "tkl2021_table2.yaml").write_text("name: tkl2021_table2\n")  # written, never run
    (root / "configs" / "tkl2021_scaling.yaml").write_text("name: tkl2021_scaling\n")
    run_experiment(load_config(root / "configs" / "colbert2020_table1.yaml"),
                   out_dir=root / "results" / "colbert2020_table1", progress=False)
    md_path, html_path, *_ = build_all(root, root / "docs")
    md = md_path.read_text()
    assert "## Paper 000 (Colbert & Peet 2020), Table 1" in md and "| liver | svm |" in md
    assert "Partial" not in md  # every planned run finished
    from tkbench.bench.store import ResultStore

    store = ResultStore(root / "results" / "colbert2020_table1")
    row = store.rows()[0]
    for status, partial in (("failed", False), ("crashed", True)):  # a failure is an outcome; a crash is retried
        store.write_row({**row, "status": status})
        assert ("Partial" in build_all(root, root / "docs")[0].read_text()) is partial
    store.write_row(row)
    cfg["protocol"]["splits"] = 2  # now one more split is planned than has run
    cfg["notes"] = ["A deviation written into the config after the run."]
    shutil.copy(write_config(cfg, "colbert2020_table1.yaml"), root / "configs" / "colbert2020_table1.yaml")
    md = build_all(root, root / "docs")[0].read_text()
    assert "**Partial: 4 of 8 runs finished so far**" in md and "--reuse results/mkl_uci" in md
    assert "- A deviation written into the config after the run." in md  # the config under configs/ is reported
    assert "| 2/2 | - |" not in md and "1 missing" in md
    assert "Not run yet: `tkbench run configs/tkl2021_table2.yaml -j 2`." in md
    assert "Not run yet: `tkbench run configs/tkl2021_scaling.yaml -j 1 --reuse" in md  # timings: one at a time
    assert "Not written yet" in md  # e.g. the density figure without a config here
    folder = root / "docs" / "reproduction" / "colbert2020_table1"
    assert (folder / "report.md").exists()
    # a figure the report no longer draws is removed from the generated folder; the ones it draws stay
    drawn = sorted(p.name for p in folder.iterdir() if p.suffix in (".png", ".svg"))
    (folder / "critical_difference_of_an_older_build.png").write_bytes(b"stale")
    (folder / "notes.txt").write_text("not a figure: kept")
    build_all(root, root / "docs")
    assert sorted(p.name for p in folder.iterdir() if p.suffix in (".png", ".svg")) == drawn
    assert (folder / "notes.txt").exists()
    page = html_path.read_text()
    assert '<h2 id="tkl2021_table2">Paper 003, Table 2' in page
    assert '<nav class="toc" id="contents">' in page and '<a href="#tkl2021_table2">Paper 003, Table 2' in page
    # issue 49: the index links each config's report instead of embedding it (each was committed twice)
    assert '<a href="reproduction/colbert2020_table1/report.html"><b>Open the report</b></a>' in page
    assert "<table>" not in page


def test_report_notes_name_per_dataset_params_and_grids(write_config, tmp_path):
    from tests.conftest import tiny_config
    from tkbench.bench.runner import run_experiment
    from tkbench.config import load_config

    cfg = tiny_config(name="perds")
    cfg["protocol"]["splits"] = 1
    cfg["datasets"] = ["liver"]
    cfg["methods"] = [{"name": "svm", "family": "svm_rbf", "grid": {"C": [1.0]},
                       "per_dataset": {"liver": {"cache_size": 300}},
                       "per_dataset_grid": {"liver": {"C": [10.0], "gamma": [0.1]}}}]
    run_experiment(load_config(write_config(cfg)), out_dir=tmp_path, progress=False)
    build_report(tmp_path, formats=["md"])
    md = (tmp_path / "report" / "report.md").read_text()
    assert "svm on liver: cache_size=300 (instead of the method's params)" in md
    assert "svm on liver: CV grid C in [10.0], gamma in [0.1] (instead of the method's grid)" in md


def test_every_published_reproduction_has_its_rows_in_the_checkout():
    """docs/reproduction/<name> is regenerated from results/<name>: in a clean clone (CI) the rows and the config
    copy must be there, i.e. committed and not git-ignored (investigate_gas_turbine_size once was)."""
    root = ROOT
    published = sorted(p.name for p in (root / "docs" / "reproduction").iterdir() if p.is_dir())
    assert published
    for name in published:
        folder = root / "results" / name
        assert (folder / "config.yaml").is_file(), f"results/{name}/config.yaml missing (git-ignored?)"
        assert any((folder / "rows").glob("*.json")), f"results/{name}/rows has no rows (git-ignored?)"


def test_error_percent_reference_and_evaluation_table(tmp_path, results_folder):
    """A paper that prints error % is compared in error %; the evaluation table shows test ms and model size
    beside the paper's, and the speed-up of one method over another is a ratio of our own means."""
    (tmp_path / "err.yaml").write_text(yaml.safe_dump({"source": "p", "table": "T2", "metric": "error_percent",
                                                       "results": {"liver": {"svm": [27.0, 1.0, 2.0]}}}))
    (tmp_path / "ev.yaml").write_text(yaml.safe_dump({"source": "p", "table": "T3", "metric": "evaluation",
                                                      "results": {"liver": {"svm": {"test_ms": 8.0, "nsv": 50.0},
                                                                            "rf": {"test_ms": 2.0}}}}))
    cfg = {"name": "evalfix", "reference": "err.yaml", "protocol": {"splits": 2, "seed": 1}, "datasets": ["liver"],
           "methods": [{"name": "svm", "family": "svm_rbf"}, {"name": "rf", "family": "random_forest"}],
           "evaluation": {"reference": "ev.yaml", "speedup": ["rf", "svm"]}}
    exp, store, out = results_folder(cfg)
    for spec in make_plan(exp):
        svm = spec.method == "svm"
        store.write_row({"key": spec.key, "dataset": spec.label, "method": spec.method, "split": spec.split,
                         "task": "classification", "status": "ok", "error": None, "fit_seconds": 1.0,
                         "cv_seconds": 1.0, "metric": "accuracy", "accuracy": 70.0 + 2 * spec.split, "n_test": 69,
                         "predict_seconds": (0.010 if svm else 0.002) * (1 + spec.split),
                         "diagnostics": {"n_support": 40 + 2 * spec.split, "search_seconds": 0.25 * (1 + spec.split)}
                         if svm else {}})
    text = build_report(out, ["md"])[0].read_text()
    assert "Test-set error (%) (lower is better)" in text
    assert "| liver | svm | **29.00 ± 1.41** | 27.00 ± 1.00 | +2.00 | worse |" in text  # 100 - (70, 72)
    assert "Fit time below the paper's on 1 of 1 rows (0 of them with a metric within" in text  # 1 s < 2 s
    assert "| liver | svm | 69 | 15.00 (8.00) | 41.0 (50.0) | - | - |" in text
    assert "| liver | rf | 69 | 3.00 (2.00) | - | - | - |" in text
    assert "| liver | 5.0x | 4.0x |" in text  # 15 / 3 ms ours, 8 / 2 ms the paper's
    assert "| liver | svm | 1 | 0.375 (38 %) |" in text  # where the time goes: the solver's own timer, mean


def test_evaluation_section_is_validated(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"name": "bad", "datasets": ["liver"], "methods": [{"name": "svm",
                                    "family": "svm_rbf"}], "evaluation": {"speedup": ["svm", "nope"]}}))
    result = CliRunner().invoke(app, ["run", str(path), "--dry-run"])
    assert result.exit_code == 2
    assert "evaluation.speedup" in result.output and "nope" in result.output


def test_train_test_table_in_error_percent(tmp_path):
    """Section 9.4's table: train and test error with the gap, beside the paper's (error % given without std)."""
    import pandas as pd

    from tkbench.report.reference import Reference
    from tkbench.report.tables import train_test_table

    ref = tmp_path / "r.yaml"
    ref.write_text("metric: error_percent\nresults:\n  heart: {CM: {error: [15.5, .nan], train_error: [14.0, .nan]}}\n")
    summary = pd.DataFrame([{"dataset": "heart", "method": "CM", "metric": "accuracy", "metric_mean": 80.0,
                             "metric_std": 2.0, "train_accuracy_mean": 95.0, "train_accuracy_std": 1.0}])
    table = train_test_table(summary, Reference(ref), {"datasets": {}, "methods": {}})
    assert table.columns[2:] == ["Train error (%)", "Test error (%)", "Gap", "Paper train error (%)",
                                 "Paper test error (%)"]
    assert [c.text for c in table.rows[0]] == ["heart", "CM", "5.00 ± 1.00", "20.00 ± 2.00", "+15.00", "14.00",
                                               "15.50"]
    assert train_test_table(summary.drop(columns=["train_accuracy_mean"]), None, {"datasets": {}, "methods": {}}) \
        is None


def test_ls_error_metric_tables_every_task_lower_is_better(tmp_path, results_folder):
    """metric: ls_error reports the least-squares error (paper 002 Table 1) for classification and regression
    alike, lower is better, beside a bare [mean, std] reference."""
    (tmp_path / "ls.yaml").write_text(yaml.safe_dump({"source": "p", "table": "T1", "metric": "least_squares",
                                                      "results": {"liver": {"krr": [0.50, 0.02]},
                                                                  "airfoil": {"krr": [0.02, 0.001]}}}))
    cfg = {"name": "lsfix", "reference": "ls.yaml", "metric": "ls_error", "protocol": {"splits": 2, "seed": 1},
           "datasets": ["liver", "airfoil"], "methods": [{"name": "krr", "family": "krr_rbf"},
                                                         {"name": "rf", "family": "random_forest", "grid": {}}]}
    exp, store, out = results_folder(cfg)
    values = {("liver", "krr"): [0.48, 0.50], ("liver", "rf"): [0.60, 0.62],
              ("airfoil", "krr"): [0.030, 0.032], ("airfoil", "rf"): [0.010, 0.012]}
    for spec in make_plan(exp):
        store.write_row({"key": spec.key, "dataset": spec.label, "method": spec.method, "split": spec.split,
                         "task": spec.task, "status": "ok", "error": None, "fit_seconds": 1.0, "cv_seconds": 1.0,
                         "predict_seconds": 0.1, "accuracy": 50.0, "mse": 9.0,
                         "ls_error": values[(spec.label, spec.method)][spec.split]})
    s = summarize(load_results(out)).set_index(["dataset", "method"])
    assert set(s["metric"]) == {"ls_error"}
    assert s.loc[("liver", "krr"), "metric_mean"] == pytest.approx(0.49) and s.loc[("liver", "krr"), "best"]
    assert s.loc[("airfoil", "rf"), "best"] and not s.loc[("airfoil", "krr"), "best"]
    text = build_report(out, ["md"])[0].read_text()
    assert "Test least-squares error (labels scaled to [-1, 1], decisions clipped) (lower is better)" in text
    assert "| liver | krr | **0.49000 ± 0.01414** | 0.50000 ± 0.02000 | -0.01000 | within 1 std |" in text
    assert "| airfoil | krr | 0.03100 ± 0.00141 | 0.02000 ± 0.00100 | +0.01100 | worse |" in text


def test_scaling_slope_per_solver_iteration(tmp_path):
    """The slope of the time per solver iteration separates an iterative solver's cost per iteration (here m^1.5)
    from its iteration count (here falling with m); it is missing when a run does not record its iterations."""
    import pandas as pd

    from tkbench.report.plots import scaling_plots

    iters = {500: 8, 1000: 6, 2000: 4, 4000: 2}
    rows = pd.DataFrame([{"dataset": "d", "method": "fw", "status": "ok", "size": m, "n_train": m, "repeat": r,
                          "fit_seconds": 1e-4 * iters[m] * m ** 1.5, "diagnostics": {"n_iter": iters[m]}}
                         for m in iters for r in range(2)])
    _, slopes = scaling_plots(rows, tmp_path)
    assert slopes["per_iteration_slope"].iloc[0] == pytest.approx(1.5)
    assert slopes["slope"].iloc[0] < 1.5  # the total time grows more slowly: fewer iterations at larger m
    rows.at[0, "diagnostics"] = {}
    _, slopes = scaling_plots(rows, tmp_path)
    assert slopes["per_iteration_slope"].isna().all()


def test_a_curve_against_the_second_size_axis_keeps_its_look_on_every_dataset(tmp_path, monkeypatch):
    """Plots against a varied size (q, say) draw one curve per (method, m). A curve used to take the look of its
    position in each plot, so "b (m=100)" had a's colour on the dataset where a did not run."""
    import matplotlib.axes
    import pandas as pd

    from tkbench.report.plots import scaling_plots

    rows = pd.DataFrame([{"dataset": ds, "method": method, "status": "ok", "size": 100, "n_train": 100, "repeat": 0,
                          "vary_param": "degree", "vary_value": d, "size_value": d, "fit_seconds": 0.1 * d}
                         for ds, methods in (("d1", ("a", "b")), ("d2", ("b",))) for method in methods
                         for d in (1, 2, 4)])
    drawn: dict[str, set] = {}
    original = matplotlib.axes.Axes.loglog

    def record(self, *args, **kwargs):
        drawn.setdefault(kwargs.get("label", "").split(":")[0], set()).add((kwargs.get("color"), kwargs.get("marker")))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "loglog", record)
    scaling_plots(rows, tmp_path)
    assert len(drawn["b (m=100)"]) == 1 and drawn["b (m=100)"] != drawn["a (m=100)"]


def test_reference_evaluation_measures_skip_accuracy_pairs():
    """An evaluation reference may be the accuracy table's own file (paper 004's digits): its [mean, std] pairs are
    skipped, not converted (the report used to fail there), and test seconds become test milliseconds."""
    from tkbench.report.evaluation import reference_measures

    entry = {"error": [3.4, float("nan")], "time": [7200.0, float("nan")], "test_seconds": 1.3, "m": 244, "nsv": 790}
    assert reference_measures(entry) == {"test_seconds": 1.3, "m": 244.0, "nsv": 790.0, "test_ms": 1300.0}
    assert reference_measures({"test_ms": 13.4, "m": 13.6}) == {"test_ms": 13.4, "m": 13.6}
    assert reference_measures(None) == {}


def test_selection_table_shows_each_candidates_held_out_risk_and_the_choice(tmp_path, results_folder):
    """A fit that picks among candidates on held-out data (HGK's architecture by the D3 error) reports its
    choice per cell, each candidate's mean held-out risk and the candidates' total time; a CV over the
    architecture (HGK_cv) stands beside it with its CV errors and time; one-candidate fits are left out."""
    cfg = {"name": "selfix", "metric": "ls_error", "protocol": {"splits": 2, "seed": 1}, "datasets": ["airfoil"],
           "methods": [{"name": "hgk", "family": "hgk", "grid": {}},
                       {"name": "one", "family": "hgk", "params": {"M": 2}, "grid": {}},
                       {"name": "cv", "family": "hgk", "grid": {"architecture": ["inhomogeneous", "depth2:4"]}}]}
    exp, store, out = results_folder(cfg)
    for spec in make_plan(exp):
        sel = [{"architecture": "inhomogeneous", "d3_risk": 0.020 + 0.002 * spec.split, "seconds": 10.0},
               {"architecture": "depth2:4", "d3_risk": 0.018 + 0.004 * spec.split, "seconds": 30.0}]
        if spec.method == "one":
            sel = sel[:1]
        chosen = min(sel, key=lambda c: c["d3_risk"])["architecture"]
        row = {"key": spec.key, "dataset": spec.label, "method": spec.method, "split": spec.split,
               "task": spec.task, "status": "ok", "error": None, "fit_seconds": 40.0, "cv_seconds": 0.0,
               "predict_seconds": 0.1, "mse": 9.0, "ls_error": 0.02,
               "diagnostics": {"architecture": chosen, "selection": sel, "lambda_grid": [1e-8, 1e-6, 1e-4],
                               "lambda": [1e-8 if spec.method == "hgk" else 1e-6]}}
        if spec.method == "cv":  # the architecture by 5-fold CV: one candidate per final fit, the CV's scores
            scores = [{"params": {"architecture": "inhomogeneous"}, "mean": -0.030 - 0.002 * spec.split},
                      {"params": {"architecture": "depth2:4"}, "mean": -0.025}]
            row.update(cv_seconds=100.0 + 20 * spec.split, chosen_params={"architecture": "depth2:4"},
                       cv={"scores": scores},
                       diagnostics={"architecture": "depth2:4", "selection": sel[1:] + [  # its lambda grids by D3
                           {"architecture": "depth2:4 [lambda 0.0001-0.1]", "d3_risk": 0.05, "seconds": 9.0}]})
        store.write_row(row)
    text = build_report(out, ["md"])[0].read_text()
    assert "Candidates chosen on held-out data" in text
    assert "| Dataset | Method | Held out | Chosen (runs) | inhomogeneous | depth2:4 | All candidates (s) |" in text
    # split 0 chose depth2:4 (0.018 < 0.020), split 1 the inhomogeneous kernel (0.022 < 0.022 + 0.002)
    assert "| airfoil | hgk | D3 | inhomogeneous (1), depth2:4 (1) | **0.02100** | **0.02000** | 40 |" in text
    assert "| airfoil | cv | 5-fold CV | depth2:4 (2) | 0.03100 | **0.02500** | 110 |" in text
    # Algorithm 1's own lambda grid (reported beside the chosen lambda): at its floor in both runs of "hgk"
    assert ("hgk on airfoil: the solver's own lambda search chose its grid's smallest value (1e-08) in 2 of 2 "
            "runs") in text
    assert "one on airfoil: the solver's own lambda" not in text  # inside the grid
    section = text.split("Candidates chosen on held-out data")[1].split("###")[0]
    assert "| airfoil | hgk |" in section and "| airfoil | one |" not in section


def test_selection_table_marks_a_cv_candidate_that_failed_and_says_why(tmp_path, results_folder):
    """A CV candidate whose fit raised on a fold has no mean (NaN): the table says "failed" (or in how many of the
    runs it failed) instead of a silent "-", and a note under it gives the reason the row's CV recorded, or says
    that a row from before the reasons were kept has none."""
    cfg = {"name": "selfail", "metric": "ls_error", "protocol": {"splits": 2, "seed": 1}, "datasets": ["airfoil"],
           "methods": [{"name": "cv", "family": "hgk", "grid": {"architecture": ["inhomogeneous", "depth2:4"]}},
                       {"name": "old", "family": "hgk",
                        "grid": {"architecture": ["inhomogeneous", "depth2:4", "depth2:6"]}}]}
    exp, store, out = results_folder(cfg)
    for spec in make_plan(exp):
        failed = spec.method == "old" or spec.split == 0  # "cv": inhomogeneous failed on split 0's CV only
        scores = [{"params": {"architecture": "inhomogeneous"}, "mean": math.nan if failed else -0.030},
                  {"params": {"architecture": "depth2:4"}, "mean": -0.025}]
        if spec.method == "old":
            scores.append({"params": {"architecture": "depth2:6"}, "mean": -0.027})
        cv = {"scores": scores, "failed_candidates": int(failed)}
        if spec.method == "cv":
            cv["errors"] = ["{'architecture': 'inhomogeneous'}: LinAlgError: 3-th leading minor not positive"] \
                if failed else []
        store.write_row({"key": spec.key, "dataset": spec.label, "method": spec.method, "split": spec.split,
                         "task": spec.task, "status": "ok", "error": None, "fit_seconds": 40.0,
                         "cv_seconds": 100.0, "predict_seconds": 0.1, "mse": 9.0, "ls_error": 0.02, "cv": cv,
                         "chosen_params": {"architecture": "depth2:4"}, "diagnostics": {"architecture": "depth2:4"}})
    text = build_report(out, ["md"])[0].read_text()
    section = text.split("Candidates chosen on held-out data")[1].split("###")[0]
    assert "| airfoil | cv | 5-fold CV | depth2:4 (2) | 0.03000 (failed in 1 of 2) | **0.02500** | - | 100 |" \
        in section
    assert "| airfoil | old | 5-fold CV | depth2:4 (2) | failed | **0.02500** | 0.02700 | 100 |" in section
    assert ("cv on airfoil: a CV candidate failed on a fold, so it has no mean and was not chosen: "
            "{'architecture': 'inhomogeneous'}: LinAlgError: 3-th leading minor not positive") in section
    assert "old on airfoil: a CV candidate failed on a fold" in section and "reason not recorded" in section


def test_selection_table_gives_the_chosen_architectures_re_runs_one_column(tmp_path, results_folder):
    """HGK's lambda_grids: the chosen architecture's re-run with a further grid is labelled "<arch> [lambda a-b]";
    the table puts those of every architecture in one column "chosen [lambda a-b]" and counts the fits' own
    ``selected`` label."""
    cfg = {"name": "selgrid", "metric": "ls_error", "protocol": {"splits": 2, "seed": 1}, "datasets": ["airfoil"],
           "methods": [{"name": "hgk", "family": "hgk", "grid": {}}]}
    exp, store, out = results_folder(cfg)
    for spec in make_plan(exp):
        arch = ["inhomogeneous", "depth2:4"][spec.split]
        sel = [{"architecture": "inhomogeneous", "d3_risk": 0.020, "seconds": 10.0},
               {"architecture": "depth2:4", "d3_risk": 0.020 + 0.002 * (1 - 2 * spec.split), "seconds": 30.0},
               {"architecture": f"{arch} [lambda 0.0001-0.1]", "d3_risk": 0.010 + 0.020 * spec.split,
                "seconds": 20.0}]
        selected = sel[2]["architecture"] if spec.split == 0 else "depth2:4"
        store.write_row({"key": spec.key, "dataset": spec.label, "method": spec.method, "split": spec.split,
                         "task": spec.task, "status": "ok", "error": None, "fit_seconds": 60.0, "cv_seconds": 0.0,
                         "predict_seconds": 0.1, "mse": 9.0, "ls_error": 0.02,
                         "diagnostics": {"architecture": arch, "selected": selected, "selection": sel}})
    text = build_report(out, ["md"])[0].read_text()
    assert ("| Dataset | Method | Held out | Chosen (runs) | inhomogeneous | depth2:4 | chosen [lambda 0.0001-0.1] | "
            "All candidates (s) |") in text
    assert ("| airfoil | hgk | D3 | depth2:4 (1), inhomogeneous [lambda 0.0001-0.1] (1) | 0.02000 | **0.02000** | "
            "**0.02000** | 60 |") in text


def test_not_run_methods_show_the_papers_numbers_beside_each_data_set():
    """A reference method we do not implement (config `not_run`, paper 002's HKL) keeps its paper row after each
    of our data sets' rows, marked 'not run', and under the no-data sets marked 'no data'."""
    import pandas as pd

    from tkbench.report.reference import Reference
    from tkbench.report.tables import metric_tables

    ref = Reference(ROOT / "configs" / "reference" / "hgk2016_table1.yaml")
    base = {"metric": "ls_error", "metric_std": 0.001, "best": False, "fit_mean": 1.0, "fit_std": 0.1,
            "cv_mean": 5.0, "n_ok": 1, "planned": 1, "n_failed": 0, "n_timeout": 0, "n_crashed": 0, "n_missing": 0}
    summary = pd.DataFrame([{**base, "dataset": ds, "method": m, "metric_mean": 0.1}
                            for ds in ("bank", "cadata") for m in ("SVM", "RF")])
    names = {"datasets": {"bank": "bank", "cadata": "cadata"}, "methods": {"SVM": "SVM", "RF": "RF"}}
    table = metric_tables(summary, ref, names, no_data=["cod"], not_run=["HKL"])[0]
    cells = [[c.text for c in row] for row in table.rows]
    assert [r[:2] for r in cells] == [["bank", "SVM"], ["bank", "RF"], ["bank", "HKL"], ["cadata", "SVM"],
                                      ["cadata", "RF"], ["cadata", "HKL"], ["cod", "SVM"], ["cod", "RF"],
                                      ["cod", "HKL"]]
    assert cells[2][2:4] == ["not run", "0.29387 ± 0.00283"] and cells[2][-1] == "not run"
    assert cells[5][3] == "0.06247 ± 0.00138" and cells[8][2:4] == ["no data", "0.17336 ± 0.00126"]
    plain = metric_tables(summary, ref, names)[0]
    assert [[c.text for c in row][1] for row in plain.rows] == ["SVM", "RF", "SVM", "RF"]
    # a method restricted to other data sets (HGK_cv: cycle only) gets no "no data" row
    restricted = metric_tables(summary, ref, names, no_data=["cod"], only_on={"RF": ["bank", "cadata"]})[0]
    assert [[c.text for c in row][:2] for row in restricted.rows][-1:] == [["cod", "SVM"]]


def test_calibrated_choices_mark_their_cells_and_are_checked(results_folder, write_config):
    from tests.conftest import tiny_config
    from tkbench.config import load_config
    from tkbench.errors import ConfigError

    cfg = {"name": "calib", "protocol": {"splits": 2, "seed": 1}, "datasets": ["liver", "pima"],
           "methods": [{"name": "a", "family": "svm_rbf"}, {"name": "b", "family": "random_forest"}],
           "calibrated": [{"note": "label rule chosen to match the paper's RF", "datasets": ["pima"]},
                          {"note": "b's settings matched to the paper", "methods": ["b"]}]}
    exp, store, out = results_folder(cfg)
    _write_rows(store, exp, lambda spec: 70.0 + spec.split + (spec.method == "a"))
    text = build_report(out, ["md"])[0].read_text()
    assert "| pima | b | 70.50 ± 0.71 [c1][c2] |" in text and "| pima | a | **71.50 ± 0.71 [c1]** |" in text
    assert "| liver | a | **71.50 ± 0.71** |" in text and "| liver | b | 70.50 ± 0.71 [c2] |" in text
    assert "- [c1] calibrated on the paper's own numbers: label rule chosen to match the paper's RF" in text
    with pytest.raises(ConfigError, match=r"calibrated\[0\]\.methods: 'nope'"):
        load_config(write_config(tiny_config(calibrated=[{"note": "x", "methods": ["nope"]}])))


def test_the_rmse_table_lists_only_methods_fitted_to_pm1_labels(results_folder):
    """Issue 48: the RMSE of decision values on +-1 labels was shown for SVMs and forests too (mostly '-' cells)."""
    from tkbench.bench.plan import make_plan

    cfg = {"name": "rmse", "protocol": {"splits": 2, "seed": 1}, "datasets": ["liver"],
           "methods": [{"name": "svm", "family": "svm_rbf"}, {"name": "krr", "family": "krr_rbf"},
                       {"name": "rf", "family": "random_forest"}]}
    exp, store, out = results_folder(cfg)
    for spec in make_plan(exp):
        store.write_row({"key": spec.key, "dataset": spec.label, "method": spec.method, "split": spec.split,
                         "task": "classification", "status": "ok", "error": None, "fit_seconds": 1.0,
                         "cv_seconds": 0.0, "predict_seconds": 0.1, "n_train": 276, "n_test": 69,
                         "accuracy": 70.0, "rmse_pm1": {"svm": 1.3, "krr": 0.9}.get(spec.method)})
    text = build_report(out, ["md"])[0].read_text()
    section = text.split("### Test RMSE of the decision values")[1].split("###")[0]
    assert "| liver | krr | **0.900 ± 0.000** |" in section
    assert "| liver | svm |" not in section and "| liver | rf |" not in section


def test_report_all_writes_the_benchmark_page_with_its_reading_and_counts_budget_cuts_as_finished(write_config,
                                                                                                  tmp_path):
    """docs/BENCHMARK.md (issue 51): the hand-written reading, then each benchmark config's report from its rows;
    a scaling config whose budget left sizes out is complete (those runs never start), not partial."""
    import shutil

    import yaml

    from tests.conftest import tiny_config
    from tkbench.bench.runner import run_experiment
    from tkbench.config import load_config
    from tkbench.report.reproduction import build_all

    root = tmp_path / "repo"
    (root / "configs").mkdir(parents=True)
    (root / "docs").mkdir()
    acc = tiny_config(name="bench_acc")
    acc["protocol"]["splits"] = 2
    scal = tiny_config(name="bench_scal", kind="scaling",
                       scaling={"sizes": [40, 80], "repeats": 1, "test_size": 30, "budget_seconds": 1e-9})
    scal["datasets"] = ["pima"]
    scal["methods"] = [{"name": "rf", "family": "random_forest"}]
    for cfg in (acc, scal):
        shutil.copy(write_config(cfg, f"{cfg['name']}.yaml"), root / "configs" / f"{cfg['name']}.yaml")
        run_experiment(load_config(root / "configs" / f"{cfg['name']}.yaml"),
                       out_dir=root / "results" / cfg["name"], progress=False)
    (root / "docs" / "reading.md").write_text("## What the table shows\n\nA reading written by hand.\n")
    (root / "docs" / "reproduction.yaml").write_text(yaml.safe_dump({
        "papers": {"000": "a paper"}, "entries": [],
        "benchmark": {"reading": "docs/reading.md", "entries": [
            {"config": "bench_acc", "title": "The accuracy suite"},
            {"config": "bench_scal", "title": "The scaling study", "jobs": 1},
            {"config": "bench_missing", "title": "Not yet"}]}}))
    build_all(root, root / "docs")
    md = (root / "docs" / "BENCHMARK.md").read_text()
    assert md.startswith("# The kernel-learning benchmark") and "A reading written by hand." in md
    assert "## The accuracy suite" in md and "| liver | svm |" in md
    assert "## The scaling study" in md and "Partial" not in md
    assert "rf on pima: m = 80 not run (at m = 40 the run took" in md
    assert "## Not yet" in md and "Not written yet." in md
    assert (root / "docs" / "benchmark" / "bench_scal" / "scaling_pima_m.png").exists()


def test_an_entry_illustration_is_drawn_after_its_report_and_a_bad_one_is_a_clear_error(write_config, tmp_path):
    """docs/reproduction.yaml's ``illustrations`` (paper 000 Figure 1(b) from the kernel code): the function's
    figure and text follow the entry's report, its image links relative to docs/; a path that does not name a
    function stops with a message naming it."""
    import shutil

    import yaml

    from tests.conftest import tiny_config
    from tkbench.bench.runner import run_experiment
    from tkbench.config import load_config
    from tkbench.errors import InputError
    from tkbench.report.reproduction import build_all

    root = tmp_path / "repo"
    (root / "configs").mkdir(parents=True)
    (root / "docs").mkdir()
    cfg = tiny_config(name="fig")
    cfg["protocol"]["splits"] = 1
    shutil.copy(write_config(cfg, "fig.yaml"), root / "configs" / "fig.yaml")
    run_experiment(load_config(root / "configs" / "fig.yaml"), out_dir=root / "results" / "fig", progress=False)
    index = {"papers": {"000": "a paper"}, "entries": [
        {"config": "fig", "paper": "000", "title": "A figure",
         "illustrations": ["tkbench.methods.tk.illustration:figure_1b"]}]}
    (root / "docs" / "reproduction.yaml").write_text(yaml.safe_dump(index))
    md = build_all(root, root / "docs")[0].read_text()
    assert "**Figure 1(b)**" in md and "(reproduction/fig/figure_1b_kernel_slices.png)" in md
    assert (root / "docs" / "reproduction" / "fig" / "figure_1b_kernel_slices.png").exists()
    index["entries"][0]["illustrations"] = ["tkbench.methods.tk.illustration:no_such_figure"]
    (root / "docs" / "reproduction.yaml").write_text(yaml.safe_dump(index))
    with pytest.raises(InputError, match="no_such_figure"):
        build_all(root, root / "docs")


def test_the_curves_of_a_plot_with_many_methods_stay_distinguishable():
    """matplotlib's default cycle repeats its 10 colours from the 11th curve on (the benchmark's scaling plots draw
    13): every curve gets its own (colour, marker, line style)."""
    from tkbench.report.plots import series_style

    looks = [tuple(sorted(series_style(i).items())) for i in range(30)]
    assert len(set(looks)) == 30


def test_rows_are_reported_under_their_plans_labels(write_config, tmp_path):
    """A label renamed after its runs (an alias added) keeps the run keys, and the stored rows keep the old label.
    Paper 004's generator twonorm rows said "twonorm" after that name went to the Raetsch array, and the report
    paired two sets' rows as one (a crash in the paired tests)."""
    from tests.conftest import tiny_config
    from tkbench.bench.runner import run_experiment

    cfg = tiny_config(datasets=["liver"])
    cfg["protocol"]["splits"] = 2
    out = tmp_path / "res"
    run_experiment(load_config(write_config(cfg)), out_dir=out, n_jobs=1, progress=False)
    for path in (out / "rows").glob("*.json"):
        row = json.loads(path.read_text())
        path.write_text(json.dumps({**row, "dataset": "a_label_of_old"}))
    res = load_results(out)
    assert set(res.rows["dataset"]) == {"liver"} and len(res.rows) == len(res.planned)
