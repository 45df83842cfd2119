"""The command line's own options."""
from __future__ import annotations

from typer.testing import CliRunner

from tkbench import __version__
from tkbench.cli import app


def test_version_and_short_help():
    runner = CliRunner()
    version = runner.invoke(app, ["--version"])
    assert version.exit_code == 0 and version.output.strip() == f"tkbench {__version__}"
    for args in (["-h"], ["run", "-h"], ["report", "-h"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0 and "Usage" in result.output


def test_importing_one_estimator_loads_no_other_family():
    """Issue 48: `from tkbench import TKClassifier` loaded every family (and its solvers); what is left of its
    import time is scikit-learn's own."""
    import subprocess
    import sys

    code = ("import sys; from tkbench import TKClassifier; "
            "print(sorted(m for m in sys.modules if m in ('tkbench.methods.hgk.estimators', 'tkbench.methods.sikl.estimators', "
            "'tkbench.methods.simplemkl.estimators', 'tkbench.methods.nkrr.estimators', 'tkbench.methods.baselines.estimators', 'cvxpy', "
            "'numba', 'matplotlib')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout
    from tkbench.methods import get_family, visible_families

    assert {f.name for f in visible_families()} >= {"tk", "hgk", "sikl", "simplemkl", "nkrr", "svm_rbf"}
    assert get_family("debug_fail").hidden


def test_compile_runs_every_familys_warmup_once_with_one_thread(monkeypatch):
    """`tkbench compile` (run by `make install`) calls each family's ``compile`` (every compiled loop it may run),
    or its warm-up with one thread where it has no ``compile``, which compiles its numba code into numba's disk
    cache, and names each family."""
    from types import SimpleNamespace

    import tkbench.methods as methods

    calls = []
    fake = {"tk": SimpleNamespace(name="tk", compile=lambda: calls.append(("tk", "compile")),
                                  warmup=lambda t: calls.append(("tk", t))),
            "hgk": SimpleNamespace(name="hgk", compile=None, warmup=lambda t: calls.append(("hgk", t))),
            "svm": SimpleNamespace(name="svm", compile=None, warmup=None)}
    monkeypatch.setattr(methods, "load_families", lambda: fake)
    result = CliRunner().invoke(app, ["compile"])
    assert result.exit_code == 0, result.output
    assert sorted(calls) == [("hgk", 1), ("tk", "compile")]
    assert "hgk: compiled code ready" in result.output and "svm" not in result.output
