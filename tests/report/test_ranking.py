"""The one rule for which methods and datasets a ranking across datasets covers (tkbench.report.ranking), used by
the average ranks of every accuracy report and by the leaderboard."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from tkbench.report.ranking import select

NAN = math.nan


def _means():
    # d1..d4 x a, b, c, side: c has no mean on d4 (a sweep, a failure); side is run on d1 only by its config
    return pd.DataFrame({"a": [80.0, 70.0, 60.0, 90.0], "b": [79.0, 71.0, 61.0, 88.0],
                         "c": [78.0, 69.0, 62.0, NAN], "side": [85.0, NAN, NAN, NAN]},
                        index=["d1", "d2", "d3", "d4"])


def test_keeping_the_methods_leaves_out_the_datasets_a_method_misses_by_name():
    chosen = select(_means(), ["a", "b", "c", "side"], {"side"}, keep="methods")
    assert chosen.methods == ["a", "b", "c"] and chosen.confined == ["side"]
    assert chosen.datasets == ["d1", "d2", "d3"]
    assert chosen.dropped == {"d4": ["c"]} and chosen.missing == {}


def test_keeping_the_datasets_leaves_out_the_methods_that_miss_one_by_name():
    chosen = select(_means(), ["a", "b", "c", "side"], {"side"}, keep="datasets")
    assert chosen.methods == ["a", "b"] and chosen.confined == ["side"]
    assert chosen.datasets == ["d1", "d2", "d3", "d4"]
    assert chosen.missing == {"c": ["d4"]} and chosen.dropped == {}


def test_a_method_with_means_on_under_half_the_datasets_is_set_aside_confined_or_sparse():
    means = _means()
    # not restricted by its config: "side" is sparse (its sweep has reached 1 of 4 datasets), set aside all the same
    chosen = select(means, ["a", "b", "c", "side"], set(), keep="methods")
    assert chosen.confined == [] and chosen.sparse == {"side": (1, 4)}
    assert chosen.methods == ["a", "b", "c"] and chosen.datasets == ["d1", "d2", "d3"]
    # on half the datasets (d1, d2 of four): kept, and ranked over those two
    means.loc["d2", "side"] = 75.0
    chosen = select(means, ["a", "b", "c", "side"], {"side"}, keep="methods")
    assert chosen.confined == [] and chosen.sparse == {} and chosen.datasets == ["d1", "d2"]
    assert chosen.dropped == {"d3": ["side"], "d4": ["c", "side"]}


def test_the_rule_stands_down_where_it_would_leave_fewer_than_two_methods():
    means = _means()[["a", "side"]]
    chosen = select(means, ["a", "side"], {"side"}, keep="methods")
    assert chosen.confined == [] and chosen.sparse == {} and chosen.methods == ["a", "side"]
    assert chosen.datasets == ["d1"]


def test_both_ways_agree_where_every_method_has_every_mean_and_the_order_is_the_callers():
    means = _means()[["a", "b"]]
    one = select(means, ["b", "a", "not_in_table"], set(), keep="methods")
    two = select(means, ["b", "a", "not_in_table"], set(), keep="datasets")
    assert one == two and one.methods == ["b", "a"] and one.datasets == ["d1", "d2", "d3", "d4"]


def test_a_dataset_with_no_mean_at_all_is_not_counted_against_anyone():
    means = _means()
    means.loc["d5"] = NAN
    chosen = select(means, ["a", "b", "c", "side"], {"side"}, keep="datasets")
    assert chosen.datasets == ["d1", "d2", "d3", "d4"] and chosen.confined == ["side"]


def test_an_unknown_way_is_an_error():
    with pytest.raises(ValueError, match="keep must be"):
        select(_means(), ["a"], set(), keep="both")


def test_keeping_the_datasets_names_a_sparse_method_with_the_datasets_it_misses():
    chosen = select(_means(), ["a", "b", "c", "side"], set(), keep="datasets")
    assert chosen.sparse == {"side": (1, 4)} and chosen.methods == ["a", "b"]
    assert chosen.missing == {"c": ["d4"], "side": ["d2", "d3", "d4"]}
