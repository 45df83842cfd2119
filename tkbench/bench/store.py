"""Result storage: one JSON file per run, ``<out>/rows/<key>.json``, written to a temp name then renamed.

Several workers never share a file, a half-written row is never visible, and a killed sweep leaves only complete
rows; re-running skips keys whose row says ``ok`` and retries the rest. The config that produced the rows is
copied beside them (``config.yaml``) so that ``tkbench report`` and ``tkbench check`` need only the folder.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROWS = "rows"
CONFIG = "config.yaml"


def _default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, Path):
        return str(obj)
    return str(obj)


def write_json_atomic(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, default=_default, indent=1, allow_nan=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class ResultStore:
    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.rows_dir = self.root / ROWS

    def row_path(self, key: str) -> Path:
        return self.rows_dir / f"{key}.json"

    def write_row(self, row: dict[str, Any]) -> Path:
        path = self.row_path(row["key"])
        write_json_atomic(path, row)
        return path

    def read_row(self, key: str) -> dict[str, Any] | None:
        path = self.row_path(key)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None

    def statuses(self) -> dict[str, str]:
        """key -> status of every stored row."""
        return {row["key"]: row.get("status", "?") for row in self.rows()}

    def rows(self) -> list[dict[str, Any]]:
        if not self.rows_dir.is_dir():
            return []
        out = []
        for path in sorted(self.rows_dir.glob("*.json")):
            try:
                row = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                continue  # a damaged file: ignored, the run will be redone
            if isinstance(row, dict) and row.get("key") == path.stem:  # a copied or renamed file is not a row
                out.append(row)
        return out

    def save_config(self, text: str) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / CONFIG
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG
