"""The one backward-compatibility rule of tkbench's stable keys (run keys, tuning keys, checkpoint fingerprints).

Rows, CV choices and solver checkpoints are found again by a sha256 of what defines them. When a field is added
to one of those identities after keys were stored, it enters the key only when its value differs from the value
every older key implied: so the old keys hold (committed rows, baselines and checkpoints stay valid), and a run
that uses the new field gets a new key. :data:`LATE_FIELDS` lists, per identity, the fields added later and that
implied value; :func:`without_implied` applies the rule.

The same rule covers an estimator default changed after keys were stored (a family's ``changed_defaults``,
``{param: (old, new)}``): a method that leaves the parameter unset now runs with the new default, so the new value
enters its params in the key (a new key: such rows are re-run); a method that sets the old value explicitly has it
dropped from the key, which is then the key its rows had when the old value was the default (they hold).
:func:`with_changed_defaults` applies it. This module is the only place these rules live.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

LATE_FIELDS: dict[str, dict[str, Any]] = {
    # a run's identity (tkbench.bench.plan.RunSpec.identity)
    "run": {"features": None, "landscape": None, "tuning": None, "cv_score": None, "cv_size": None},
    # the CV of one split shared by later splits (tkbench.bench.tuning.tuning_key)
    "tuning": {"cv_score": None, "cv_size": None},  # cv_size: 2026-11-29 (a shared CV honours cv_max_train)
    # an HGK candidate's checkpoint (tkbench.methods.hgk.estimators): step 3's grid search was always on D2, and
    # the gradient steps held alpha fixed, and the annealing's blocks were float64 (annealing_dtype: 2026-12-03)
    "hgk_checkpoint": {"grid_search": "d2", "objective": "fixed_alpha", "annealing_dtype": "float64"},
}


def without_implied(identity: Mapping[str, Any], which: str) -> dict[str, Any]:
    """``identity`` without the late fields of ``which`` that hold the value older keys implied."""
    late = LATE_FIELDS[which]
    return {k: v for k, v in identity.items()
            if not (k in late and (v is None if late[k] is None else v == late[k]))}


def with_changed_defaults(params: Mapping[str, Any], changed: Mapping[str, tuple[Any, Any]]) -> dict[str, Any]:
    """A method's explicit ``params`` as keys see them, after its family changed the defaults in ``changed``
    (``{param: (old default, new default)}``): unset -> the new default is named; set to the old default -> dropped."""
    out = dict(params)
    for name, (old, new) in changed.items():
        if name not in out:
            out[name] = new
        elif out[name] == old:
            del out[name]
    return out
