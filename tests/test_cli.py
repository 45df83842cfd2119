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
