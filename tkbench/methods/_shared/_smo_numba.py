"""The compiled loops of the SMO solver (:mod:`tkbench.methods._shared.smo`, whose docstring states the algorithm):
working-set selection, columns of (1 - g) K + g K_S, gradient reconstruction, shrinking and the intercept."""
from __future__ import annotations

import numpy as np
from numba import njit

TAU = 1e-12


@njit(cache=True, inline="always")
def _k(K0, KS, g, s, t):
    if g == 0.0:
        return np.float64(K0[s, t])
    if g == 1.0:
        return np.float64(KS[s, t])
    return (1.0 - g) * np.float64(K0[s, t]) + g * np.float64(KS[s, t])


@njit(cache=True)
def _column(K0, KS, g, y, i, m, out):
    """out[t] = Q_it = y_i y_t K(i mod m, t mod m) for every variable t: the kernel row once (blended in one
    vectorisable pass), then signed (for the SVR's 2m variables, twice: y = (1, -1) there)."""
    n = y.shape[0]
    ii = i % m
    a = K0[ii]
    b = KS[ii]
    yi = y[i]
    if g == 0.0:
        for t in range(m):
            out[t] = yi * y[t] * np.float64(a[t])
    elif g == 1.0:
        for t in range(m):
            out[t] = yi * y[t] * np.float64(b[t])
    else:
        h = 1.0 - g
        for t in range(m):
            out[t] = yi * y[t] * (h * np.float64(a[t]) + g * np.float64(b[t]))
    for t in range(m, n):  # the SVR's second half: Q(i, t) = y_i y_t K(ii, t - m) with y_t = -y_(t - m)
        out[t] = -out[t - m]


@njit(cache=True)
def _gradient(K0, KS, g, y, p, alpha, m, col):
    """G = Q alpha + p, one column per nonzero alpha (the cost of a warm start)."""
    n = y.shape[0]
    G = p.copy()
    for s in range(n):
        if alpha[s] != 0.0:
            _column(K0, KS, g, y, s, m, col)
            a = alpha[s]
            for t in range(n):
                G[t] += a * col[t]
    return G


@njit(cache=True)
def _column_active(K0, KS, g, y, i, m, act, n_act, out):
    """out[t] = Q_it for the active variables t = act[:n_act] only (a gather from the kernel row; the branch on g
    is taken once, and the SVR's second half maps to its kernel column by a subtraction, not a modulo)."""
    ii = i % m
    a = K0[ii]
    b = KS[ii]
    yi = y[i]
    h = 1.0 - g
    if g == 0.0:
        for k in range(n_act):
            t = act[k]
            out[t] = yi * y[t] * np.float64(a[t if t < m else t - m])
    elif g == 1.0:
        for k in range(n_act):
            t = act[k]
            out[t] = yi * y[t] * np.float64(b[t if t < m else t - m])
    else:
        for k in range(n_act):
            t = act[k]
            tt = t if t < m else t - m
            out[t] = yi * y[t] * (h * np.float64(a[tt]) + g * np.float64(b[tt]))


@njit(cache=True)
def _reconstruct(K0, KS, g, y, p, alpha, m, act, n_act, G, col):
    """The gradient of the inactive (shrunk) variables from scratch: G_t = p_t + sum_s alpha_s Q_st (LIBSVM keeps
    G_bar instead; with the kernel stored, one row pass per nonzero alpha is as cheap)."""
    n = y.shape[0]
    inactive = np.ones(n, np.bool_)
    for k in range(n_act):
        inactive[act[k]] = False
    for t in range(n):
        if inactive[t]:
            G[t] = p[t]
    for s in range(n):
        if alpha[s] != 0.0:
            _column(K0, KS, g, y, s, m, col)
            a = alpha[s]
            for t in range(n):
                if inactive[t]:
                    G[t] += a * col[t]


@njit(cache=True)
def _violation(y, G, alpha, C, act, n_act):
    """(Gmax1, Gmax2) over the active set: max over I_up of -y G and max over I_low of y G (LIBSVM's names)."""
    gmax1 = -np.inf
    gmax2 = -np.inf
    for k in range(n_act):
        t = act[k]
        if y[t] > 0:
            if alpha[t] < C:
                gmax1 = max(gmax1, -G[t])
            if alpha[t] > 0.0:
                gmax2 = max(gmax2, G[t])
        else:
            if alpha[t] < C:
                gmax2 = max(gmax2, -G[t])
            if alpha[t] > 0.0:
                gmax1 = max(gmax1, G[t])
    return gmax1, gmax2


@njit(cache=True)
def _shrink(y, G, alpha, C, act, n_act, gmax1, gmax2):
    """LIBSVM's be_shrunk test: drop from the active set (compacted in place, order kept) the bounded variables
    that cannot enter a violating pair; returns the new active count."""
    kept = 0
    for k in range(n_act):
        t = act[k]
        shrunk = False
        if alpha[t] >= C:
            shrunk = (-G[t] > gmax1) if y[t] > 0 else (-G[t] > gmax2)
        elif alpha[t] <= 0.0:
            shrunk = (G[t] > gmax2) if y[t] > 0 else (G[t] > gmax1)
        if not shrunk:
            act[kept] = t
            kept += 1
    return kept


@njit(cache=True)
def _select(K0, KS, g, y, alpha, C, G, QD, m, act, n_act, col_i):
    """LIBSVM's WSS 3 over the active set: i the maximal violating variable of I_up, j the second-order choice in
    I_low (col_i is filled with Q_i on the active set). Returns (i, j, m(a) - M(a) on the active set)."""
    n = y.shape[0]
    Gmax = -np.inf
    i = -1
    for k in range(n_act):
        t = act[k]
        if y[t] > 0:
            if alpha[t] < C and -G[t] >= Gmax:
                Gmax = -G[t]
                i = t
        else:
            if alpha[t] > 0.0 and G[t] >= Gmax:
                Gmax = G[t]
                i = t
    if i < 0:
        return -1, -1, -np.inf
    if n_act == n:
        _column(K0, KS, g, y, i, m, col_i)
    else:
        _column_active(K0, KS, g, y, i, m, act, n_act, col_i)
    j = -1
    Gmax2 = -np.inf
    best = np.inf
    for k in range(n_act):
        t = act[k]
        if y[t] > 0:
            if alpha[t] > 0.0:
                diff = Gmax + G[t]
                if G[t] >= Gmax2:
                    Gmax2 = G[t]
                if diff > 0.0:
                    quad = QD[i] + QD[t] - 2.0 * y[i] * col_i[t]
                    obj = -(diff * diff) / (quad if quad > 0.0 else TAU)
                    if obj <= best:
                        best = obj
                        j = t
        else:
            if alpha[t] < C:
                diff = Gmax - G[t]
                if -G[t] >= Gmax2:
                    Gmax2 = -G[t]
                if diff > 0.0:
                    quad = QD[i] + QD[t] + 2.0 * y[i] * col_i[t]
                    obj = -(diff * diff) / (quad if quad > 0.0 else TAU)
                    if obj <= best:
                        best = obj
                        j = t
    return i, j, Gmax + Gmax2


@njit(cache=True)
def _solve(K0, KS, g, y, p, C, alpha, tol, max_iter, m, shrinking):
    """LIBSVM's SMO (module docstring) from the feasible ``alpha`` (changed in place). Returns (G, iterations, the
    smallest active set size reached)."""
    n = y.shape[0]
    col_i = np.empty(n)
    col_j = np.empty(n)
    G = _gradient(K0, KS, g, y, p, alpha, m, col_i)
    QD = np.empty(n)
    for t in range(n):
        QD[t] = _k(K0, KS, g, t % m, t % m)
    act = np.arange(n)
    n_act = n
    fewest = n
    unshrunk = False
    counter = min(n, 1000)
    it = 0
    while it < max_iter:
        if shrinking:
            counter -= 1
            if counter == 0:
                counter = min(n, 1000)
                gmax1, gmax2 = _violation(y, G, alpha, C, act, n_act)
                if not unshrunk and gmax1 + gmax2 <= 10.0 * tol:  # near the end: the whole problem once more
                    unshrunk = True
                    if n_act < n:
                        _reconstruct(K0, KS, g, y, p, alpha, m, act, n_act, G, col_i)
                        for t in range(n):
                            act[t] = t
                        n_act = n
                n_act = _shrink(y, G, alpha, C, act, n_act, gmax1, gmax2)
                fewest = min(fewest, n_act)
        i, j, gap = _select(K0, KS, g, y, alpha, C, G, QD, m, act, n_act, col_i)
        if i < 0 or j < 0 or gap < tol:
            if n_act == n:
                break
            # optimal on the active set: LIBSVM reconstructs the gradient, takes up every variable, selects again
            _reconstruct(K0, KS, g, y, p, alpha, m, act, n_act, G, col_i)
            for t in range(n):
                act[t] = t
            n_act = n
            i, j, gap = _select(K0, KS, g, y, alpha, C, G, QD, m, act, n_act, col_i)
            if i < 0 or j < 0 or gap < tol:
                break
            counter = 1  # shrink again after this step
        it += 1
        if n_act == n:
            _column(K0, KS, g, y, j, m, col_j)
        else:
            _column_active(K0, KS, g, y, j, m, act, n_act, col_j)
        ai, aj = alpha[i], alpha[j]
        if y[i] != y[j]:
            quad = QD[i] + QD[j] + 2.0 * col_i[j]
            if quad <= 0.0:
                quad = TAU
            delta = (-G[i] - G[j]) / quad
            diff = ai - aj
            alpha[i] = ai + delta
            alpha[j] = aj + delta
            if diff > 0.0:
                if alpha[j] < 0.0:
                    alpha[j] = 0.0
                    alpha[i] = diff
            else:
                if alpha[i] < 0.0:
                    alpha[i] = 0.0
                    alpha[j] = -diff
            if diff > 0.0:  # C_i - C_j = 0
                if alpha[i] > C:
                    alpha[i] = C
                    alpha[j] = C - diff
            else:
                if alpha[j] > C:
                    alpha[j] = C
                    alpha[i] = C + diff
        else:
            quad = QD[i] + QD[j] - 2.0 * col_i[j]
            if quad <= 0.0:
                quad = TAU
            delta = (G[i] - G[j]) / quad
            total = ai + aj
            alpha[i] = ai - delta
            alpha[j] = aj + delta
            if total > C:
                if alpha[i] > C:
                    alpha[i] = C
                    alpha[j] = total - C
                if alpha[j] > C:
                    alpha[j] = C
                    alpha[i] = total - C
            else:
                if alpha[j] < 0.0:
                    alpha[j] = 0.0
                    alpha[i] = total
                if alpha[i] < 0.0:
                    alpha[i] = 0.0
                    alpha[j] = total
        dai, daj = alpha[i] - ai, alpha[j] - aj
        for k in range(n_act):
            t = act[k]
            G[t] += col_i[t] * dai + col_j[t] * daj
    if n_act < n:  # stopped at the iteration cap with variables shrunk: their gradient for rho and the objective
        _reconstruct(K0, KS, g, y, p, alpha, m, act, n_act, G, col_i)
    return G, it, fewest


@njit(cache=True)
def _rho(y, G, alpha, C):
    """LIBSVM's rho: mean of y_t G_t over the free variables, else the midpoint of its bounds."""
    ub, lb, total, free = np.inf, -np.inf, 0.0, 0
    for t in range(y.shape[0]):
        yG = y[t] * G[t]
        if alpha[t] >= C:
            if y[t] < 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        elif alpha[t] <= 0.0:
            if y[t] > 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        else:
            free += 1
            total += yG
    return total / free if free > 0 else (ub + lb) / 2.0
