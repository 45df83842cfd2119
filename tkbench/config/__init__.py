"""The experiment config: schema (:mod:`.schema`, pydantic models), loading (:mod:`.load`) and the checks that
need the registries (:mod:`.checks`). ``load_config(path)`` is the entry point."""
from tkbench.config.checks import check_semantics
from tkbench.config.load import load_config, parse_config
from tkbench.config.schema import (
    MAX_SPLITS,
    Calibrated,
    Comparison,
    DatasetEntry,
    Evaluation,
    Experiment,
    Landscape,
    Leaderboard,
    MethodEntry,
    Protocol,
    Scaling,
    Threshold,
    VaryParam,
    resolve_reference,
)
from tkbench.errors import ConfigError

__all__ = ["MAX_SPLITS", "Calibrated", "Comparison", "ConfigError", "DatasetEntry", "Evaluation", "Experiment",
           "Landscape", "Leaderboard", "MethodEntry", "Protocol", "Scaling", "Threshold", "VaryParam", "check_semantics",
           "load_config", "parse_config", "resolve_reference"]
