"""Which planned runs are finished: the one rule that the report's progress, the leaderboard and the committed-rows
test share (before 2026-11-29 each had its own copy).

A run is finished when its row has an outcome, ``ok``, ``failed`` or ``timeout`` (a failed or timed-out run is
reported with its reason: the SDP refused for lack of memory, say), or when its kind's gate leaves it out before it
starts (a scaling budget's sizes past the first over-budget run: :meth:`tkbench.kinds.base.Kind.gate`). A missing row
or a ``crashed`` one (a sweep interrupted mid-run) is what a resume still has to do.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tkbench.bench.spec import RunSpec

FINISHED = ("ok", "failed", "timeout")


def unfinished(experiment, plan: list[RunSpec], rows: Iterable[dict[str, Any]]) -> list[RunSpec]:
    """The runs of ``plan`` (of ``experiment``) that ``rows`` (row dicts: key, status, and what the kind's gate
    reads) leave to do."""
    from tkbench.kinds import get_kind

    rows = list(rows)
    statuses = {r.get("key"): r.get("status") for r in rows}
    gate = get_kind(experiment.kind).gate(experiment, plan)
    if gate is not None:
        gate.note_rows(rows)
    return [s for s in plan if statuses.get(s.key) not in FINISHED
            and not (gate is not None and s.key not in statuses and gate(s) is not None)]
