"""The automatic notes: CV choices at a grid's edge, final fits that stopped before their tolerance."""
from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from tkbench.report.checks import convergence_notes, grid_edge_notes


def _res(rows: list[dict]) -> SimpleNamespace:
    exp = SimpleNamespace(datasets=[SimpleNamespace(label="liver"), SimpleNamespace(label="heart")],
                          methods=[SimpleNamespace(name="tk_fw"), SimpleNamespace(name="simplemkl")])
    return SimpleNamespace(experiment=exp, rows=pd.DataFrame(rows))


def _row(ds, method, chosen, converged=True, gap=1e-3, status="ok", grid=None):
    grid = grid or {"C": [0.1, 1.0, 10.0, 100.0], "delta": [0.01, 0.1, 1.0], "kernel": ["a", "b", "c"]}
    return {"dataset": ds, "method": method, "status": status, "chosen_params": chosen,
            "spec": {"grid": grid, "params": {"tol": 0.01}},
            "diagnostics": {"converged": converged, "relative_gap": gap}}


def test_grid_edge_notes_flag_a_majority_at_either_end_only():
    rows = ([_row("liver", "tk_fw", {"C": 100.0, "delta": 0.1, "kernel": "c"}) for _ in range(3)]
            + [_row("liver", "tk_fw", {"C": 1.0, "delta": 0.01, "kernel": "c"}) for _ in range(2)]
            + [_row("heart", "simplemkl", {"C": 0.1}) for _ in range(2)] + [_row("heart", "simplemkl", {"C": 10.0})]
            + [_row("heart", "tk_fw", {"C": 100.0}, status="failed") for _ in range(4)]
            + [_row("heart", "tk_fw", {"C": 1.0})])
    notes = grid_edge_notes(_res(rows))
    assert notes == [
        "CV chose the grid's largest C (100) in 3 of 5 runs of tk_fw on liver: the optimum may lie beyond the grid.",
        "CV chose the grid's smallest C (0.1) in 2 of 3 runs of simplemkl on heart: the optimum may lie beyond the "
        "grid.",
    ]  # delta at its smallest in 2 of 5: below half; non-numeric grids and failed runs are not counted


def test_grid_edge_notes_skip_two_value_grids():
    rows = [_row("liver", "tk_fw", {"C": 10.0}, grid={"C": [1.0, 10.0]}) for _ in range(3)]
    assert grid_edge_notes(_res(rows)) == []


def test_convergence_notes_count_early_stops_per_cell():
    rows = ([_row("liver", "tk_fw", {}, converged=False, gap=g) for g in (0.5, 13.0)]
            + [_row("liver", "tk_fw", {}) for _ in range(28)] + [_row("heart", "simplemkl", {}) for _ in range(3)])
    rows.append({**_row("heart", "tk_fw", {}), "diagnostics": {"converged": False, "sdp_status": "optimal"}})
    assert convergence_notes(_res(rows)) == [
        "tk_fw on liver: 2 of 30 final fits stopped before their stop rule (tol = 0.01) (largest "
        "relative gap left 13). To meet it: raise max_iter or loosen tol in the method's params; a gap left above 1 "
        "usually means an ill-conditioned problem (try a normalised kernel or a smaller C)."
    ]  # the SDP's row has its own certificate note (issue 48: the note says what to change)
    assert convergence_notes(_res([])) == [] and grid_edge_notes(_res([])) == []
    # a fit whose last SVM solve stopped at LIBSVM's cap: its gap (below tol here) is no certificate, and says so
    capped = {**_row("liver", "tk_fw", {}, converged=False, gap=1e-4)}
    capped["diagnostics"] = {**capped["diagnostics"], "n_svm_capped": 2}
    assert convergence_notes(_res([capped] + [_row("liver", "tk_fw", {}) for _ in range(4)])) == [
        "tk_fw on liver: 1 of 5 final fits stopped before their stop rule (tol = 0.01) (largest relative gap left "
        "0.0001); 1 of them with SVM solves stopped at LIBSVM's iteration cap (a gap from a capped solve certifies "
        "nothing). To meet "
        "it: raise max_iter or loosen tol in the method's params."
    ]


def test_one_solver_report_fills_every_familys_iterations_and_names_its_own_stop_rule():
    """Issue 49: SIKL's iterations and HGK's steps showed "-" (the report read only TK's n_iter), and every note said
    "duality-gap tolerance" whatever the family's rule. Rows of every vintage: legacy keys and the solver report."""
    from tkbench.methods._shared.report import SolverReport
    from tkbench.report.checks import final_fit_table

    sikl_rule = "t(i) - t(i-1) < epsilon t(i-1) with epsilon = 0.001, or T1 = 1000 iterations"
    new_sikl = SolverReport("semi-infinite program, paper 004 Algorithm 1", 7, False, sikl_rule).as_diagnostics()
    # (the fixture's cell names: heart/simplemkl stands for a SIKL cell, liver/tk_fw for an HGK_cv cell)
    rows = ([{**_row("heart", "simplemkl", {}), "diagnostics": {"iterations": 5, "converged": True}}
             for _ in range(2)]
            + [{**_row("heart", "simplemkl", {}), "diagnostics": new_sikl}]
            + [{**_row("liver", "tk_fw", {}), "diagnostics": {"rounds": 40, "depth": 2}} for _ in range(2)])
    table = final_fit_table(_res(rows))
    cells = {(r[0].text, r[1].text): [c.text for c in r[2:4]] for r in table.rows}
    assert cells[("heart", "simplemkl")] == ["5.7 ± 1.2 (max 7)", "2/3"]
    assert cells[("liver", "tk_fw")] == ["40.0 ± 0.0 (max 40)", "n/a (fixed steps)"]
    (note,) = convergence_notes(_res(rows))
    assert note.startswith(f"simplemkl on heart: 1 of 3 final fits stopped before their stop rule ({sikl_rule})")
    assert "duality-gap" not in note


def test_a_familys_report_notes_stand_under_its_tables_only_when_it_is_present():
    """Issue 49: the report names no family; what a table must say about a family's rows comes from the family
    (Family.report_notes) and is printed only when one of the config's methods uses it."""
    from types import SimpleNamespace

    from tkbench.methods import get_family
    from tkbench.report.evaluation import family_notes

    def res(*families):
        methods = [SimpleNamespace(name=f"m{i}", family=f) for i, f in enumerate(families)]
        return SimpleNamespace(experiment=SimpleNamespace(methods=methods))

    note = get_family("sikl").report_notes["time_breakdown"]
    assert family_notes(res("sikl", "svm_rbf", "sikl"), "time_breakdown", {"m0", "m1", "m2"}) == [note]
    assert family_notes(res("sikl", "svm_rbf"), "time_breakdown", {"m1"}) == []  # sikl's method not in the table
    assert family_notes(res("svm_rbf", "estimator:no.such.Thing"), "selection", {"m0", "m1"}) == []


def test_the_reproduction_index_is_data_and_bad_entries_are_clear(tmp_path):
    import pytest

    from tkbench.errors import InputError
    from tkbench.report.reproduction import load_index

    papers, entries = load_index(None)
    assert len(papers) == 5 and all(e.paper in papers for e in entries) and len(entries) >= 30
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "reproduction.yaml").write_text("papers: {'000': x}\nentries: [{config: a, paper: '001', "
                                                          "title: t}]\n")
    with pytest.raises(InputError, match="not under papers"):
        load_index(tmp_path)
    (tmp_path / "docs" / "reproduction.yaml").write_text("papers: [1]\n")
    with pytest.raises(InputError, match="expected papers"):
        load_index(tmp_path)


def test_the_cost_table_counts_the_plans_rows_and_estimates_the_papers_draws(tmp_path):
    """docs/COST.md (issue 50): the runs and hours of the plan's ok rows; the paper's protocol adds each missing
    draw at the cell's median, so it is never below what ran, and equals it when every draw ran."""
    import statistics
    from pathlib import Path

    import pytest

    from tkbench.bench.plan import make_plan
    from tkbench.bench.store import ResultStore
    from tkbench.config.load import load_config
    from tkbench.errors import InputError
    from tkbench.report.cost import cost_markdown, entry_cost
    from tkbench.report.reproduction import load_index

    root = Path(__file__).resolve().parents[2]
    complete = entry_cost(root, "investigate_line_search", None)  # every planned run finished, one draw
    assert complete["runs"] == complete["planned"] == 22
    assert complete["full_seconds"] == pytest.approx(complete["seconds"])
    table1 = entry_cost(root, "steinwart2016_table1", None)
    exp = load_config(root / "configs" / "steinwart2016_table1.yaml", check_reference=False)
    plan = make_plan(exp)
    keys = {s.key for s in plan}
    ok = [r for r in ResultStore(root / "results" / "steinwart2016_table1").rows()
          if r.get("key") in keys and r.get("status") == "ok"]
    assert table1["runs"] == len(ok)
    # hours run: every session a run took (a resumed HGK fit's earlier sessions, a CV resumed from its folds), the
    # wall clock of the session that finished it at least (tkbench.bench.cost.run_parts)
    wall = sum(r["total_seconds"] for r in ok)
    cod = next(r for r in ok if (r["dataset"], r["method"]) == ("cod", "HGK"))
    assert cod["resumed"] and cod["fit_seconds"] > 5 * cod["total_seconds"]  # 41380 s over sessions, 7607 in the last
    assert table1["seconds"] >= wall + cod["fit_seconds"] - cod["total_seconds"]
    assert table1["seconds"] == pytest.approx(sum(max(r["total_seconds"], r["fit_seconds"] + r["predict_seconds"]
                                                      + (r.get("warmup_seconds") or 0.0) + (r["cv_seconds"] or 0.0))
                                                  for r in ok))  # Table 1 shares no CV between splits
    cells = {(s.label, s.method) for s in plan}
    assert table1["paper_draws"] == 30 and table1["full_runs"] == 30 * len(cells)
    cycle_rf = [r["total_seconds"] for r in ok if (r["dataset"], r["method"]) == ("cycle", "RF")]  # none resumed
    assert table1["full_seconds"] >= table1["seconds"] + (30 - len(cycle_rf)) * statistics.median(cycle_rf)
    assert table1["reductions"] == [("1", "cost"), ("2", "cost"), ("3", "cost")]
    assert entry_cost(root, "investigate_hgk_reductions", None)["reductions"] == []  # it only cites Table 1's
    raetsch = entry_cost(root, "ghiasi2010_table2", 100)
    assert raetsch["reductions"][-1] == ("4", "data") and raetsch["full_runs"] == 100 * 58
    assert entry_cost(root, "no_such_config", None) is None
    text = cost_markdown(root, load_index(root)[1])
    assert "| `steinwart2016_table1` |" in text and "In all:" in text
    assert "| 1, 2, 3 (cost); fewer draws: SVM, DNN, HGK, HGK_refit, HGK_cv, HGK_cv_refit |" in text
    assert "| 1, 2, 3 (cost); 4 (data); CV on a subset: GM, CM, CGM; one CV per cell: CM, CGM, CM_full, CGM_full |" \
        in text
    # paper 003's Table 2 runs its 5 draws (fewer than the config's 30 is not fewer than the paper's)
    assert "| training subset: tk_fw, simplemkl; CV on a subset: tk_fw_full |" in text
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "reproduction.yaml").write_text("papers: {'000': x}\nentries: [{config: a, paper: '000', "
                                                          "title: t, paper_splits: many}]\n")
    with pytest.raises(InputError, match="paper_splits"):
        load_index(tmp_path)


def test_timing_notes_say_how_busy_the_machine_was_where_rows_record_their_cpu_time():
    """The CPU share of a run is its CPU time over its wall clock times its threads; the note gives the median and
    range over the ok rows that record it, counts the older rows that do not, and warns below 0.8. No row with CPU
    time: no note (the load is not known, and the report does not guess)."""
    from tkbench.report.checks import timing_notes

    def row(cpu, wall, threads=1, status="ok"):
        out = {"dataset": "liver", "method": "tk_fw", "status": status, "total_seconds": wall,
               "provenance": {"blas_threads": threads}}
        if cpu is not None:
            out["cpu_seconds"] = cpu
        return out

    assert timing_notes(_res([row(None, 10.0), row(None, 5.0)])) == []
    quiet = timing_notes(_res([row(9.5, 10.0), row(19.0, 10.0, threads=2), row(None, 3.0), row(1.0, 1.0, status="failed")]))
    assert len(quiet) == 1 and "median 0.95 (range 0.95-0.95)" in quiet[0]
    assert "1 older rows do not record it" in quiet[0] and "shared their cores" not in quiet[0]
    busy = timing_notes(_res([row(3.0, 10.0), row(5.0, 10.0), row(4.0, 10.0, threads=2)]))
    assert "median 0.30 (range 0.20-0.50)" in busy[0] and "shared their cores" in busy[0]
    assert "older rows" not in busy[0]


def test_the_cost_table_prices_missing_draws_at_the_rows_quiet_price(tmp_path):
    """COST.md's paper-protocol hours: the draws that ran count as they took (wall clock), each missing draw at the
    cell's median price, where a row that records its CPU time is priced at the smaller of the two (a run slowed by
    other sweeps; tkbench.bench.cost.quiet_factor), as the dry run prices it."""
    import json
    import shutil
    from pathlib import Path

    import pytest

    from tkbench.report.cost import entry_cost

    root = Path(__file__).resolve().parents[2]
    name = "investigate_line_search"  # complete, one draw per cell
    (tmp_path / "configs").mkdir()
    shutil.copy(root / "configs" / f"{name}.yaml", tmp_path / "configs" / f"{name}.yaml")
    shutil.copytree(root / "results" / name, tmp_path / "results" / name)
    before = entry_cost(tmp_path, name, 3)  # three draws asked: two missing per cell, at the one row's seconds
    assert before["full_seconds"] == pytest.approx(3 * before["seconds"])
    rows = sorted((tmp_path / "results" / name / "rows").glob("*.json"))
    for path in rows:  # every row made beside other work: a quarter of its wall clock was its own
        row = json.loads(path.read_text())
        row["cpu_seconds"] = row["total_seconds"] / 4 if isinstance(row.get("total_seconds"), int | float) else None
        path.write_text(json.dumps(row))
    after = entry_cost(tmp_path, name, 3)
    assert after["seconds"] == pytest.approx(before["seconds"])  # hours run: as they took
    assert after["full_seconds"] == pytest.approx(before["seconds"] + 2 * before["seconds"] / 4)


def test_the_cost_table_counts_the_paper_draws_only_and_applies_measured_speedups(tmp_path):
    """A cell counts at most the paper's draws (its first splits); "today's defaults" divides the rows a speedup
    names (family, parameter values, an unset parameter as None, training size, made before the change) by its
    factor, the whole run or with part: fit the final fit only; rows it does not name keep their time."""
    import json
    import shutil
    from pathlib import Path

    import pytest

    from tkbench.report.cost import Speedup, cost_markdown, entry_cost
    from tkbench.report.reproduction import Entry

    root = Path(__file__).resolve().parents[2]
    name = "investigate_hgk_reductions"  # three draws of every cell
    (tmp_path / "configs").mkdir()
    shutil.copy(root / "configs" / f"{name}.yaml", tmp_path / "configs" / f"{name}.yaml")
    shutil.copytree(root / "results" / name, tmp_path / "results" / name)
    rows = [json.loads(p.read_text()) for p in (tmp_path / "results" / name / "rows").glob("*.json")]
    for path in (tmp_path / "results" / name / "rows").glob("*.json"):  # no load recorded: prices are wall clock
        row = json.loads(path.read_text())
        row.pop("cpu_seconds", None)
        path.write_text(json.dumps(row))
    ok = [r for r in rows if r.get("status") == "ok"]
    first = [r for r in ok if r["split"] == min(q["split"] for q in ok)]
    one = entry_cost(tmp_path, name, 1)
    assert one["full_seconds"] == pytest.approx(sum(r["total_seconds"] for r in first))  # one draw: the first only
    assert one["today_seconds"] == pytest.approx(one["full_seconds"])  # no speedup named
    family = ok[0]["family"]
    some = next(k for k, v in ok[0]["params"].items() if isinstance(v, str | int | float) and not isinstance(v, bool))
    value = ok[0]["params"][some]
    match = [r for r in first if r["family"] == family and r["params"].get(some) == value]
    assert match
    late = "2999-01-01"
    half = Speedup(name="x", family=family, params={some: (value,)}, before=late, factor=2.0, measured="m")
    whole = entry_cost(tmp_path, name, 1, (half,))
    assert whole["today_seconds"] == pytest.approx(one["full_seconds"] - sum(r["total_seconds"] for r in match) / 2)
    assert whole["speedups_used"] == {"x": len([r for r in ok if r["family"] == family
                                                and r["params"].get(some) == value])}
    fit = Speedup(name="x", family=family, params={some: (value,)}, before=late, factor=2.0, measured="m", part="fit")
    assert entry_cost(tmp_path, name, 1, (fit,))["today_seconds"] == pytest.approx(
        one["full_seconds"] - sum(min(r["total_seconds"], r["fit_seconds"]) for r in match) / 2)
    # not named: another value, an unset parameter where only a value is allowed, made after, too few rows
    for other in (Speedup(name="x", family=family, params={some: ("no such value",)}, before=late, factor=2.0,
                          measured="m"),
                  Speedup(name="x", family=family, params={"no_such_param": (1,)}, before=late, factor=2.0,
                          measured="m"),
                  Speedup(name="x", family=family, params={}, before="2000-01-01", factor=2.0, measured="m"),
                  Speedup(name="x", family=family, params={}, before=late, factor=2.0, measured="m",
                          min_train=10 ** 9),
                  Speedup(name="x", family=family, params={}, before=late, factor=2.0, measured="m",
                          min_features=10 ** 9)):
        assert entry_cost(tmp_path, name, 1, (other,))["today_seconds"] == pytest.approx(one["full_seconds"])
    few = Speedup(name="x", family=family, params={some: (value,)}, before=late, factor=2.0, measured="m",
                  min_features=min(int(r["n_features"]) for r in match))  # every matching row has enough
    assert entry_cost(tmp_path, name, 1, (few,))["today_seconds"] == pytest.approx(whole["today_seconds"])
    unset = Speedup(name="x", family=family, params={"no_such_param": (None,)}, before=late, factor=2.0, measured="m")
    assert entry_cost(tmp_path, name, 1, (unset,))["today_seconds"] < one["full_seconds"]  # None: a row without it
    text = cost_markdown(tmp_path, (Entry(config=name, title="t", paper_splits=1),), (half,))
    assert "## Today's defaults" in text and f"`{name}` {whole['speedups_used']['x']}" in text
    assert f", d >= {few.min_features}, started before" in cost_markdown(  # the scope names the feature floor
        tmp_path, (Entry(config=name, title="t", paper_splits=1),), (few,))


def test_a_speedup_of_the_cv_divides_the_cv_share_of_rows_with_a_cv(tmp_path):
    """``part: cv`` divides a row's own CV seconds only, and names only rows that ran a CV."""
    import json
    import shutil
    from pathlib import Path

    import pytest

    from tkbench.report.cost import Speedup, entry_cost

    root = Path(__file__).resolve().parents[2]
    name = "investigate_hgk_reductions"
    (tmp_path / "configs").mkdir()
    shutil.copy(root / "configs" / f"{name}.yaml", tmp_path / "configs" / f"{name}.yaml")
    shutil.copytree(root / "results" / name, tmp_path / "results" / name)
    paths = sorted((tmp_path / "results" / name / "rows").glob("*.json"))
    rows = []
    for i, path in enumerate(paths):  # every other ok row: a CV of a quarter of its time, the rest its fit
        row = json.loads(path.read_text())
        row.pop("cpu_seconds", None)
        for part in ("warmup_seconds", "predict_seconds", "cv_seconds"):
            row[part] = 0.0
        if row.get("status") == "ok":
            row["fit_seconds"] = 0.75 * row["total_seconds"]
            row["cv_seconds"] = 0.25 * row["total_seconds"] if i % 2 == 0 else 0.0
        path.write_text(json.dumps(row))
        rows.append(row)
    ok = [r for r in rows if r.get("status") == "ok"]
    first = min(r["split"] for r in ok)
    family = ok[0]["family"]
    cv = Speedup(name="x", family=family, params={}, before="2999-01-01", factor=2.0, measured="m", part="cv")
    plain, faster = entry_cost(tmp_path, name, 1), entry_cost(tmp_path, name, 1, (cv,))
    with_cv = [r for r in ok if r["family"] == family and r["cv_seconds"] > 0]
    assert with_cv and len(with_cv) < len([r for r in ok if r["family"] == family])
    assert faster["today_seconds"] == pytest.approx(
        plain["full_seconds"] - sum(r["cv_seconds"] for r in with_cv if r["split"] == first) / 2)
    assert faster["speedups_used"] == {"x": len(with_cv)}


def test_a_malformed_speedup_is_a_clear_input_error(tmp_path):
    import pytest

    from tkbench.errors import InputError
    from tkbench.report.cost import load_speedups

    (tmp_path / "docs").mkdir()
    good = {"name": "x", "family": "tk", "params": "{}", "before": "'2026-11-28'", "factor": "1.5", "measured": "m"}
    assert load_speedups(tmp_path) == ()

    def write(**change):
        item = {**good, **change}
        body = ", ".join(f"{k}: {v}" for k, v in item.items() if v is not None)
        (tmp_path / "docs" / "reproduction.yaml").write_text(f"speedups: [{{{body}}}]\n")

    write()
    (sp,) = load_speedups(tmp_path)
    assert sp.factor == 1.5 and sp.part == "run" and sp.params == {}
    for change, field in [({"factor": "0.5"}, "factor"), ({"factor": "fast"}, "factor"), ({"before": "soon"}, "before"),
                          ({"part": "predict"}, "part"), ({"params": "[a]"}, "params"), ({"min_train": "-1"}, "min_train"),
                          ({"min_features": "many"}, "min_features"),
                          ({"measured": None}, "missing"), ({"speed": "2"}, "unknown")]:
        write(**change)
        with pytest.raises(InputError, match=field) as err:
            load_speedups(tmp_path)
        assert "reproduction.yaml: speedups[0]" in str(err.value)


def test_a_reproduction_index_that_is_not_a_mapping_is_a_clear_input_error(tmp_path):
    """The dry run reads docs/reproduction.yaml's speedups: a file that is a list, not a mapping, is an InputError
    naming it, not a traceback."""
    import pytest

    from tkbench.bench.speedups import load_speedups
    from tkbench.errors import InputError

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "reproduction.yaml").write_text("- speedups\n")
    with pytest.raises(InputError, match=r"reproduction.yaml: expected a mapping .* got list"):
        load_speedups(tmp_path)
