"""Loading an experiment config: the YAML (duplicate keys refused), pydantic validation with one error per problem
(``file: key.path: value: what was expected``), the user's CSV files read for their checksums, then the checks of
:mod:`tkbench.config.checks` and the paper reference files."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from tkbench.config.checks import check_semantics, paper_only_problems
from tkbench.config.schema import Experiment, resolve_reference
from tkbench.errors import NOTHING, ConfigError
from tkbench.textfile import FAST_SAFE_LOADER, UnreadableFile, load_yaml


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader refusing duplicate keys: pure Python, so its messages say the most (used for a file the fast
    twin below refuses)."""


class _FastUniqueKeyLoader(FAST_SAFE_LOADER):
    """The same on libyaml's parser where PyYAML has it: 0.06 s -> about 0.006 s a config (the report's ``--all``
    loads every committed config, several times)."""


def _mapping_no_duplicates(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen[key] = loader.construct_object(value_node, deep=deep)
    return seen


for _loader in (_UniqueKeyLoader, _FastUniqueKeyLoader):
    _loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_no_duplicates)


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("function-after[_from_string()]",) or str(part).startswith(("function-", "constrained-")):
            continue
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _expected(err: dict[str, Any]) -> str:
    typ, msg = err["type"], err["msg"]
    if typ == "extra_forbidden":
        return "unknown key (check the spelling; see the config reference in README.md)"
    if typ == "missing":
        return "required key is missing"
    if msg.startswith("Value error, "):
        return "expected " + msg[len("Value error, "):]
    return "expected: " + msg[0].lower() + msg[1:]


def _input_at(raw: Any, loc: tuple[Any, ...]) -> Any:
    node = raw
    for part in loc:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def _is_tag(part: Any) -> bool:
    """A part of pydantic's error location that names a validator or a union member, not a key."""
    return isinstance(part, str) and (part.startswith(("function-", "constrained-")) or "[" in part
                                      or part in ("int", "str", "float", "bool", "list"))


def _one_per_union(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """pydantic reports a value against every member of a union (``max_train: 5`` is not a mapping; ``{liver: 3}``
    is not an integer): per location keep the member that took the value's type (its error says what is wrong
    with the value), and when none did, one error saying what the members take."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    order = []
    for err in errors:
        at = next((i for i, part in enumerate(err["loc"]) if _is_tag(part)), None)
        key = tuple(err["loc"][:at]) if at is not None else ("#", id(err))
        if key not in groups:
            order.append(key)
        groups.setdefault(key, []).append(err)
    out = []
    for key in order:
        group = groups[key]
        if len(group) == 1 or key[0] == "#":
            out += group
            continue
        # the member whose error lies inside the value (a mapping's entry), or that took the value's type
        meant = [e for e in group if len(e["loc"]) > len(key) + 1] or \
            [e for e in group if not e["type"].endswith("_type")]
        if meant:
            out += meant
        else:
            said = " or ".join(dict.fromkeys(e["msg"].replace("Input should be ", "") for e in group))
            out.append({**group[0], "loc": key, "msg": f"Input should be {said}"})
    return out


def parse_config(raw: Any, file: str | Path = "<config>", base: Path | None = None) -> Experiment:
    """Validate an already-loaded YAML document; ``base`` is the folder CSV paths are relative to (default: the
    file's)."""
    file = str(file)
    if not isinstance(raw, dict):
        raise ConfigError(file, [("(top level)", raw, "expected a mapping with name, protocol, datasets, methods")])
    try:
        exp = Experiment.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for err in _one_per_union(exc.errors()):
            loc = tuple(p for p in err["loc"] if not _is_tag(p))
            value = err.get("input") if err["type"] != "missing" and loc else NOTHING  # (top level: not the file)
            if err["type"] == "extra_forbidden":
                value = _input_at(raw, loc)
            problems.append((_loc(loc), value, _expected(err)))
        raise ConfigError(file, problems) from None
    exp = _resolve_csv(exp, file, base)
    problems = check_semantics(exp)
    if problems:
        raise ConfigError(file, problems)
    return exp


def _resolve_csv(exp: Experiment, file: str, base: Path | None = None) -> Experiment:
    """Each ``csv`` entry's file, relative to the config file (to the current directory for a config without a
    file), read for its sha256 into the entry's options (:func:`tkbench.data.user_csv.options_for`)."""
    from tkbench.data import user_csv

    if not any(ds.csv for ds in exp.datasets):
        return exp
    if base is None:
        base = Path(file).parent if not file.startswith("<") else Path.cwd()
    entries, problems = [], []
    for i, ds in enumerate(exp.datasets):
        if ds.csv is None:
            entries.append(ds)
            continue
        path = base / ds.csv
        if not path.is_file():
            problems.append((f"datasets[{i}].csv", ds.csv, f"a CSV file that exists (looked for {path.absolute()})"))
            entries.append(ds)
            continue
        rule = {k: getattr(ds, k) for k in user_csv.RULE_FIELDS}
        rule["threshold"] = ds.threshold.model_dump() if ds.threshold is not None else None
        entries.append(ds.model_copy(update={"options": user_csv.options_for(path, rule)}))
    if problems:
        raise ConfigError(file, problems)
    resolved = exp.model_copy(update={"datasets": entries})
    resolved._source = exp._source
    return resolved


def load_config(path: str | Path, check_reference: bool = True, base: Path | None = None) -> Experiment:
    """Read, parse and validate an experiment config (``base``: the folder its CSV paths are relative to, when not
    the file's own: a config copied into a results folder)."""
    path = Path(path)
    try:
        raw = load_yaml(path, "config file", _FastUniqueKeyLoader, fallback=_UniqueKeyLoader)
    except UnreadableFile as exc:
        raise ConfigError(str(path), [(exc.where, NOTHING, exc.what)]) from None
    if raw is None:
        raise ConfigError(str(path), [("(file)", NOTHING, "the file is empty (or only comments): expected a mapping with "
                                       "name, protocol, datasets, methods")])
    exp = parse_config(raw, path, base)
    exp._source = path.resolve()
    ref = exp.reference_path()
    if check_reference and ref is not None and not ref.exists():
        raise ConfigError(str(path), [("reference", exp.reference, "a reference YAML file that exists")])
    if check_reference and ref is not None and (exp.no_data or exp.not_run):
        problems = paper_only_problems(exp, ref)
        if problems:
            raise ConfigError(str(path), problems)
    if (check_reference and exp.evaluation is not None and exp.evaluation.reference is not None
            and not resolve_reference(exp.evaluation.reference, exp._source).exists()):
        raise ConfigError(str(path), [("evaluation.reference", exp.evaluation.reference,
                                       "a reference YAML file that exists")])
    return exp
