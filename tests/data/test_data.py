"""Datasets: checksums are enforced, label rules give the documented counts, synthetic data are seeded."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.conftest import ROOT
from tkbench.cli import app
from tkbench.data import dataset_fingerprint, load_dataset, train_test_indices
from tkbench.data.registry import _class_codes, registry
from tkbench.errors import ChecksumError, DatasetError

EXPECTED = {  # name: (rows, features, +1 count or None for regression)
    "liver": (345, 6, 200),
    "cancer": (683, 9, 239),
    "heart": (270, 13, 120),
    "pima": (768, 8, 268),
    "ionosphere": (351, 34, 225),
    "sonar": (208, 60, 111),
    "parkinsons": (195, 22, 147),
    "hill_valley": (1212, 100, 606),
    "shill_bidding": (6321, 9, 675),
    "abalone": (4177, 8, 2081),
    "airfoil": (1503, 5, None),
    "ccpp": (9568, 4, None),
    "gas_turbine": (36733, 10, None),
    # paper 002 Table 1 (hierarchical Gaussian kernels)
    "cpusmall": (8192, 12, None),
    "cadata": (20640, 8, None),
    "updrs": (5875, 19, None),
    "magic": (19020, 10, 12332),
    "thyroid_ann": (7200, 21, 534),
    "bank": (45211, 16, 5289),
    "higgs": (10984, 28, 5821),
    "cod_rna": (59535, 8, 19845),
    # paper 004 Table 2: the Raetsch arrays without realisations (issue 52), counts from datasets/MANIFEST.yaml
    "raetsch_flare_solar": (1066, 9, 589),
    "raetsch_splice": (3175, 60, 1527),
    "raetsch_thyroid": (215, 5, 65),
    "raetsch_twonorm": (7400, 20, 3703),
}
MULTICLASS = {  # name: (rows, features, class counts in code order) from datasets/MANIFEST.yaml
    "letter": (20000, 16, None),
    "pendigits": (10992, 16, None),
    "satimage": (6435, 36, [1072 + 461, 479 + 224, 961 + 397, 415 + 211, 470 + 237, 1038 + 470]),
    "shuttle": (43500, 8, [34108, 37, 132, 6748, 2458, 6, 11]),
}


RAETSCH = {"banana", "breast_cancer", "german", "heart", "image", "ringnorm", "titanic", "waveform"}


def test_registry_lists_the_datasets():
    assert set(registry()) == (set(EXPECTED) | set(MULTICLASS) | {f"raetsch_{n}" for n in RAETSCH}
                               | {"mnist", "usps"})


@pytest.mark.parametrize("name", sorted(MULTICLASS))
def test_multiclass_datasets(name):
    rows, features, counts = MULTICLASS[name]
    ds = load_dataset(name)
    assert ds.X.shape == (rows, features) and np.isfinite(ds.X).all()
    classes, found = np.unique(ds.y, return_counts=True)
    assert classes.tolist() == list(range(len(classes)))
    assert found.tolist() == (counts or found.tolist())
    if name == "letter":
        assert len(classes) == 26 and found[0] == 789  # A
    if name == "pendigits":
        assert len(classes) == 10 and found[0] == 780 + 363  # digit 0: training + test file



@pytest.mark.parametrize("name", sorted(MULTICLASS))
def test_multiclass_sets_as_class_code_regression(name):
    """Option task: regression_codes (paper 002's reading): the same rows, the class's rank as a float target."""
    codes = load_dataset(name, {"task": "regression_codes"})
    classes = load_dataset(name)
    assert codes.task == "regression" and codes.y.dtype == float
    np.testing.assert_array_equal(codes.X, classes.X)
    np.testing.assert_array_equal(codes.y, classes.y.astype(float))
    assert codes.fingerprint != classes.fingerprint


def test_class_codes_sort_numbers_as_numbers():
    assert _class_codes(pd.Series(["10", "2", "7", "2"])).tolist() == [2.0, 0.0, 1.0, 0.0]
    assert _class_codes(pd.Series(["b", "a", "c"])).tolist() == [1.0, 0.0, 2.0]

def test_libsvm_format_and_dropped_columns():
    cpu = load_dataset("cpusmall")
    assert cpu.X[0].tolist() == [6, 2, 1036, 103, 114, 1.0, 1.0, 172076, 355965, 2.0, 6527, 1851864] and cpu.y[0] == 90
    assert "time" not in load_dataset("shuttle").feature_names
    updrs = load_dataset("updrs")
    assert "total_UPDRS" not in updrs.feature_names and "subject#" not in updrs.feature_names


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_dataset_shapes_and_labels(name):
    rows, features, positives = EXPECTED[name]
    ds = load_dataset(name)
    assert ds.X.shape == (rows, features)
    assert np.isfinite(ds.X).all()
    if positives is None:
        assert ds.task == "regression" and ds.y.dtype == float
    else:
        assert set(np.unique(ds.y)) == {-1, 1}
        assert int((ds.y == 1).sum()) == positives


def test_dataset_options():
    drinks = load_dataset("liver", {"label": "drinks"})
    assert drinks.X.shape == (345, 5) and int((drinks.y == 1).sum()) == 155
    co = load_dataset("gas_turbine", {"target": "CO"})
    assert "TEY" in co.feature_names and "CO" not in co.feature_names
    assert load_dataset("abalone", {"task": "regression"}).task == "regression"
    ge9 = load_dataset("abalone", {"task": "classification_rings_ge_9"})
    assert ge9.task == "classification" and int((ge9.y == 1).sum()) == 2770
    # a new choice of an existing option leaves the default variant's run keys alone (committed rows stay valid)
    assert dataset_fingerprint("abalone", {})[:10] == "23c6afbc9e"
    ccpp = load_dataset("ccpp", {"task": "classification"})
    assert abs(int((ccpp.y == 1).sum()) - 9568 / 2) <= 50
    with pytest.raises(DatasetError, match="option 'label' = 'nope' is not one of"):
        load_dataset("liver", {"label": "nope"})
    with pytest.raises(DatasetError, match="has no option 'colour'"):
        load_dataset("liver", {"colour": "red"})


def test_checksum_mismatch_is_refused(copied_datasets):
    path = copied_datasets / "liver_bupa.csv"
    data = bytearray(path.read_bytes())
    data[10] = ord("9") if data[10] != ord("9") else ord("8")
    path.write_bytes(bytes(data))
    with pytest.raises(ChecksumError, match=r"liver_bupa.csv: sha256 mismatch for dataset 'liver': expected a166a3"):
        load_dataset("liver")
    result = CliRunner().invoke(app, ["datasets", "verify"])
    assert result.exit_code == 1 and "FAIL" in result.output and "liver" in result.output


def test_missing_file_is_refused(copied_datasets):
    (copied_datasets / "sonar.csv").unlink()
    with pytest.raises(ChecksumError, match="sonar.csv: data file of dataset 'sonar' is missing"):
        load_dataset("sonar")


def test_crlf_files_are_byte_exact():
    # CRLF files must not be normalised by git (.gitattributes): their sha256 covers the CRs
    raw = (ROOT / "datasets" / "shill_bidding.csv").read_bytes()
    assert b"\r\n" in raw
    load_dataset("shill_bidding")


@pytest.mark.parametrize("name,features,classes", [("spiral", 2, 2), ("circle", 2, 2), ("twonorm", 20, 2),
                                                   ("ringnorm", 20, 2), ("waveform", 21, 3)])
def test_synthetic_generators_are_seeded(name, features, classes):
    a = load_dataset(name, {"n_samples": 300, "seed": 3})
    b = load_dataset(name, {"n_samples": 300, "seed": 3})
    c = load_dataset(name, {"n_samples": 300, "seed": 4})
    assert a.X.shape == (300, features) and len(np.unique(a.y)) == classes
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.X, c.X)
    assert a.fingerprint == b.fingerprint != c.fingerprint


def test_breiman_generators_have_the_documented_means():
    two = load_dataset("twonorm", {"n_samples": 20000})
    a = 2 / np.sqrt(20)
    assert np.allclose(two.X[two.y == 1].mean(0), a, atol=0.05)
    ring = load_dataset("ringnorm", {"n_samples": 20000})
    assert np.allclose(ring.X[ring.y == 1].std(0), 2.0, atol=0.1)
    assert np.allclose(ring.X[ring.y == -1].mean(0), 1 / np.sqrt(20), atol=0.05)
    circle = load_dataset("circle", {"n_samples": 20000})
    assert abs(np.mean(circle.y == 1) - 0.5) < 0.02


def test_splits_depend_only_on_seed_and_are_disjoint():
    y = load_dataset("liver").y
    tr1, te1 = train_test_indices(y, test_fraction=0.2, seed=11, stratify=True)
    tr2, te2 = train_test_indices(y, test_fraction=0.2, seed=11, stratify=True)
    tr3, _ = train_test_indices(y, test_fraction=0.2, seed=12, stratify=True)
    np.testing.assert_array_equal(tr1, tr2)
    assert not np.array_equal(tr1, tr3)
    assert len(te1) == 69 and len(np.intersect1d(tr1, te1)) == 0 and len(tr1) + len(te1) == 345
    sub_tr, sub_te = train_test_indices(y, test_fraction=0.2, seed=11, stratify=True, subsample=100)
    assert len(sub_tr) + len(sub_te) == 100


def test_datasets_cli():
    runner = CliRunner()  # (`datasets list`, which reads every dataset: tests/test_terminal_output.py)
    shown = runner.invoke(app, ["datasets", "show", "cancer"])
    assert shown.exit_code == 0 and "dropped 16" in shown.output and "402c5853" in shown.output
    unknown = runner.invoke(app, ["datasets", "show", "emnist"])
    assert unknown.exit_code == 2 and "unknown dataset 'emnist'" in unknown.output
    assert runner.invoke(app, ["datasets", "verify"]).exit_code == 0
