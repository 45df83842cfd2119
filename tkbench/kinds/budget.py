"""``scaling.budget_seconds``: how far each series of a scaling experiment grows (issue 51)."""
from __future__ import annotations

from tkbench.bench.spec import RunSpec


class SizeBudget:
    """``scaling.budget_seconds``: how far each series (dataset, method, varied value) gets. A run is not started
    when a run of its series at a smaller size took longer than the budget or did not finish ok; the reason names
    the smallest such size. Runs are noted as they finish (and from the rows of earlier sessions, so a resumed
    sweep stops where the uninterrupted one did); with several workers a larger size may already be running when
    a smaller one ends over the budget."""

    def __init__(self, budget: float, plan: list[RunSpec]):
        self.budget = float(budget)
        self.specs = {s.key: s for s in plan}
        self.breaches: dict[tuple, list[tuple[float, str]]] = {}

    @staticmethod
    def series(spec: RunSpec) -> tuple:
        return spec.label, spec.method, None if spec.vary is None else repr(spec.vary.get("value"))

    @staticmethod
    def size(spec: RunSpec) -> float:
        return float("inf") if spec.size is None else float(spec.size)

    def note_rows(self, rows) -> SizeBudget:
        """Note every finished row (dicts with key, status, total_seconds): the rows of earlier sessions."""
        for r in rows:
            self.note(r.get("key"), r.get("status"), r.get("total_seconds"))
        return self

    def note(self, key: str, status: str, seconds: float | None) -> None:
        spec = self.specs.get(key)
        if spec is None:
            return
        if status != "ok":
            why = f"at m = {spec.size if spec.size is not None else 'full'} the run was {status}"
        elif seconds is not None and seconds > self.budget:
            why = (f"at m = {spec.size if spec.size is not None else 'full'} the run took {seconds:.0f} s, over "
                   f"the budget of {self.budget:g} s")
        else:
            return
        self.breaches.setdefault(self.series(spec), []).append((self.size(spec), why))

    def describe(self, pending: list[RunSpec]) -> str:
        """The dry run's line: the rule, and how many of the runs to do it already leaves out."""
        left = sum(self(s) is not None for s in pending)
        return (f"budget: a (dataset, method) series stops growing at its first run over {self.budget:g} s or not "
                f"ok (scaling.budget_seconds); {left} of the {len(pending)} runs to run are left out by the rows so "
                f"far, more may be as the sweep goes")

    def __call__(self, spec: RunSpec) -> str | None:
        below = [b for b in self.breaches.get(self.series(spec), []) if b[0] < self.size(spec)]
        return "not reached: " + min(below)[1] if below else None
