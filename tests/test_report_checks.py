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
        "tk_fw on liver: 2 of 30 final fits stopped before the duality-gap tolerance 0.01 (largest relative gap left 13)."
        " To reach the tolerance: raise max_iter or loosen tol in the method's params; a gap left above 1 usually "
        "means an ill-conditioned problem (try a normalised kernel or a smaller C)."
    ]  # the SDP's row has its own certificate note (issue 48: the note says what to change)
    assert convergence_notes(_res([])) == [] and grid_edge_notes(_res([])) == []
