"""The package's shape (issue 49): no two tkbench modules import each other (a run goes one way through the code)."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tkbench"


def import_graph() -> dict[str, set[str]]:
    """Module -> the tkbench modules it imports, at the top or inside a function (``from a import b`` counts as
    the submodule ``a.b`` where one exists)."""
    mods = {}
    for f in PACKAGE.rglob("*.py"):
        parts = f.relative_to(PACKAGE.parent).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tkbench"):
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    graph[m].add(sub if sub in mods else node.module)
            elif isinstance(node, ast.Import):
                graph[m].update(a.name for a in node.names if a.name.startswith("tkbench"))
    return {m: {t for t in targets if t in mods and t != m} for m, targets in graph.items()}


def test_no_two_modules_import_each_other():
    graph = import_graph()
    assert len(graph) > 50 and "tkbench.data.registry" in graph
    mutual = sorted({tuple(sorted((a, b))) for a in graph for b in graph[a] if a in graph[b]})
    # broken on 2026-11-28: data.registry <-> synthetic / user_csv, bench.execute <-> landscape,
    # learners.external <-> registry
    assert mutual == [], mutual


def _family_packages() -> list[str]:
    from tkbench.methods.registry import family_packages

    return family_packages()


def test_each_family_is_one_folder_found_without_a_list():
    """A family is a folder under tkbench/methods: __init__ names its public estimators, estimators.py registers
    it; the registry finds the folders by listing them (no hand-kept list anywhere)."""
    import importlib

    from tkbench.methods import load_families

    packages = _family_packages()
    assert {"tk", "simplemkl", "nkrr", "sikl", "hgk", "baselines"} <= set(packages)
    families = load_families()
    for package in packages:
        assert (PACKAGE / "methods" / package / "estimators.py").is_file(), package
        module = f"tkbench.methods.{package}.estimators"
        owned = [f for f in families.values() if f.build.__module__ == module]
        assert owned, f"{module} registers no family"
        for name in importlib.import_module(f"tkbench.methods.{package}").ESTIMATORS:
            import tkbench

            assert getattr(tkbench, name).__module__ == module
    source = "\n".join(f.read_text(encoding="utf-8") for f in PACKAGE.rglob("*.py"))
    assert "FAMILY_MODULES" not in source and "_ESTIMATORS" not in source


def test_the_machinery_imports_no_family():
    """The runner, plan, config, report and CLI reach the families only through the registry; the shared code and
    the registry import no family; a family imports another only where named here (with the reason)."""
    graph = import_graph()
    families = {p: f"tkbench.methods.{p}" for p in _family_packages()}

    def family_of(module: str) -> str | None:
        return next((p for p, prefix in families.items() if module == prefix or module.startswith(prefix + ".")), None)

    # the density experiment compares kernel classes, the TK class among them (paper 000, Figure 2)
    allowed_outside = {("tkbench.bench.kernel_classes", "tk")}
    # SimpleMKL-TK combines random TK kernels (paper 000, Opt. 25) and warms TK's compiled loops
    allowed_between = {("simplemkl", "tk")}
    problems = []
    for module, targets in graph.items():
        mine = family_of(module)
        for target in targets:
            theirs = family_of(target)
            if theirs is None or theirs == mine:
                continue
            if mine is None and (module, theirs) not in allowed_outside:
                problems.append((module, target))
            if mine is not None and (mine, theirs) not in allowed_between:
                problems.append((module, target))
    assert problems == []


def test_the_key_compatibility_rule_lives_in_one_place():
    """Fields added to a key's identity after keys were stored enter it only when they differ from what older keys
    implied (tkbench.keys); no other module spells that rule out."""
    from tkbench.keys import without_implied

    assert without_implied({"a": 1, "cv_score": None, "features": None}, "run") == {"a": 1}
    assert without_implied({"a": 1, "features": (0, 2)}, "run") == {"a": 1, "features": (0, 2)}
    assert without_implied({"grid_search": "d2", "L": 3}, "hgk_checkpoint") == {"L": 3}
    assert without_implied({"grid_search": "cv"}, "hgk_checkpoint") == {"grid_search": "cv"}
    for f in PACKAGE.rglob("*.py"):
        text = f.read_text(encoding="utf-8")
        if f.name != "keys.py":
            assert "so old keys hold" not in text and "OPTIONAL_FIELDS" not in text, f


def test_no_branch_on_an_experiment_kind_outside_its_class():
    """Each experiment kind is one class (tkbench.kinds) that validates, plans, executes and reports; the config,
    plan, runner and report ask it and never compare a kind's name (issue 49: 45 such branches before)."""
    import re

    from tkbench.kinds import KINDS

    names = "|".join(KINDS)
    branch = re.compile(r"kind[\"'\]]*\s*(==|!=)\s*[\"'](" + names + r")[\"']|kind\s+(not\s+)?in\s*\([\"'](" + names + ")")
    found = [f"{f.relative_to(PACKAGE)}:{i}" for f in PACKAGE.rglob("*.py") if "kinds" not in f.parts
             for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1) if branch.search(line)]
    assert found == []
    assert set(KINDS) == {"accuracy", "convergence", "scaling", "surface", "density", "landscape"}
    for kind in KINDS.values():  # every kind says what it is
        assert kind.name and kind.summary


def test_the_tests_mirror_the_package():
    """A family's tests sit together (tests/methods/<family>/), beside those of the kinds, the run machinery, the
    report, the config and the data (issue 49)."""
    tests = Path(__file__).resolve().parent
    for package in _family_packages():
        if package == "debug":  # the failing method of the runner's tests (tests/bench)
            continue
        folder = tests / "methods" / package
        if package == "baselines":  # covered with every family by tests/methods/test_learners.py
            assert (tests / "methods" / "test_learners.py").is_file()
            continue
        assert folder.is_dir() and any(folder.glob("test_*.py")), package
    for part in ("kinds", "bench", "report", "config", "data", "methods/_shared"):
        assert any((tests / part).glob("test_*.py")), part
