"""Issue 48's audit of hostile inputs: each exits 2 before anything is computed, with one message naming the file,
the field or line, the value and what was expected; never a traceback."""
from __future__ import annotations

import gzip

import pytest
import yaml
from typer.testing import CliRunner

from tkbench.cli import app


def _invoke(*args: str):
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output + (result.stderr if result.stderr_bytes is not None else "")


def _dry_run(tmp_path, cfg) -> tuple[int, str]:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    code, text = _invoke("run", str(path), "--dry-run", "--out", str(tmp_path / "out"))
    assert "Traceback" not in text and 'File "' not in text, text
    return code, " ".join(text.split())


def _one(**kw):
    base = {"name": "h", "protocol": {"splits": 2, "test_fraction": 0.25, "seed": 1, "cv_folds": 2},
            "datasets": ["liver"], "methods": [{"name": "rf", "family": "random_forest",
                                                "params": {"n_estimators": 5}, "grid": {}}]}
    return {**base, **kw}


@pytest.mark.parametrize("cfg, expected", [
    (_one(protocol={"splits": 2, "test_fraction": 0.999, "seed": 1}), "protocol.test_fraction: 0.999: a fraction"),
    (_one(datasets=[{"name": "liver", "features": [0, 99]}]), "datasets[0].features: [0, 99]: columns of liver"),
    (_one(datasets=[{"name": "waveform", "options": {"n_samples": float("nan")}}]),
     "option n_samples: nan: expected an integer from 4"),
    (_one(datasets=[{"name": "waveform", "options": {"n_samples": 10**13}}]),
     "option n_samples: 10000000000000: expected an integer from 4 to 10000000"),
    (_one(datasets=[{"name": "spiral", "options": {"noise": float("inf")}}]), "option noise: inf: expected a finite"),
    (_one(methods=[{"name": "p", "estimator": "sklearn.pipeline.Pipeline"}]),
     "can be built without arguments, its settings coming from params and grid (Pipeline() failed"),
    (_one(methods=[{"name": "p", "estimator": ".foo.Bar"}]), "an absolute dotted import path"),
])
def test_config_values_that_would_fail_every_run_are_refused_by_the_dry_run(tmp_path, cfg, expected):
    code, text = _dry_run(tmp_path, cfg)
    assert code == 2 and expected in text, text
    assert str(tmp_path / "c.yaml") in text or "c.yaml" in text


def _rows(n=40):
    import random

    rng = random.Random(0)
    return [(rng.random(), rng.random(), rng.choice("ab")) for _ in range(n)]


def _csv_cases():
    rows = _rows()
    body = "\n".join(f"{a},{b},{y}" for a, b, y in rows) + "\n"
    return {
        "dup": (b"y,y\n" + "\n".join(f"{y},{y}" for _, _, y in rows).encode(), "line 1: duplicate column name(s) ['y']"),
        "emptytarget": (("a,b,y\n" + "\n".join(f"{a},{b},{'' if i == 3 else y}" for i, (a, b, y) in enumerate(rows))
                         ).encode(), "line 5: the target 'y' is empty"),
        "gzip": (gzip.compress(("a,b,y\n" + body).encode()), "gzip-compressed: decompress it first"),
        "latin1": (("a,b,y\n" + "\n".join(f"{a},{b},{'é' if y == 'a' else 'b'}" for a, b, y in rows)).encode("latin-1"),
                   "is not UTF-8: save the file as UTF-8"),
        "empty": (b"", "the file is empty"),
        "headeronly": (b"a,b,y\n", "a header but no data rows"),
        "ragged": (("a,b,y\n" + "\n".join(f"{a},{b},{y}" + (",9" if i == 5 else "") for i, (a, b, y) in
                                         enumerate(rows))).encode(), "line 7: 4 fields, expected 3"),
        "short": (("a,b,y\n" + "\n".join(f"{a},{b},{y}" if i != 2 else f"{a},{y}" for i, (a, b, y) in
                                        enumerate(rows))).encode(), "line 4: 2 fields, expected 3"),
        "huge": (("a,b,y\n" + "\n".join(f"{1e300 if i % 2 else -1e300},{b},{y}" for i, (_, b, y) in enumerate(rows))
                  ).encode(), "column 'a': -1e+300: beyond +-1e+100"),
        "inf": (("a,b,y\n" + "\n".join(f"{'inf' if i == 4 else a},{b},{y}" for i, (a, b, y) in enumerate(rows))
                 ).encode(), "line 6: column 'a': 'inf': not numeric: expected a finite number"),
        "nofeature": (("y\n" + "\n".join(y for *_, y in rows)).encode(), "no feature column"),
    }


@pytest.mark.parametrize("case", sorted(_csv_cases()))
def test_a_users_csv_file_is_read_safely(tmp_path, case):
    content, expected = _csv_cases()[case]
    (tmp_path / "mine.csv").write_bytes(content)
    cfg = _one(datasets=[{"csv": "mine.csv", "target": "y", "task": "classification"}])
    code, text = _dry_run(tmp_path, cfg)
    assert code == 2 and expected in text and "mine.csv" in text, text


def test_a_yaml_alias_bomb_is_refused_quickly(tmp_path):
    """645 bytes that stand for billions of values: refused from the composed graph, before anything is built."""
    import resource
    import time

    text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    prev = "a"
    for name in "bcdefghi":
        text += f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]\n"
        prev = name
    text += "name: [" + ",".join(["*i"] * 9) + "]\n"
    assert len(text) < 700
    path = tmp_path / "bomb.yaml"
    path.write_text(text)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    code, out = _invoke("run", str(path), "--dry-run")
    assert code == 2 and "expand to more than 1,000,000 values" in out, out
    assert time.perf_counter() - t0 < 30 and resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 500_000


def test_error_messages_show_a_bounded_value():
    from tkbench.errors import _show

    inner = ["x"] * 9
    for _ in range(8):
        inner = [inner] * 9  # 9^9 strings if rendered whole
    assert len(_show(inner)) <= 120 and _show(None) == "null" and _show("abc") == "'abc'"
