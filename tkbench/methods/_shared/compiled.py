"""When the TK passes run compiled (numba) and when in NumPy: the one place for that decision.

numba caches its machine code on disk, yet a process pays a fixed price before its first compiled call returns:
importing numba (about 0.3 s on this machine) and, at that first call, loading numba's lowering registries and
the cached code (0.35-0.5 s, whatever the function; measured with a one-line ``@njit(cache=True)`` function).
For a small TK problem in a fresh process that price is most of the fit: Liver (m = 276, C = 10, delta = 0.1,
d = 1, basis x; one thread, 2026-11-25) took 0.39 s for the first fit and 0.04 s for the second. So:

- ``TKBENCH_TK_ENGINE=numpy`` or ``=numba`` forces an engine (``numpy`` is the reference implementation);
- otherwise a pass runs compiled once this process has loaded the compiled code (:func:`mark_loaded`: the
  runner's warm-up, an SMO solve, or an earlier large pass), and whenever it covers more than ``SMALL_PAIRS``
  (x, y) pairs, where the compiled pass saves more than the price within one fit;
- below that it runs in NumPy until the time spent in such NumPy passes reaches ``LOAD_SECONDS``, and compiled
  from then on (ski rental: the time given to the slower engine never exceeds the one-time price, so a run of
  many small fits, e.g. a grid search in a fresh process, costs at most about twice what the better choice known
  in advance would).

Sweeps are not affected: the runner's warm-up loads the compiled code before any timed fit, so every pass of a
run is compiled, as before. The two engines agree to rounding (``tests/methods/tk/test_tk_engine.py``); a process that
switches engines between two fits of the same data gives the same model up to that rounding.
"""
from __future__ import annotations

import os
from functools import lru_cache
from importlib.util import find_spec

SMALL_PAIRS = 1_000_000  # (x, y) pairs of one pass; above this the compiled pass is taken at once
LOAD_SECONDS = 0.4  # the one-time price of the compiled code in a fresh process (see above)
ENV = "TKBENCH_TK_ENGINE"

_state = {"loaded": False, "numpy_seconds": 0.0}


@lru_cache(maxsize=1)
def available() -> bool:
    """numba is installed (checked without importing it)."""
    return find_spec("numba") is not None


def forced() -> str | None:
    value = os.environ.get(ENV, "").strip().lower()
    return value if value in ("numpy", "numba") else None


def use_compiled(pairs: int | None = None) -> bool:
    """Whether a pass over ``pairs`` (x, y) pairs should run compiled (None: a pass of unknown size, compiled)."""
    choice = forced()
    if choice == "numpy" or not available():
        return False
    if (choice == "numba" or _state["loaded"] or pairs is None or pairs > SMALL_PAIRS
            or _state["numpy_seconds"] >= LOAD_SECONDS):
        _state["loaded"] = True
        return True
    return False


def charge(seconds: float) -> None:
    """Record the time of a NumPy pass that could have run compiled."""
    _state["numpy_seconds"] += float(seconds)


def mark_loaded() -> None:
    """The compiled code is (being) loaded in this process: every later pass runs compiled."""
    _state["loaded"] = True


def loaded() -> bool:
    return bool(_state["loaded"])


def set_threads(threads: int) -> None:
    """numba's parallel loops (``prange``) on at most ``threads`` threads: a run's budget (``--threads``,
    ``protocol.blas_threads``), which threadpoolctl, bounding BLAS, does not reach; numba's own default is a thread
    per core. Imports numba; the families' warm-ups call it."""
    import numba

    numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))


def reset() -> None:
    """Back to a fresh process's state (tests)."""
    _state.update(loaded=False, numpy_seconds=0.0)
