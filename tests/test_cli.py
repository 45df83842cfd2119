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
