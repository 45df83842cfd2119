"""What the forkserver imports once, before it forks the children that run (:mod:`tkbench.bench.isolation`).

Every run's child looks up its family in the registry, which imports every family's ``estimators`` module (and
through them scikit-learn's ensemble, tree, neighbours, neural-net... modules): about 120 modules, 0.5-0.7 s. Done
in each child, that was paid per run and lost when the child exited (more than the whole fit of a small baseline
run); done here, the children inherit it. Heavy optional stacks (numba's compiled passes, torch for the peers)
stay lazy: the families import them inside the fit, so a sweep that does not use them does not pay for them.
"""
import gc

from tkbench.bench import execute  # noqa: F401 (the run's own code)
from tkbench.methods import registry

try:
    registry.load_families()
except Exception:  # noqa: BLE001 (a family that fails to import: the registry stays unloaded, so each child loads
    pass  # it again, meets the same error in its own lookup and records it as its run's failure, with its words)

# Everything imported so far is for life: keep it out of the garbage collector's sweeps (gc.freeze, the documented
# recipe for a process that forks without exec). Otherwise each child's first full collection walked the whole
# inherited heap (about 10^6 objects, 0.1-0.2 s) and, by writing to every object's header, copied every page of it.
gc.freeze()
