"""The dry run's cost estimate (tkbench.bench.cost, issue 50): from finished rows of the same runs, else of the same
family and size, never from failed rows; a cell with neither says so."""
from __future__ import annotations

import json

import pytest
from rich.console import Console

from tests.conftest import tiny_config
from tkbench.bench.cost import estimate, finished_rows, shared_cv_progress
from tkbench.bench.plan import make_plan
from tkbench.bench.runner import run_experiment
from tkbench.bench.store import ResultStore
from tkbench.config import load_config


def test_estimates_come_from_finished_rows_of_the_same_runs_then_the_same_family(write_config, tmp_path):
    cfg = tiny_config(datasets=["liver"])
    cfg["protocol"]["splits"] = 2
    exp = load_config(write_config(cfg))
    done = tmp_path / "results" / "done"
    run_experiment(exp, out_dir=done, n_jobs=1, progress=False)
    rows = {r["method"]: r for r in ResultStore(done).rows()}
    # a failed row is never a basis: make one row of rf not ok, with an absurd time
    bad = dict(rows["rf"], status="failed", total_seconds=1e9)
    (done / "rows" / f"{bad['key']}.json").write_text(json.dumps(bad))

    more = tiny_config(datasets=["liver"])
    more["protocol"]["splits"] = 4  # splits 2-3 are new runs of the same cells
    more["methods"].append({"name": "svm_wide", "family": "svm_rbf", "grid": {"C": [1.0, 100.0], "gamma": [1.0]}})
    more["methods"].append({"name": "nn", "family": "neural_net", "params": {"max_iter": 50}})
    plan = make_plan(load_config(write_config(more, "more.yaml")))
    pending = [s for s in plan if s.split >= 2 or s.method in ("svm_wide", "nn")]
    found = finished_rows(tmp_path / "results" / "new")
    assert all(r["status"] == "ok" for r in found) and len(found) == 3  # 2 svm + 1 rf (the other rf failed)
    est = estimate(pending, found)
    # each row at the smaller of its wall clock and its CPU time (its price; test_a_row_is_priced_at_the_smaller_of_its_wall_clock_and_its_cpu_time)
    svm_seconds = sorted(min(r["total_seconds"], r["cpu_seconds"]) for r in ResultStore(done).rows()
                         if r["method"] == "svm")
    assert est[("liver", "svm")].basis == "same runs" and est[("liver", "svm")].n_rows == 2
    assert est[("liver", "svm")].seconds == pytest.approx(sum(svm_seconds) / 2)  # the median of two
    assert est[("liver", "rf")].n_rows == 1 and est[("liver", "rf")].seconds < 1e9
    assert est[("liver", "svm_wide")].basis == "same method, other grid"  # another grid, the same method and data
    assert est[("liver", "nn")] is None  # no row of that family
    # another solver of the same family is not a basis (its cost can be orders of magnitude apart)
    other = [dict(r, spec=dict(r["spec"], solver="other")) for r in found]
    assert estimate(pending, other)[("liver", "svm_wide")] is None


def test_rows_without_cpu_time_are_counted_and_the_dry_run_names_them(write_config, tmp_path):
    """A row made before rows recorded their CPU time is priced at its wall clock, which may hold other sweeps' work:
    the estimate counts such rows among its basis (same runs, another grid) and the dry run says how many."""
    cfg = tiny_config(datasets=["liver"])
    cfg["protocol"]["splits"] = 2
    done = tmp_path / "results" / "done"
    run_experiment(load_config(write_config(cfg)), out_dir=done, n_jobs=1, progress=False)
    rows = ResultStore(done).rows()
    assert all(isinstance(r["cpu_seconds"], float) for r in rows)
    old = next(r for r in rows if r["method"] == "svm")
    old.pop("cpu_seconds")
    (done / "rows" / f"{old['key']}.json").write_text(json.dumps(old))
    more = tiny_config(datasets=["liver"])
    more["protocol"]["splits"] = 3
    more["methods"].append({"name": "svm_wide", "family": "svm_rbf", "grid": {"C": [1.0, 100.0], "gamma": [1.0]}})
    exp = load_config(write_config(more, "more.yaml"))
    est = estimate([s for s in make_plan(exp) if s.split == 2 or s.method == "svm_wide"], finished_rows(done))
    assert (est[("liver", "svm")].n_rows, est[("liver", "svm")].unclocked) == (2, 1)
    assert est[("liver", "svm_wide")].basis == "same method, other grid" and est[("liver", "svm_wide")].unclocked == 1
    assert (est[("liver", "rf")].n_rows, est[("liver", "rf")].unclocked) == (2, 0)
    console = Console(record=True, width=300)
    run_experiment(exp, out_dir=tmp_path / "results" / "more", dry_run=True, console=console, progress=False)
    lines = console.export_text().splitlines()
    assert "2 rows, same runs; 1 of 2 without CPU time" in next(x for x in lines if "│ svm " in x)
    assert "without CPU time" not in next(x for x in lines if "│ rf " in x)


def test_dry_run_prints_the_estimate_and_what_it_leaves_out(write_config, tmp_path):
    cfg = tiny_config(datasets=["liver"])
    cfg["protocol"]["splits"] = 1
    exp = load_config(write_config(cfg))
    run_experiment(exp, out_dir=tmp_path / "results" / "a", n_jobs=1, progress=False)
    cfg["protocol"]["splits"] = 3
    cfg["methods"].append({"name": "nn", "family": "neural_net", "params": {"max_iter": 50}})
    console = Console(record=True, width=200)
    run_experiment(load_config(write_config(cfg, "b.yaml")), out_dir=tmp_path / "results" / "b", dry_run=True,
                   console=console, progress=False)
    text = " ".join(console.export_text().split())
    assert "1 rows, same runs" in text and "no rows" in text and "estimated" in text
    assert "1 cell(s) with no such rows are not counted" in text


def test_a_shared_cv_is_priced_once_per_cell_not_once_per_run(write_config, tmp_path):
    """protocol.tune_on_first: the first run of a cell carries the cell's CV (cv.shared). A pilot of one split per
    cell used to price every run left at that run's CV plus fit; now a run left costs its final fit, and the CV is
    added once only for a cell with no finished run in the folder (its tuning not cached there)."""
    from tkbench.bench.runner import run_experiment

    cfg = tiny_config(datasets=["liver"])
    cfg["protocol"].update(splits=4, tune_on_first=2)
    cfg["methods"] = [{"name": "svm", "family": "svm_rbf", "grid": {"C": [0.1, 1.0, 10.0], "gamma": [0.1, 1.0]}}]
    exp = load_config(write_config(cfg))
    out = tmp_path / "results" / "pilot"
    run_experiment(exp, out_dir=out, n_jobs=1, progress=False, splits=1)
    (row,) = ResultStore(out).rows()
    assert row["cv"]["shared"] and row["cv_seconds"] > 0
    quiet = min(1.0, row["cpu_seconds"] / row["total_seconds"])  # the row's price per wall-clock second
    fit_part = (row["total_seconds"] - row["cv_seconds"]) * quiet
    cv_part = row["cv_seconds"] * quiet
    pending = [s for s in make_plan(exp) if s.split > 0]
    est = estimate(pending, finished_rows(out))[("liver", "svm")]
    assert est.seconds == pytest.approx(fit_part) and est.shared_cv == pytest.approx(cv_part)
    assert est.total(3, cv_left=0.0) == pytest.approx(3 * fit_part)  # this folder: the tuning is cached
    assert est.total(3, cv_left=1.0) == pytest.approx(3 * fit_part + cv_part)  # a new folder: once
    console = Console(record=True, width=200)
    run_experiment(exp, out_dir=out, dry_run=True, console=console, progress=False)
    line = next(x for x in console.export_text().splitlines() if "svm" in x and "same runs" in x)
    assert f"{fit_part:.3g}" in line.split("│")[7]


def test_a_run_that_read_the_cached_shared_cv_is_not_charged_for_it(write_config):
    """Every row of a shared-CV cell names the CV's seconds; the runs that read the cached choice did not pay them.
    Subtracting the CV from those rows priced paper 004's cells at a negative time per run (-432 s on banana)."""
    cfg = tiny_config(datasets=["liver"])
    cfg["protocol"].update(splits=6, tune_on_first=1)
    cfg["methods"] = [{"name": "svm", "family": "svm_rbf", "grid": {"C": [0.1, 1.0], "gamma": [1.0]}}]
    plan = make_plan(load_config(write_config(cfg)))
    # run 0 computed a 480 s CV and fitted in 20 s; runs 1-3 read the cached choice
    rows = [{"status": "ok", "total_seconds": total, "cv_seconds": 480.0, "cv": {"shared": True},
             "spec": spec.to_dict(), "key": None}
            for spec, total in zip(plan[:4], [500.0, 3.0, 4.0, 5.0], strict=True)]
    est = estimate([s for s in plan if s.split >= 4], rows)[("liver", "svm")]
    assert est.seconds == pytest.approx(4.5)  # the median of 20, 3, 4 and 5: no run costs less than nothing
    assert est.shared_cv == pytest.approx(480.0)
    assert est.total(2, cv_left=0.0) == pytest.approx(9.0)


def test_a_row_that_resumed_part_of_the_shared_cv_counts_its_final_fit_only(write_config):
    """A pilot's CV resumed from an earlier session's fold checkpoint: the row's total (473 s) holds this session's
    share of the CV (which names 699 s) and a 2.8 s fit. Every later run pays the fit, not the 473 s."""
    cfg = tiny_config(datasets=["liver"])
    cfg["protocol"].update(splits=6, tune_on_first=1)
    cfg["methods"] = [{"name": "svm", "family": "svm_rbf", "grid": {"C": [0.1, 1.0], "gamma": [1.0]}}]
    plan = make_plan(load_config(write_config(cfg)))
    row = {"status": "ok", "total_seconds": 473.1, "cv_seconds": 699.1, "cv": {"shared": True},
           "fit_seconds": 2.75, "predict_seconds": 0.05, "spec": plan[0].to_dict(), "key": None}
    est = estimate([s for s in plan if s.split >= 1], [row])[("liver", "svm")]
    assert est.seconds == pytest.approx(2.8)
    assert est.shared_cv == pytest.approx(699.1)
    # without the timed fit recorded, the row is counted whole (an over-estimate, never less than nothing)
    bare = {k: v for k, v in row.items() if k not in ("fit_seconds", "predict_seconds")}
    assert estimate([s for s in plan if s.split >= 1], [bare])[("liver", "svm")].seconds == pytest.approx(473.1)


def test_the_dry_run_sums_the_hours_left_per_method(write_config, tmp_path):
    """A budget is set per method (which family gets fewer splits): the dry run adds each method's cells up,
    costliest first, and counts the cells it could not price."""
    cfg = tiny_config()  # liver and waveform, svm and rf
    cfg["protocol"]["splits"] = 1
    run_experiment(load_config(write_config(cfg)), out_dir=tmp_path / "results" / "a", n_jobs=1, progress=False)
    cfg["protocol"]["splits"] = 4
    cfg["methods"].append({"name": "nn", "family": "neural_net", "params": {"max_iter": 50}})
    console = Console(record=True, width=220)
    run_experiment(load_config(write_config(cfg, "b.yaml")), out_dir=tmp_path / "results" / "b", dry_run=True,
                   console=console, progress=False)
    lines = console.export_text().splitlines()
    cell = {}  # (dataset, method) -> hours left, from the per-cell table
    for line in lines:
        parts = [p.strip() for p in line.split("│")]
        if len(parts) == 11 and parts[2] in ("svm", "rf", "nn"):
            cell[(parts[1], parts[2])] = float(parts[8] or 0.0)
    start = next(i for i, x in enumerate(lines) if "hours left per method" in x)
    per = {}
    for line in lines[start:]:
        parts = [p.strip() for p in line.split("│")]
        if len(parts) == 7 and parts[1] in ("svm", "rf", "nn"):
            per[parts[1]] = parts[2:6]
    assert set(per) == {"svm", "rf", "nn"}
    for m in ("svm", "rf"):
        runs, hours, cells, unknown = per[m]
        assert runs == "8" and cells == "2" and unknown == ""  # a new folder: 4 splits on each of the 2 datasets
        assert float(hours) == pytest.approx(cell[("liver", m)] + cell[("waveform", m)], rel=0.05, abs=1e-4)
    assert per["nn"][0] == "8" and per["nn"][3] == "2"  # no row of that family: both cells unpriced
    printed = [float(v[1]) for v in per.values()]
    assert printed == sorted(printed, reverse=True) and list(per)[-1] == "nn"  # costliest first


def _shared_cv_cell(write_config):
    """A liver SVM cell of 3 splits whose CV (5 folds, 2 grid cells) is shared by the first 2: the config and its
    first run."""
    cfg = tiny_config(datasets=["liver"])
    cfg["protocol"].update(splits=3, tune_on_first=2, cv_folds=5)
    cfg["methods"] = [{"name": "svm", "family": "svm_rbf", "grid": {"C": [0.1, 1.0], "gamma": [1.0]}}]
    exp = load_config(write_config(cfg))
    return exp, make_plan(exp)[0]


def test_a_shared_cv_stopped_midway_is_charged_for_the_folds_it_has_left(write_config, tmp_path):
    """A pilot stopped in the middle of a cell's shared CV leaves fold checkpoints (tuning/<key>.folds.json): the
    dry run charges the share of the CV still to do, not the whole CV (it charged it whole before 2026-11-29),
    and nothing for a CV whose result is cached though no run of the cell has finished."""
    from tkbench.bench.store import TUNING
    from tkbench.bench.tuning import tuning_key

    exp, first = _shared_cv_cell(write_config)
    out = tmp_path / "results" / "stopped"
    assert shared_cv_progress(first, out)[0] == 1.0  # nothing yet
    folder = out / TUNING
    folder.mkdir(parents=True)
    seeds = first.tuning["seeds"]
    # split 0's CV has finished 2 of its 5 folds (2 grid cells each); split 1's has not started
    (folder / f"{tuning_key(first, 0, seeds[0])}.folds.json").write_text(
        json.dumps({"folds": [[0.5, 0.6], [0.55, 0.6]], "partial": [], "errors": [], "seconds": 12.0}))
    assert shared_cv_progress(first, out)[0] == pytest.approx((0.6 + 1.0) / 2)
    (folder / f"{tuning_key(first, 1, seeds[1])}.folds.json").write_text("not json")  # damaged: nothing done
    assert shared_cv_progress(first, out)[0] == pytest.approx((0.6 + 1.0) / 2)
    (folder / f"{tuning_key(first, 1, seeds[1])}.json").write_text(json.dumps({"chosen": {}, "seconds": 1.0,
                                                                                "best_score": 0.5}))
    assert shared_cv_progress(first, out)[0] == pytest.approx(0.6 / 2)  # split 1's CV is cached
    rows = [{"status": "ok", "total_seconds": 110.0, "cv_seconds": 100.0, "cv": {"shared": True},
             "spec": first.to_dict(), "key": None}]
    est = estimate(make_plan(exp)[1:], rows)[("liver", "svm")]
    assert est.total(2, cv_left=shared_cv_progress(first, out)[0]) == pytest.approx(2 * 10.0 + 0.3 * 100.0)
    assert est.total(2, cv_left=1.0) == pytest.approx(2 * 10.0 + 100.0)
    own = make_plan(load_config(write_config(tiny_config(datasets=["liver"]), "b.yaml")))[0]
    assert not own.tuning and shared_cv_progress(own, out)[0] == 1.0  # no shared CV: each run pays its own, as priced


def test_a_shared_cv_stopped_midway_is_priced_at_its_own_pace(write_config, tmp_path, capsys):
    """A shared CV's fold checkpoints record the seconds it took for the folds they hold: the rest is priced at that
    pace (2026-12-03: German's CM_full CV, whose rows of another beta grid priced it at 57 s, had taken 4575 s for
    its first fold of five), not from the rows of the estimate; unknown while a split not cached has nothing saved."""
    from tkbench.bench.runner import _print_plan
    from tkbench.bench.store import TUNING
    from tkbench.bench.tuning import tuning_key

    exp, first = _shared_cv_cell(write_config)
    out = tmp_path / "results" / "paced"
    assert shared_cv_progress(first, out)[1] is None  # nothing saved
    folder = out / TUNING
    folder.mkdir(parents=True)
    seeds = first.tuning["seeds"]
    (folder / f"{tuning_key(first, 0, seeds[0])}.folds.json").write_text(  # 2 of 5 folds in 12 s
        json.dumps({"folds": [[0.5, 0.6], [0.55, 0.6]], "partial": [], "errors": [], "seconds": 12.0}))
    assert shared_cv_progress(first, out)[1] is None  # split 1's CV has nothing saved: its pace is not known
    (folder / f"{tuning_key(first, 1, seeds[1])}.folds.json").write_text(  # half a fold (1 of 2 cells) in 4 s
        json.dumps({"folds": [], "partial": [[0.5]], "errors": [], "seconds": 4.0}))
    assert shared_cv_progress(first, out)[1] == pytest.approx(12.0 * 3 / 2 + 4.0 * 4.5 / 0.5)
    (folder / f"{tuning_key(first, 1, seeds[1])}.json").write_text(json.dumps({"chosen": {}, "seconds": 1.0,
                                                                                "best_score": 0.5}))
    assert shared_cv_progress(first, out)[1] == pytest.approx(18.0)  # split 1 cached
    rows = [{"status": "ok", "total_seconds": 110.0, "cv_seconds": 100.0, "cv": {"shared": True},
             "spec": first.to_dict(), "key": None}]
    est = estimate(make_plan(exp)[1:], rows)[("liver", "svm")]
    left, pace = shared_cv_progress(first, out)
    assert est.total(2, left, pace) == pytest.approx(2 * 10.0 + 18.0)
    console = Console(record=True, width=250)  # the dry run's table prices the cell at that pace and says so
    plan = make_plan(exp)
    _print_plan(console, plan, plan, out, set(), rows=rows)
    text = " ".join(console.export_text().split())
    assert "its shared CV 18 s more at its own pace (70% done)" in text and "│ 16 │" in text, text  # (3 x 10 + 18) / 3


def test_cheap_first_runs_the_cells_with_the_least_time_left_first(write_config, tmp_path, monkeypatch):
    """--order cheap-first: each cell's runs stay together in split order, the cells go by their estimated time
    left (the dry run's estimate: per run from finished rows, times the runs left), cells with no estimate last; a
    sweep in that order computes the same rows, and its console says so and shows the order it ran in."""
    from tkbench.bench.cost import cheapest_cells_first

    monkeypatch.chdir(tmp_path)  # results/ here: the estimate reads no committed rows of the project
    cfg = tiny_config()  # liver and waveform, svm and rf
    cfg["protocol"]["splits"] = 1
    first = tmp_path / "results" / "a"
    run_experiment(load_config(write_config(cfg)), out_dir=first, n_jobs=1, progress=False)
    price = {("liver", "svm"): 50.0, ("waveform", "svm"): 5.0, ("liver", "rf"): 20.0, ("waveform", "rf"): 1.0}
    for row in ResultStore(first).rows():  # known prices instead of this machine's seconds
        row.update(total_seconds=price[row["dataset"], row["method"]], fit_seconds=None, cv_seconds=0.0)
        row.pop("cpu_seconds", None)
        (first / "rows" / f"{row['key']}.json").write_text(json.dumps(row))
    cfg["protocol"]["splits"] = 3
    cfg["methods"].append({"name": "nn", "family": "neural_net", "params": {"max_iter": 50}})
    exp = load_config(write_config(cfg, "b.yaml"))
    out = tmp_path / "results" / "b"
    pending = make_plan(exp)
    ordered, cells = cheapest_cells_first(pending, out)
    assert [c for c, _ in cells] == [("waveform", "rf"), ("waveform", "svm"), ("liver", "rf"), ("liver", "svm"),
                                     ("liver", "nn"), ("waveform", "nn")]  # the unpriced nn last, in plan order
    assert [s for _, s in cells[:4]] == pytest.approx([3.0, 15.0, 60.0, 150.0]) and cells[4][1] is None
    assert sorted(s.key for s in ordered) == sorted(s.key for s in pending)
    assert [(s.label, s.method, s.split) for s in ordered[:4]] == [("waveform", "rf", 0), ("waveform", "rf", 1),
                                                                   ("waveform", "rf", 2), ("waveform", "svm", 0)]
    bases = ("rows of the same runs, the same method at (or near, scaled) its size or the same family and size "
             "(this results folder, the ones beside it and results/)")
    for only, expected in ((None, f"estimated 0.0633 hours of runs one after another (divide by the workers), from "
                                  f"finished {bases}; 2 cell(s) with no such rows are not counted"),  # 228 s; nn unpriced
                           (["*/nn"], "no estimate of the time left: no finished rows of the same runs, the same "
                                      "method at (or near, scaled) its size or the same family and size, in this "
                                      "results folder, the ones beside it or results/")):
        console = Console(record=True, width=400)  # the dry run's last line names the bases it priced from
        run_experiment(exp, out_dir=out, dry_run=True, progress=False, console=console, only=only)
        assert expected in " ".join(console.export_text().split()), console.export_text()
    console = Console(record=True, width=400)
    run_experiment(exp, out_dir=out, n_jobs=1, progress=False, console=console, order="cheap-first",
                   only=["*/rf", "*/svm"])
    text = console.export_text()
    assert "--order cheap-first: 4 cell(s) run by their estimated time left, shortest first: waveform/rf" in text
    ran = [line.split("]", 1)[1].split(" split")[0].strip() for line in text.splitlines() if line.startswith("[")]
    assert ran == ["waveform/rf"] * 3 + ["waveform/svm"] * 3 + ["liver/rf"] * 3 + ["liver/svm"] * 3
    assert len(ResultStore(out).rows()) == 12
    with pytest.raises(Exception, match="--order 'fastest': expected one of plan, cheap-first"):
        run_experiment(exp, out_dir=out, dry_run=True, progress=False, order="fastest")


def test_rows_of_the_same_method_with_another_grid_price_the_planned_cv(write_config, tmp_path):
    """Rows of the same method and size but another grid: the run without its CV, plus the planned CV's fits at
    the rows' final-fit seconds (a CV over many candidates is not priced as the rows' small one); rows with other
    parameters are taken as they ran."""
    from tkbench.bench.cost import cv_fits

    cfg = tiny_config(datasets=["liver"])
    cfg["protocol"]["splits"] = 1
    cfg["methods"] = [{"name": "svm", "family": "svm_rbf", "grid": {"C": [1.0, 10.0], "gamma": [0.1]}},
                      {"name": "svm_big", "family": "svm_rbf", "grid": {"C": [1.0, 10.0, 100.0, 1000.0],
                                                                         "gamma": [0.1, 1.0]}},
                      {"name": "svm_fixed", "family": "svm_rbf", "grid": {}, "params": {"C": 3.0}}]
    plan = make_plan(load_config(write_config(cfg)))
    by = {s.method: s for s in plan}
    assert cv_fits(by["svm_big"]) == 8 * 2 and cv_fits(by["svm"]) == 2 * 2 and cv_fits(by["svm_fixed"]) == 0
    row = {"status": "ok", "key": "k", "spec": by["svm"].to_dict(), "total_seconds": 10.0, "cv_seconds": 6.0,
           "fit_seconds": 0.5, "cv": {"candidates": 2}}
    est = estimate([by["svm_big"], by["svm_fixed"]], [row])
    assert est[("liver", "svm_big")].basis == "same method, other grid"
    assert est[("liver", "svm_big")].seconds == pytest.approx(4.0 + 0.5 * 16)  # 4 s without its CV, 16 fits
    # other parameters and no grid: the roughest basis, the rows without their CV (the planned run has none)
    assert est[("liver", "svm_fixed")].basis == "same family and size; C, grid differ; without their CV"
    assert est[("liver", "svm_fixed")].seconds == pytest.approx(4.0)
    shared = dict(by["svm_big"].to_dict(), tuning={"first": 1, "seeds": [7]})
    from tkbench.bench.spec import RunSpec

    once = estimate([RunSpec.from_dict(shared)], [row])[("liver", "svm_big")]
    assert once.seconds == pytest.approx(4.0) and once.shared_cv == pytest.approx(8.0)  # the CV once per cell


def test_the_roughest_basis_uses_the_rows_nearest_the_planned_settings_and_names_what_differs(write_config):
    """Rows of one family and size but other settings: only those differing from the planned run in the fewest
    names price it (a cheap single-setting pilot must not price the expensive cell), and the basis names them."""
    cfg = tiny_config(datasets=["liver"])
    cfg["protocol"]["splits"] = 1
    cfg["methods"] = [{"name": "planned", "family": "svm_rbf", "grid": {}, "params": {"C": 3.0, "gamma": 0.5}},
                      {"name": "near", "family": "svm_rbf", "grid": {}, "params": {"C": 1.0, "gamma": 0.5}},
                      {"name": "far", "family": "svm_rbf", "grid": {"C": [1.0, 2.0]}, "params": {"gamma": 2.0}}]
    by = {s.method: s for s in make_plan(load_config(write_config(cfg)))}

    def row(method, seconds):
        return {"status": "ok", "key": method, "spec": by[method].to_dict(), "total_seconds": seconds,
                "cv_seconds": 0.0, "fit_seconds": seconds}

    far = [row("far", 1.0), row("far", 2.0), row("far", 3.0)]
    est = estimate([by["planned"]], [*far, row("near", 500.0)])[("liver", "planned")]
    assert est.seconds == pytest.approx(500.0) and est.n_rows == 1  # not the median of all four rows (2.5)
    assert est.basis == "same family and size; C differs"
    # with only the far rows, they price it, and the basis says how far they are
    est = estimate([by["planned"]], far)[("liver", "planned")]
    # (gamma is not a grid parameter of either: another method's rows, taken as they ran, not without their CV)
    assert est.seconds == pytest.approx(2.0) and est.basis == "same family and size; C, gamma, grid differ"
    # a name set in one run only counts as differing; a row whose settings are the planned run's is "same runs"
    from tkbench.bench.cost import _differing

    assert _differing({"params.a": 1, "grid": {}}, {"grid": {}}) == ("a",)
    assert _differing({"params.a": [1, 2]}, {"params.a": [1, 2]}) == ()


def test_rows_of_the_same_method_and_size_on_other_data_price_a_cell_before_other_settings(write_config):
    """The issue's "rows of the same method and size": with no row of the cell's own method on its data, rows of the
    same method on other data with about the same training rows price it (before rows of other parameters on the
    same data, which can be orders of magnitude off), the nearest ones only (binary / multi-class first, then the
    size), and the basis names the data; rows more than 10 % off in size are not used."""
    cfg = tiny_config(datasets=["liver", "pima"])
    cfg["protocol"]["splits"] = 1
    cfg["methods"] = [{"name": "planned", "family": "svm_rbf", "grid": {}, "params": {"C": 3.0}, "max_train": 100},
                      {"name": "other", "family": "svm_rbf", "grid": {}, "params": {"C": 1.0}, "max_train": 100}]
    by = {(s.label, s.method): s for s in make_plan(load_config(write_config(cfg)))}

    def row(label, method, seconds, n_train, n_classes=2, dataset=None):
        spec = dict(by[("pima" if label not in ("liver",) else label, method)].to_dict())
        if dataset:
            spec.update(dataset=dataset, label=label)
        return {"status": "ok", "key": f"{label}-{method}-{seconds}", "spec": spec, "total_seconds": seconds,
                "cv_seconds": 0.0, "fit_seconds": seconds, "n_train": n_train, "n_classes": n_classes}

    cell = ("liver", "planned")
    pending = [by[cell]]
    same_data_other_settings = row("liver", "other", 1.0, 100)
    pima = [row("pima", "planned", 50.0, 100), row("pima", "planned", 70.0, 100)]
    multi = row("multi", "planned", 7.0, 100, n_classes=6, dataset="fake_multi")
    near = row("near", "planned", 3.0, 95, dataset="fake_near")
    far = row("far", "planned", 1000.0, 300, dataset="fake_far")

    est = estimate(pending, [same_data_other_settings, *pima, multi, near, far])[cell]
    assert est.basis == "same method, other data (pima; m = 100)" and est.n_rows == 2
    assert est.seconds == pytest.approx(60.0)  # the median of pima's two rows, not of every row at that size
    # the nearest size among the binary rows when pima's are gone; the multi-class one only when alone
    assert estimate(pending, [same_data_other_settings, multi, near, far])[cell].seconds == pytest.approx(3.0)
    assert estimate(pending, [multi, far])[cell].basis == "same method, other data (multi; m = 100)"
    # rows more than 10 % off in size are no basis: the same family's rows on the same data are the last resort
    est = estimate(pending, [same_data_other_settings, far])[cell]
    assert est.basis == "same family and size; C differs" and est.seconds == pytest.approx(1.0)
    assert estimate(pending, [far])[cell] is None
    # the cell's training rows come from an uncapped row of its data when there is one: here 80 < the cap of 100
    uncapped = dict(row("liver", "other", 2.0, 80), spec=dict(same_data_other_settings["spec"], size=None))
    est = estimate(pending, [uncapped, row("small", "planned", 9.0, 80, dataset="fake_small"), *pima])[cell]
    assert est.basis == "same method, other data (small; m = 80)" and est.seconds == pytest.approx(9.0)

    # within 1.5x of the planned size, rows of the same method on other data price it scaled as m^3, after every
    # row at its size and before the same family's rows of other settings on the same data
    bigger = row("bigger", "planned", 21.97, 130, dataset="fake_bigger")  # (100 / 130)^3 = 0.455
    est = estimate(pending, [same_data_other_settings, bigger, far])[cell]
    assert est.basis == "same method, other data and size (bigger; m = 130 scaled to 100 as m^3)"
    assert est.seconds == pytest.approx(21.97 * (100 / 130) ** 3) and est.n_rows == 1
    assert estimate(pending, [bigger, near])[cell].basis == "same method, other data (near; m = 100)"
    # the nearest size on a log scale (80 is nearer 100 than 130 is), of the same kind of task first
    smaller = row("smaller", "planned", 4.0, 80, dataset="fake_smaller")
    est = estimate(pending, [bigger, smaller])[cell]
    assert est.basis == "same method, other data and size (smaller; m = 80 scaled to 100 as m^3)"
    assert est.seconds == pytest.approx(4.0 * (100 / 80) ** 3)
    multi_near = row("multi_near", "planned", 1.0, 115, n_classes=6, dataset="fake_multi_near")
    assert estimate(pending, [same_data_other_settings, bigger, multi_near])[cell].basis.startswith("same method, other data and size (bigger;")
    assert estimate(pending, [multi_near])[cell].basis.startswith("same method, other data and size (multi_near;")
    # beyond 1.5x: not this basis
    beyond = row("beyond", "planned", 1.0, 151, dataset="fake_beyond")
    assert estimate(pending, [same_data_other_settings, beyond])[cell].basis == "same family and size; C differs"


def test_a_row_is_priced_at_the_smaller_of_its_wall_clock_and_its_cpu_time():
    """A run slowed by other sweeps on its cores took longer on the wall clock than its own work: a row that records
    its CPU time counts at that (one thread: about its quiet wall clock); a run on two threads that used them both
    (CPU time above the wall clock) counts at its wall clock; a row without CPU time, as it ran. The shared CV's
    seconds scale with the row that computed them, and stay as named in a row that read the cached choice."""
    from tkbench.bench.cost import _pair, quiet_factor

    def priced(r):
        return _pair(r, quiet_factor(r))

    base = {"status": "ok", "cv": None, "cv_seconds": 0.0}
    assert priced({**base, "total_seconds": 100.0, "cpu_seconds": 25.0}) == (25.0, 0.0)  # a quarter of a core
    assert priced({**base, "total_seconds": 100.0, "cpu_seconds": 170.0}) == (100.0, 0.0)  # two busy threads
    assert priced({**base, "total_seconds": 100.0}) == (100.0, 0.0)  # an older row
    shared = {"status": "ok", "cv": {"shared": True}, "cv_seconds": 80.0}
    assert priced({**shared, "total_seconds": 100.0, "cpu_seconds": 50.0}) == (10.0, 40.0)  # it computed the CV
    read = priced({**shared, "total_seconds": 10.0, "cpu_seconds": 5.0, "fit_seconds": 6.0, "predict_seconds": 1.0})
    assert read == (3.5, 80.0)  # its timed fit and prediction at its price; the CV as the row that ran it paid


def test_a_run_resumed_over_sessions_counts_every_session_not_only_the_last():
    """A run continued from its saved state: its wall clock (``total_seconds``) is the session that finished it, and
    its timed parts count the earlier sessions too (a resumed final fit's ``fit_seconds``, a resumed CV's
    ``cv_seconds``). Taking the wall clock alone priced pendigits' HGK_refit at 1225 s a run for 15345 s and left 43
    of paper 002's Table 1's hours out of COST.md."""
    from tkbench.bench.cost import run_parts

    base = {"status": "ok", "cv": None, "warmup_seconds": 1.0, "predict_seconds": 2.0}
    # a fresh run: its wall clock (which holds its parts and what lies between them)
    assert run_parts({**base, "total_seconds": 100.0, "cv_seconds": 40.0, "fit_seconds": 50.0}) == (100.0, 0.0)
    # the final fit resumed: 14129 s of earlier sessions in its fit_seconds, 1225 s in this one
    assert run_parts({**base, "total_seconds": 1225.0, "cv_seconds": 0.0, "fit_seconds": 15345.0,
                      "resumed": {"candidates": 6, "seconds": 14129.0}}) == (15348.0, 0.0)
    # its own CV resumed from fold checkpoints: the CV's seconds name every session's folds
    assert run_parts({**base, "total_seconds": 20.0, "cv_seconds": 1643.0, "fit_seconds": 17.0}) == (1663.0, 0.0)
    # a shared CV: the row that computed it in its session pays the rest of its wall clock, or its parts
    shared = {**base, "cv": {"shared": True}, "cv_seconds": 80.0}
    assert run_parts({**shared, "total_seconds": 100.0, "fit_seconds": 10.0}) == (20.0, 80.0)
    assert run_parts({**shared, "total_seconds": 100.0, "fit_seconds": 500.0,
                      "resumed": {"seconds": 480.0}}) == (503.0, 80.0)
    # a row that read it (or resumed part of it) counts its parts without it, a resumed final fit whole
    assert run_parts({**shared, "total_seconds": 30.0, "fit_seconds": 5.0}) == (8.0, 80.0)
    assert run_parts({**shared, "total_seconds": 30.0, "fit_seconds": 300.0,
                      "resumed": {"seconds": 290.0}}) == (303.0, 80.0)
    # an older row without timed parts: as it ran
    assert run_parts({"status": "ok", "total_seconds": 30.0, "cv": {"shared": True}, "cv_seconds": 80.0}) \
        == (30.0, 80.0)


def test_the_dry_run_prices_a_resumed_run_at_all_its_sessions(write_config):
    cfg = tiny_config(datasets=["liver"])
    cfg["protocol"]["splits"] = 3
    cfg["methods"] = [{"name": "svm", "family": "svm_rbf", "params": {"C": 1.0, "gamma": 1.0}}]
    plan = make_plan(load_config(write_config(cfg)))
    row = {"status": "ok", "total_seconds": 100.0, "fit_seconds": 900.0, "predict_seconds": 0.0, "cv": None,
           "cv_seconds": 0.0, "resumed": {"seconds": 800.0}, "spec": plan[0].to_dict(), "key": None}
    est = estimate(plan[1:], [row])[("liver", "svm")]
    assert est.basis == "same runs" and est.seconds == pytest.approx(900.0)


def test_the_roughest_basis_prices_the_planned_cv_when_the_rows_had_another_grid():
    """Committed rows: paper 003's Gas Turbine CV at 4000 rows (configs/investigate_gas_turbine_cv.yaml, 24 CV
    fits a run) priced from the only nearest row, a fixed-(C, delta) fit at 4000 rows (59 s, the scaling study).
    Taken as it ran, that row priced a run at 59 s, where the five committed runs took 788-1389 s: now the row's fit
    is the unit of the planned CV's fits, and the estimate lies within a factor 2 of the runs' median."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    done = [r for r in ResultStore(root / "results" / "investigate_gas_turbine_cv").rows()
            if r["method"] == "tk_fw_cv4000" and r["status"] == "ok"]
    basis = [r for r in ResultStore(root / "results" / "tkl2021_scaling_gas_turbine").rows()
             if r["status"] == "ok" and r.get("n_train") == 4000]
    assert len(done) == 5 and basis
    plan = [s for s in make_plan(load_config(root / "configs" / "investigate_gas_turbine_cv.yaml"))
            if s.method == "tk_fw_cv4000"]
    est = estimate(plan, basis)[("gas_turbine", "tk_fw_cv4000")]
    assert est.basis.endswith("CV as 24 of their fits"), est.basis
    measured = sorted(r["total_seconds"] for r in done)[2]
    assert measured / 2 < est.seconds < measured * 2, (est.seconds, measured)
    # a row that differs in a parameter the grid does not set is another method's: taken as it ran
    other = [dict(r, spec=dict(r["spec"], params={**r["spec"]["params"], "tol": 0.5})) for r in basis]
    est = estimate(plan, other)[("gas_turbine", "tk_fw_cv4000")]
    assert "CV as" not in est.basis and est.seconds == pytest.approx(basis[0]["total_seconds"])


def test_measured_speedups_price_the_rows_they_apply_to_at_todays_speed(write_config, tmp_path):
    """A speedup of docs/reproduction.yaml that applies to a cell's rows (the family, started before the change)
    divides their price, as COST.md's today's defaults do; one that landed before the rows ran changes nothing; the
    dry run reads the project's speedups and its basis says how many rows it priced at today's speed."""
    from tkbench.bench.speedups import Speedup

    cfg = tiny_config(datasets=["liver"])
    cfg["protocol"]["splits"] = 2
    exp = load_config(write_config(cfg))
    run_experiment(exp, out_dir=tmp_path / "results" / "a", n_jobs=1, progress=False)
    cfg["protocol"]["splits"] = 4
    pending = [s for s in make_plan(load_config(write_config(cfg, "b.yaml"))) if s.split >= 2]
    rows = finished_rows(tmp_path / "results" / "b", tmp_path / "results")
    svm = [r for r in rows if r["method"] == "svm"]
    family = svm[0]["family"]

    def faster(before, factor=4.0):
        return Speedup(name="x", family=family, params={}, before=before, factor=factor, measured="m")

    plain = estimate(pending, rows)[("liver", "svm")]
    today = estimate(pending, rows, (faster("2999-01-01"),))[("liver", "svm")]
    assert today.seconds == pytest.approx(plain.seconds / 4)
    assert today.basis == "same runs; 2 at today's speed" and plain.basis == "same runs"
    assert estimate(pending, rows, (faster("2999-01-01"),))[("liver", "rf")].seconds == pytest.approx(
        estimate(pending, rows)[("liver", "rf")].seconds)  # another family: as it ran
    landed_before = estimate(pending, rows, (faster("2000-01-01"),))[("liver", "svm")]
    assert landed_before.seconds == plain.seconds and landed_before.basis == "same runs"

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "reproduction.yaml").write_text(
        f"speedups:\n  - {{name: x, family: {family}, params: {{}}, before: '2999-01-01', factor: 4.0, "
        "measured: m}\n")
    console = Console(record=True, width=250)
    run_experiment(load_config(write_config(cfg, "b.yaml")), out_dir=tmp_path / "results" / "b", dry_run=True,
                   console=console, progress=False)
    text = " ".join(console.export_text().split())
    assert "2 rows, same runs; 2 at today's speed" in text


def test_a_speedup_prices_the_roughest_basis_rows_it_takes_whole_and_not_those_it_takes_apart(write_config):
    """"Same family and size": a row taken whole (other parameters) is priced at today's speed like the closer
    bases' rows, and the basis says so; a row taken apart (the same method at other grid points: its run without its
    CV plus the planned CV's fits) keeps its parts as they ran, since a speedup names a share of a row's time."""
    from tkbench.bench.speedups import Speedup

    cfg = tiny_config(datasets=["liver"])
    cfg["protocol"]["splits"] = 1
    cfg["methods"] = [{"name": "planned", "family": "svm_rbf", "grid": {}, "params": {"C": 3.0, "gamma": 0.5}},
                      {"name": "near", "family": "svm_rbf", "grid": {}, "params": {"C": 1.0, "gamma": 0.5}},
                      {"name": "gridded", "family": "svm_rbf", "grid": {"C": [1.0, 10.0]}, "params": {"gamma": 0.5}}]
    by = {s.method: s for s in make_plan(load_config(write_config(cfg)))}

    def row(method, seconds, cv=0.0, fit=None):
        return {"status": "ok", "key": method, "spec": by[method].to_dict(), "family": "svm_rbf",
                "started_at": "2026-01-01T00:00:00", "total_seconds": seconds, "cv_seconds": cv,
                "fit_seconds": seconds - cv if fit is None else fit}

    faster = (Speedup(name="x", family="svm_rbf", params={}, before="2026-06-01", factor=5.0, measured="m"),)
    whole = row("near", 500.0)
    plain = estimate([by["planned"]], [whole])[("liver", "planned")]
    today = estimate([by["planned"]], [whole], faster)[("liver", "planned")]
    assert plain.basis == "same family and size; C differs" and plain.seconds == pytest.approx(500.0)
    assert today.basis == "same family and size; C differs; 1 at today's speed"
    assert today.seconds == pytest.approx(100.0)
    # taken apart: "planned" has no grid, so the gridded row's run without its CV (10 s of 40) prices it, as it ran
    apart = row("gridded", 40.0, cv=30.0, fit=2.0)
    for speedups in ((), faster):
        est = estimate([by["planned"]], [apart], speedups)[("liver", "planned")]
        assert est.basis == "same family and size; C, grid differ; without their CV"
        assert est.seconds == pytest.approx(10.0)
