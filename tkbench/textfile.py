"""Reading the user's text files (configs, the dataset registry, reference YAMLs) with one clear error each.

A missing file, a folder, a binary or non-UTF-8 file and a YAML syntax error all become an
:class:`~tkbench.errors.InputError` (exit 2) that names the file, where the problem is and what was found, never a
traceback.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tkbench.errors import InputError


class UnreadableFile(InputError):
    """The file cannot be read as text. ``where`` is ``(file)`` or ``line L, column C``; ``what`` the problem."""

    def __init__(self, path: str | Path, where: str, what: str):
        self.path, self.where, self.what = str(path), where, what
        super().__init__(f"{self.path}: {where}: {what}")


def read_text(path: str | Path, kind: str = "file") -> str:
    """The text of ``path`` decoded as UTF-8; ``kind`` names what was expected in messages ("config file")."""
    path = Path(path)
    if not path.exists():
        raise UnreadableFile(path, "(file)", f"the {kind} does not exist")
    if path.is_dir():
        raise UnreadableFile(path, "(file)", f"a folder, not a {kind}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UnreadableFile(path, "(file)", f"cannot be read ({exc.strerror or exc})") from None
    if b"\x00" in data[:8192]:
        raise UnreadableFile(path, "(file)", f"a binary file, not a {kind} (YAML text)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UnreadableFile(path, f"line {line}", f"byte 0x{data[exc.start]:02x} at offset {exc.start} is not "
                             f"UTF-8: save the {kind} as UTF-8 text") from None


def yaml_problem(exc: yaml.YAMLError) -> tuple[str, str]:
    """``(where, what)`` of a YAML error: the line and column, and the parser's own words with what it found."""
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(file)"
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    return where, f"invalid YAML: {problem}" + (f" ({context})" if context else "")


# The most values a YAML document may stand for once its aliases are expanded. A config or reference file has a
# few thousand; an "alias bomb" (nested anchors, 645 bytes) stands for billions and took more than 2 GB before.
MAX_EXPANDED_NODES = 1_000_000


def expanded_size(node: yaml.Node) -> int:
    """How many nodes ``node`` stands for with every alias expanded (each shared node counted once per use),
    computed in time linear in the composed graph (shared nodes are sized once)."""
    sizes: dict[int, int] = {}

    def size(n: yaml.Node) -> int:
        key = id(n)
        if key not in sizes:
            sizes[key] = 0  # a recursive alias counts 0 on its way round; SafeLoader builds it as a cycle
            if isinstance(n, yaml.SequenceNode):
                total = 1 + sum(size(c) for c in n.value)
            elif isinstance(n, yaml.MappingNode):
                total = 1 + sum(size(k) + size(v) for k, v in n.value)
            else:
                total = 1
            sizes[key] = min(total, 2 * MAX_EXPANDED_NODES)  # stop growing once over the limit
        return sizes[key]

    return size(node)


# libyaml's parser where PyYAML was built with it (the same constructor and resolver as SafeLoader, so the same
# values; about 10x faster: the dataset registry took 0.6 s to parse in pure Python, in every run's child). A file
# it refuses is parsed again by the pure-Python parser, whose messages say more (an undefined alias's name).
FAST_SAFE_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(path: str | Path, kind: str = "YAML file", loader: type = FAST_SAFE_LOADER,
              fallback: type | None = yaml.SafeLoader) -> Any:
    """The parsed YAML document of ``path`` (None for an empty file); errors as :class:`UnreadableFile`. A document
    whose aliases expand to more than :data:`MAX_EXPANDED_NODES` values is refused before it is built. A file that
    ``loader`` refuses is parsed again by ``fallback`` (the pure-Python twin of a libyaml loader), whose error is the
    one raised."""
    text = read_text(path, kind)
    reader = loader(text)
    try:
        node = reader.get_single_node()
        if node is None:
            return None
        if expanded_size(node) > MAX_EXPANDED_NODES:
            raise UnreadableFile(path, "(file)", f"its anchors and aliases expand to more than {MAX_EXPANDED_NODES:,} "
                                 f"values: not a {kind} (a YAML alias bomb?)")
        return reader.construct_document(node)
    except (yaml.YAMLError, RecursionError) as exc:
        if fallback is not None and fallback is not loader:
            return load_yaml(path, kind, fallback, None)  # (raises, with the pure-Python parser's words)
        if isinstance(exc, RecursionError):
            raise UnreadableFile(path, "(file)", f"nested too deeply to be a {kind}") from None
        where, what = yaml_problem(exc)
        raise UnreadableFile(path, where, what) from None
    finally:
        reader.dispose()
