"""The segment line search shared by Frank-Wolfe (paper 003, Algorithm 2) and SimpleMKL."""
import numpy as np
import pytest

from tkbench.methods._shared.line_search import minimise_on_segment


def _quadratic(g_star: float, curvature: float = 1.0):
    """phi(g) = c ((g - g*)^2 - g*^2): convex, phi(0) = 0, minimiser g*."""
    calls = []

    def evaluate(g):
        calls.append(g)
        return curvature * ((g - g_star) ** 2 - g_star ** 2), 2 * curvature * (g - g_star), g

    return evaluate, -2 * curvature * g_star, calls


@pytest.mark.parametrize("g_star", [0.5, 0.03, 1e-3, 1e-5])
def test_finds_a_decrease_on_convex_quadratics(g_star):
    evaluate, slope0, _ = _quadratic(g_star, curvature=1e6)
    g, payload, at_end = minimise_on_segment(evaluate, 0.0, slope0, None)
    assert payload == g and not at_end
    value = 1e6 * ((g - g_star) ** 2 - g_star ** 2)
    assert value < 0  # strictly better than the start
    assert value <= 0.5 * -1e6 * g_star ** 2  # at least half of the possible decrease


def test_full_step_when_still_decreasing_at_the_end():
    evaluate, slope0, _ = _quadratic(2.0)
    g, _, at_end = minimise_on_segment(evaluate, 0.0, slope0, None)
    assert g == 1.0 and at_end


def test_no_step_uphill():
    evaluate, _, calls = _quadratic(0.3)
    g, payload, _ = minimise_on_segment(evaluate, 0.0, 0.5, "start")
    assert g == 0.0 and payload == "start" and calls == []


def test_backtracks_when_no_trial_point_improves():
    """Inexact solves (an SVM at its tolerance) can report a near-zero slope at trial points that are worse than
    the start, while the true decrease lies below the regula falsi's smallest trial step. The search used to stop
    there with g = 0, which ended Frank-Wolfe after one iteration with a relative gap of 8550 on Hill-Valley."""
    def evaluate(g):
        if g > 1e-3:
            return 1.0, 1e-9, g  # worse than phi(0) = 0, with a slope 'small' against phi'(0) = -1
        return -1.0, 0.0, g

    g, payload, _ = minimise_on_segment(evaluate, 0.0, -1.0, None)
    assert 0 < g <= 1e-3 and payload == g


def test_gives_up_after_backtracking_without_improvement():
    calls = []

    def evaluate(g):
        calls.append(g)
        return 1.0, 1.0, g

    g, payload, _ = minimise_on_segment(evaluate, 0.0, -1.0, "start", backtrack=3)
    assert g == 0.0 and payload == "start"
    assert len(calls) == 1 + 5 + 3 and np.all(np.diff(calls[-3:]) < 0)


def test_frank_wolfe_goes_on_where_the_line_search_used_to_stop():
    """Hill-Valley (n = 100), C = 100, delta = 1, normalised kernel: after the first full step the next direction's
    kernel is ~1e4 times larger, the best step is ~0.01, and the old search returned 0 (Frank-Wolfe stopped after one
    iteration at a relative gap of 8550)."""
    from tkbench.data.registry import load_dataset
    from tkbench.methods.tk.estimators import TKClassifier

    ds = load_dataset("hill_valley")
    idx = np.random.default_rng(0).permutation(len(ds.y))[:485]
    est = TKClassifier(C=100.0, delta=1.0, normalize=True, max_iter=3).fit(ds.X[idx], ds.y[idx])
    gaps = [h["relative_gap"] for h in est.gap_history_]
    assert est.n_iter_ == 3 and est.n_iters_.tolist() == [3], gaps
    assert gaps[-1] < 1.0  # from 8.4 at P_0


@pytest.mark.parametrize("g_star", [0.9, 0.05, 2e-3])
def test_a_first_trial_point_is_expanded_until_the_minimum_is_bracketed(g_star):
    """Frank-Wolfe passes twice its previous step as ``first``: the search tries it, expands by 4x while phi' < 0,
    and never evaluates g_max when the minimum lies below it (a solve far from the warm start is the expensive one).
    """
    evaluate, slope0, calls = _quadratic(g_star, curvature=1e6)
    g, payload, at_end = minimise_on_segment(evaluate, 0.0, slope0, None, first=1e-3)
    value = 1e6 * ((g - g_star) ** 2 - g_star ** 2)
    assert payload == g and not at_end
    assert value <= 0.9 * -1e6 * g_star ** 2  # within 10 % of the best decrease
    assert calls[0] == 1e-3 and (1.0 not in calls or g_star > 0.256)  # 1e-3 * 4^4 = 0.256
    brackets = [c for c in calls if c >= g_star]
    assert brackets and min(brackets) < 4 * g_star + 1e-3  # the first point beyond g* is at most 4x too far


def test_a_first_trial_point_still_reaches_the_end_of_the_segment():
    evaluate, slope0, calls = _quadratic(2.0)
    g, _, at_end = minimise_on_segment(evaluate, 0.0, slope0, None, first=0.01)
    assert g == 1.0 and at_end and calls == [0.01, 0.04, 0.16, 0.64, 1.0]
