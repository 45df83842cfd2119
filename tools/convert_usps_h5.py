"""One-off conversion of the USPS HDF5 file (``usps.h5`` of the digits data's source) to a NumPy archive; not
used at run time.

h5py is not a tkbench dependency, so the project vendors ``datasets/digits/usps.npz`` instead, made by this
script in a scratch environment that has h5py and numpy (``python -m venv ENV && ENV/bin/pip install h5py numpy``):

    ENV/bin/python tools/convert_usps_h5.py PATH/TO/usps.h5 PATH/TO/usps.t.bz2

It copies the four arrays unchanged (train/data float32 7291 x 256, train/target int32, test/data 2007 x 256,
test/target), checks the HDF5 file's sha256 against the shared manifest's, checks that the test labels equal
those of the LIBSVM test file usps.t.bz2 row for row (its labels are digit + 1), and prints the sha256 of each
array's bytes (recorded in datasets/registry.yaml and checked when the archive is loaded).
"""
from __future__ import annotations

import bz2
import hashlib
import sys
from pathlib import Path

import h5py
import numpy as np

H5_SHA256 = "734f88c541104a956d88be2c95d03b4a463ffd74ccc2ba9c80841fb98e3fcb36"


def main(h5_path: str, libsvm_test: str, out: str = "datasets/digits/usps.npz") -> None:
    digest = hashlib.sha256(Path(h5_path).read_bytes()).hexdigest()
    if digest != H5_SHA256:
        raise SystemExit(f"{h5_path}: sha256 {digest}, expected {H5_SHA256}")
    with h5py.File(h5_path, "r") as f:
        arrays = {f"{part}_{kind}": np.asarray(f[f"{part}/{kind}"][()]) for part in ("train", "test")
                  for kind in ("data", "target")}
    labels = np.array([int(line.split()[0]) - 1 for line in bz2.open(libsvm_test, "rt") if line.strip()])
    if not np.array_equal(labels, arrays["test_target"]):
        raise SystemExit("the HDF5 test labels differ from usps.t.bz2's")
    np.savez_compressed(out, **arrays)
    for name, a in arrays.items():
        print(f"{name}: {a.dtype} {a.shape} sha256 {hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()}")
    print(f"{out}: sha256 {hashlib.sha256(Path(out).read_bytes()).hexdigest()}")


if __name__ == "__main__":
    main(*sys.argv[1:])
