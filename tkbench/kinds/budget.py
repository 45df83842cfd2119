"""``scaling.budget_seconds``: how far each series of a scaling experiment grows (issue 51)."""
from __future__ import annotations

from tkbench.bench.cost import run_seconds
from tkbench.bench.spec import RunSpec


class SizeBudget:
    """``scaling.budget_seconds``: how far each series (dataset, method, varied value) gets. A run is not started
    when a run of its series at a smaller size took longer than the budget or did not finish ok; the reason names
    the smallest such size. Runs are noted as they finish (and from the rows of earlier sessions, so a resumed
    sweep stops where the uninterrupted one did); with several workers a larger size may already be running when
    a smaller one ends over the budget.

    A run that timed out in an earlier session is not run again while its timeout is not larger than that
    attempt's: under a budget it cannot end otherwise, and on resume it would only spend its timeout once more
    (the runner retries every run that did not finish ok). Raising ``protocol.timeout`` retries it."""

    def __init__(self, budget: float, plan: list[RunSpec]):
        self.budget = float(budget)
        self.specs = {s.key: s for s in plan}
        self.breaches: dict[tuple, list[tuple[float, str]]] = {}
        self.timed_out: dict[str, float] = {}  # run key -> the largest timeout it was killed at (earlier rows)

    @staticmethod
    def series(spec: RunSpec) -> tuple:
        return spec.label, spec.method, None if spec.vary is None else repr(spec.vary.get("value"))

    @staticmethod
    def size(spec: RunSpec) -> float:
        return float("inf") if spec.size is None else float(spec.size)

    def note_rows(self, rows) -> SizeBudget:
        """Note every finished row (dicts with key, status, total_seconds): the rows of earlier sessions, each at
        every session its run took (:func:`tkbench.bench.cost.run_seconds`: a run resumed from its saved state
        counts its earlier sessions too)."""
        for r in rows:
            self.note(r.get("key"), r.get("status"), run_seconds(r) if r.get("status") == "ok" else None)
            limit = (r.get("spec") or {}).get("timeout")
            if r.get("status") == "timeout" and limit is not None:
                self.timed_out[r["key"]] = max(float(limit), self.timed_out.get(r["key"], 0.0))
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
        killed_at = self.timed_out.get(spec.key)
        if killed_at is not None and spec.timeout is not None and spec.timeout <= killed_at:
            return (f"not run again: at m = {spec.size if spec.size is not None else 'full'} it timed out at "
                    f"{killed_at:g} s in an earlier attempt (raise protocol.timeout to retry it)")
        below = [b for b in self.breaches.get(self.series(spec), []) if b[0] < self.size(spec)]
        return "not reached: " + min(below)[1] if below else None
