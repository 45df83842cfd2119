"""Issue 48's audit of hostile inputs: each exits 2 before anything is computed, with one message naming the file,
the field or line, the value and what was expected; never a traceback."""
from __future__ import annotations

import gzip
import re

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
    (_one(datasets=[{"name": "twonorm", "options": {"n_samples": 10_000_000, "n_features": 10_000}}]),
     "n_samples x features = 10000000 x 10000: expected at most"),
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


# --- the results folder's own files -------------------------------------------------------------------------------

def _tiny_run(tmp_path, **overrides):
    """A finished sweep of a tiny config (2 splits of liver, a 5-tree forest): (config path, results folder)."""
    cfg = _one(**overrides)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    out = tmp_path / "out"
    code, text = _invoke("run", str(path), "--out", str(out), "--no-progress")
    assert code == 0, text
    return path, out


@pytest.mark.parametrize("content, problem", [
    (b"\xff\xfe{}", "not UTF-8"),
    (b"[1, 2, 3]", "not a row: expected a JSON object"),
    (b'{"key": "KEY", "status": "ok", "dataset": "liver", "method": "rf", "split": "zero"}', "split 'zero'"),
    (b'{"key": "KEY", "status": "great", "dataset": "liver", "method": "rf", "split": 0}', "status 'great'"),
    (b'{"key": "KEY", "status": "ok", "dataset": "liver", "method": "rf", "split": 0, "accuracy": "high"}',
     "accuracy 'high'"),
    (b'{"key": "other", "status": "ok", "dataset": "liver", "method": "rf", "split": 0}', "is not its file name"),
])
def test_a_damaged_row_file_is_named_set_aside_and_its_run_redone(tmp_path, content, problem):
    import json

    from tkbench.bench.store import ResultStore

    path, out = _tiny_run(tmp_path)
    rows = sorted((out / "rows").glob("*.json"))
    victim, keep = rows[0], json.loads(rows[1].read_text())
    victim.write_bytes(content.replace(b"KEY", victim.stem.encode()))
    code, text = _invoke("report", str(out))  # the report names it and leaves it out
    assert code == 0 and "Traceback" not in text, text
    report = (out / "report" / "report.md").read_text()
    assert f"Damaged row file left out: {victim}" in report and problem in report
    code, text = _invoke("run", str(path), "--out", str(out), "--no-progress")
    flat = " ".join(text.split())
    assert code == 0 and "damaged row file set aside as" in flat and problem in flat, text
    assert (out / "damaged" / victim.name).read_bytes() == content.replace(b"KEY", victim.stem.encode())
    store = ResultStore(out)
    assert store.statuses()[victim.stem] == "ok" and not store.damaged()
    assert json.loads(rows[1].read_text()) == keep  # the other ok row is untouched


def test_a_corrupt_meta_file_is_named(tmp_path):
    _, out = _tiny_run(tmp_path)
    (out / "meta.json").write_text("{not json")
    code, text = _invoke("report", str(out))
    flat = " ".join(text.split())
    assert code == 2 and "meta.json: not a tkbench meta file" in flat and "Traceback" not in text, text


def test_a_corrupt_tuning_cache_is_set_aside_and_recomputed(tmp_path):
    import json

    from tkbench.bench.store import ResultStore

    path, out = _tiny_run(tmp_path, protocol={"splits": 2, "test_fraction": 0.25, "seed": 1, "cv_folds": 2,
                                              "tune_on_first": 1},
                          methods=[{"name": "rf", "family": "random_forest", "params": {"n_estimators": 5},
                                    "grid": {"max_depth": [2, 4]}}])
    cache = sorted((out / "tuning").glob("*.json"))
    assert cache, list(out.iterdir())
    cache[0].write_text('{"chosen": "garbage"')
    code, text = _invoke("run", str(path), "--out", str(out), "--no-progress", "--force")
    assert code == 0, text
    rows = ResultStore(out).rows()
    assert rows and all(r["status"] == "ok" for r in rows), [r.get("error") for r in rows]
    assert cache[0].with_name(cache[0].name + ".damaged").exists()
    assert json.loads(cache[0].read_text())["chosen"]  # recomputed
    assert any("damaged_cache_set_aside" in json.dumps(r.get("cv")) for r in rows)


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d["entries"][0].update(mean=float("nan")), "entries[0].mean: nan: expected a finite number"),
    (lambda d: d["entries"][0].update(mean="73"), "entries[0].mean: '73': expected a finite number"),
    (lambda d: d["entries"][0].update(n_ok=True), "entries[0].n_ok: True"),
    (lambda d: d["entries"][0].update(tolerance={"abs": -1}), "entries[0].tolerance"),
    (lambda d: d["entries"][0].update(metric="speed"), "entries[0].metric: 'speed'"),
    (lambda d: d.update(entries=[]), "expected at least one entry"),
    (lambda d: d["entries"].append(7), "entries[1].expected an object"),
])
def test_a_baseline_with_wrong_types_is_refused(tmp_path, mutate, expected):
    import json

    baseline = tmp_path / "b.json"
    data = {"format": 1, "entries": [{"dataset": "liver", "method": "rf", "metric": "accuracy", "mean": 70.0,
                                      "std": 1.0, "n_ok": 2, "tolerance": {"abs": 1.0}}]}
    mutate(data)
    baseline.write_text(json.dumps(data))
    _, out = _tiny_run(tmp_path)
    code, text = _invoke("check", str(out), "--baseline", str(baseline))
    assert code == 2 and expected in " ".join(text.split()) and "Traceback" not in text, text


def test_a_baseline_is_never_written_from_a_folder_without_an_ok_run(tmp_path):
    from tkbench.bench.store import ResultStore

    _, out = _tiny_run(tmp_path)
    store = ResultStore(out)
    for row in store.rows():
        store.write_row({**row, "status": "failed", "error": "x", "accuracy": None})
    code, text = _invoke("baseline", str(out), "-o", str(tmp_path / "b.json"))
    assert code == 2 and "no ok run to take a baseline from" in " ".join(text.split()), text
    assert not (tmp_path / "b.json").exists()


@pytest.mark.parametrize("value, where", [
    ({"liver": {"rf": {"accuracy": ["high", 1.0]}}}, "results.liver.rf.accuracy"),
    ({"liver": {"rf": {"accuracy": [70.0]}}}, "results.liver.rf.accuracy"),
    ({"liver": ["rf"]}, "results.liver"),
    ({"liver": {"rf": "70 +- 1"}}, "results.liver.rf"),
])
def test_a_reference_file_with_wrong_types_is_named(tmp_path, value, where):
    (tmp_path / "paper.yaml").write_text(yaml.safe_dump({"source": "p", "table": "T", "results": value}))
    _, out = _tiny_run(tmp_path, reference="paper.yaml")
    code, text = _invoke("report", str(out))
    flat = " ".join(text.split())
    assert code == 2 and f"paper.yaml: {where}" in flat and "expected" in flat and "Traceback" not in text, text


def test_two_configs_into_one_folder_are_refused(tmp_path):
    path, out = _tiny_run(tmp_path)
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump(_one(name="other")))
    code, text = _invoke("run", str(other), "--out", str(out), "--dry-run")
    flat = " ".join(text.split())
    assert code == 2 and f"holds the rows of {path}" in flat and str(other) in flat, text
    path.write_text(yaml.safe_dump(_one(protocol={"splits": 3, "test_fraction": 0.25, "seed": 1})))
    code, text = _invoke("run", str(path), "--out", str(out), "--dry-run")  # the same config, edited: fine
    assert code == 0, text


def test_only_that_matches_nothing_exits_2_listing_the_cells(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(_one()))
    code, text = _invoke("run", str(path), "--dry-run", "--only", "liver/svm")
    flat = " ".join(text.split())
    assert code == 2 and "--only 'liver/svm' matches no run" in flat and "liver/rf" in flat, text
    assert _invoke("run", str(path), "--dry-run", "--only", "liver/r*")[0] == 0
    # several patterns in one value, comma-separated: each must match
    assert _invoke("run", str(path), "--dry-run", "--only", "liver/r*, liver/rf")[0] == 0
    code, text = _invoke("run", str(path), "--dry-run", "--only", "liver/r*,nosuch/*")
    assert code == 2 and "--only 'nosuch/*' matches no run" in " ".join(text.split()), text


@pytest.mark.parametrize("make_out, expected", [
    (lambda tmp: tmp / ("x" * 300), "File name too long"),
    (lambda tmp: (tmp / "afile").write_text("") or tmp / "afile", "a file, not a folder"),
    (lambda tmp: (tmp / "afile").write_text("") or tmp / "afile" / "sub", "a part of the path is a file"),
])
def test_output_paths_that_cannot_be_written_exit_2_naming_them(tmp_path, make_out, expected):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(_one()))
    out = make_out(tmp_path)
    code, text = _invoke("run", str(path), "--out", str(out), "--no-progress")
    flat = " ".join(text.split())
    assert code == 2 and expected in flat and "Traceback" not in text, text


# --- valid-looking settings that gave wrong answers -----------------------------------------------------------------

def _data(n=60, p=3, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p))
    return X, np.sin(2 * X[:, 0]) / 2


@pytest.mark.parametrize("params, expected", [
    ({"lambdas": [-1.0]}, "lambdas = [-1.0]: expected a non-empty list of positive"),
    ({"gammas": [0.0]}, "gammas = [0.0]: expected a non-empty list of positive"),
    ({"lambdas": []}, "lambdas = []"),
    # scikit-learn's own message since issue 49 (the parameter declared in _parameter_constraints)
    ({"step_scale": float("nan")}, "'step_scale' parameter of HGKRegressor must be a float in the range (0.0, inf). Got nan"),
])
def test_hgk_refuses_grids_that_fit_a_wrong_model(params, expected):
    from tkbench import HGKRegressor

    X, y = _data()
    with pytest.raises(ValueError, match=re.escape(expected)):
        HGKRegressor(L=1, M=1, N1=1, N2=1, N3=1, **params).fit(X, y)


def test_hgk_regressor_scales_targets_it_would_otherwise_clip():
    """Issue 48: HGKRegressor clipped predictions to [-1, 1] silently (R^2 -0.018 on unscaled targets)."""
    import numpy as np

    from tkbench import HGKRegressor

    X, y = _data()
    small = dict(L=1, M=2, N1=2, N2=2, N3=1, random_state=0)
    scaled = HGKRegressor(**small).fit(X, y)  # targets in [-1, 1]: used as they are
    assert (scaled.target_offset_, scaled.target_scale_) == (0.0, 1.0)
    wide = HGKRegressor(**small).fit(X, 10 * y + 5)  # targets in [0.2, 9.8]: mapped onto [-1, 1] and back
    assert wide.target_scale_ > 1 and wide.score(X, 10 * y + 5) > 0.8
    assert np.isclose(wide.predict(X).max(), (10 * y + 5).max(), atol=2.0) and np.all(wide.predict(X) > 0)


@pytest.mark.parametrize("params, expected", [
    ({"widths": [0.0, 1.0]}, "widths = "), ({"widths": [-2.0]}, "widths = "),
    ({"widths": [float("nan")]}, "widths = "), ({"degrees": [0]}, "degrees = "),
])
def test_simplemkl_refuses_kernel_parameters_that_make_nan(params, expected):
    from tkbench import SimpleMKLRegressor

    X, y = _data()
    with pytest.raises(ValueError, match=expected):
        SimpleMKLRegressor(**params).fit(X, y)


def test_simplemkl_refuses_inputs_that_overflow_its_polynomial_kernels():
    import numpy as np

    from tkbench import SimpleMKLClassifier

    X, y = _data()
    X[::2, 0], X[1::2, 0] = 1e300, -1e300
    with pytest.raises(ValueError, match="overflow the library's polynomial kernels"):
        SimpleMKLClassifier().fit(X, np.sign(y) > 0)


def test_nkrr_refuses_inputs_that_overflow_instead_of_predicting_nan():
    import warnings

    import numpy as np

    from tkbench import NKRRRegressor

    X, y = _data()
    big = X.copy()
    big[:, 0] = np.where(np.arange(len(X)) % 2, 1e300, -1e300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match="the fit is not finite"):
            NKRRRegressor().fit(big, y)
        model = NKRRRegressor().fit(X, y)
        with pytest.raises(ValueError, match="predictions are not finite"):
            model.predict(big)
    assert np.all(np.isfinite(model.predict(X)))


def test_tk_warns_when_it_stops_at_max_iter():
    from sklearn.datasets import load_breast_cancer
    from sklearn.exceptions import ConvergenceWarning

    from tkbench import TKClassifier

    X, y = load_breast_cancer(return_X_y=True)
    with pytest.warns(ConvergenceWarning, match=r"max_iter=2[);].*Raise max_iter or loosen tol"):
        model = TKClassifier(max_iter=2, tol=1e-12).fit(X[:120], y[:120])
    assert not model.converged_.all()


def test_a_forced_rerun_that_fails_never_replaces_an_ok_row(tmp_path):
    """Issue 48: `--force` replaced ok rows with failed ones. The same runs (same keys) fail on the re-run here."""
    import json

    from tkbench.bench.store import ResultStore

    flag = tmp_path / "fail-now"
    path, out = _tiny_run(tmp_path, methods=[{"name": "m", "family": "debug_fail",
                                              "params": {"mode": "fail_if_exists", "heartbeat": str(flag)}}])
    before = {r["key"]: r for r in ResultStore(out).rows()}
    assert len(before) == 2 and all(r["status"] == "ok" for r in before.values())
    flag.write_text("")
    code, text = _invoke("run", str(path), "--out", str(out), "--no-progress", "--force")
    assert code == 0 and "the ok row is kept" in " ".join(text.split()), text  # every planned run is ok
    assert {r["key"]: r for r in ResultStore(out).rows()} == before  # the ok rows are untouched
    reruns = sorted((out / "failed_reruns").glob("*.json"))
    assert sorted(p.stem for p in reruns) == sorted(before)
    assert all(json.loads(p.read_text())["status"] == "failed" for p in reruns)


def test_report_and_baseline_outputs_that_cannot_be_written_exit_2(tmp_path):
    _, out = _tiny_run(tmp_path)
    (tmp_path / "afile").write_text("")
    code, text = _invoke("report", str(out), "--out", str(tmp_path / "afile"))
    assert code == 2 and "cannot write the report there: a file, not a folder" in " ".join(text.split()), text
    code, text = _invoke("baseline", str(out), "-o", str(tmp_path / ("b" * 300 + ".json")))
    assert code == 2 and "File name too long" in " ".join(text.split()) and "Traceback" not in text, text
    code, text = _invoke("baseline", str(out), "-o", str(tmp_path / "afile" / "b.json"))
    flat = " ".join(text.split())
    assert code == 2 and ("a part of the path is a file" in flat or "a file, not a folder" in flat), text


def test_yaml_files_read_alike_by_libyaml_and_a_refused_file_keeps_the_pure_python_words(tmp_path):
    """load_yaml parses with libyaml (10x faster: the registry is read by every run) into the very values of
    SafeLoader; a file it refuses is read again by SafeLoader, whose message names more (an undefined alias)."""
    from pathlib import Path

    from tkbench.textfile import FAST_SAFE_LOADER, UnreadableFile, load_yaml

    root = Path(__file__).resolve().parents[1]
    files = [root / "datasets" / "registry.yaml", root / "docs" / "reproduction.yaml",
             *sorted((root / "configs").glob("*.yaml"))]
    assert len(files) > 20
    for path in files:
        assert load_yaml(path) == load_yaml(path, loader=yaml.SafeLoader), path
    bad = tmp_path / "bad.yaml"
    for text, where, what in [("a: *nope\n", "line 1, column 4", "found undefined alias 'nope'"),
                              ("a: 1\nb: [1, 2\n", "line 3, column 1", "expected ',' or ']'")]:
        bad.write_text(text)
        with pytest.raises(UnreadableFile) as caught:
            load_yaml(bad, loader=FAST_SAFE_LOADER)
        assert caught.value.where == where and what in caught.value.what, (caught.value.where, caught.value.what)
