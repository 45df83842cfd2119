"""The experiment kinds: one class each (:class:`tkbench.kinds.base.Kind`), which validates its part of a config,
plans its runs, executes one run and builds its report. The config, the plan, the runner and the report ask the
kind; none of them branches on a kind's name.

- ``accuracy`` (:mod:`.accuracy`): the papers' tables;
- ``convergence`` (:mod:`.convergence`): accuracy runs with the solver's per-iteration trace;
- ``surface`` (:mod:`.surface`): accuracy runs with the decision surface on 2-feature data;
- ``scaling`` (:mod:`.scaling`): fit time against m and a parameter;
- ``density`` (:mod:`.density`): kernel classes fitted to the optimal kernel matrix;
- ``landscape`` (:mod:`.landscape`): a family's objective over two kernel weights.
"""
from __future__ import annotations

from tkbench.kinds.accuracy import Accuracy
from tkbench.kinds.base import Kind
from tkbench.kinds.convergence import Convergence
from tkbench.kinds.density import Density
from tkbench.kinds.landscape import Landscape
from tkbench.kinds.scaling import Scaling
from tkbench.kinds.surface import Surface

KINDS: dict[str, Kind] = {k.name: k() for k in (Accuracy, Convergence, Scaling, Surface, Density, Landscape)}
NAMES = tuple(KINDS)


def get_kind(name: str) -> Kind:
    return KINDS[name]


__all__ = ["KINDS", "NAMES", "Kind", "get_kind"]
