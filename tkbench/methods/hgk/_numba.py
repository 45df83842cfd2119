"""Compiled loops of the hierarchical Gaussian kernels (:mod:`tkbench.methods.hgk.kernel`).

A tree is flattened in post-order (children before parents, the root last): ``kind[n]`` (1 leaf, 0 inner node),
``items[start[n]:stop[n]]`` (a leaf's feature indices, an inner node's child nodes) and ``woff[n]``, the offset of
the node's weights in the flat weight vector (item i of node n has weight ``woff[n] + i``).

Every loop works row by row: for one point x_u, every node's kernel row k_n(x_u, Z) is built in a scratch array
of nodes x m' (a few hundred KB, cache resident), children first; the innermost loops run over the columns v
with no branch, so that LLVM vectorises them, exponentials included (:func:`fast_exp` below).
Rows are spread over threads (``prange``) in chunks, each chunk with its own scratch. The leaves' sums over their
features are matrix products, all leaves at once (since 2026-12-03; :func:`_leaf_form`): forward, a leaf's
exponent sum_j v_j^2 (x_uj - z_vj)^2 = a(x_u) + a(z_v) - 2 sum_j v_j^2 x_uj z_vj is one BLAS product per row;
backward, a leaf's sum_v H(v) (x_uj - z_vj)^2 = x_uj^2 sum_v H(v) - 2 x_uj (H Z)_j + (H (Z o Z))_j is two per
row. Rounding: an exponent is then exact to about eps (a(x_u) + a(z_v)) instead of eps times itself, so a node's
1 - k_n is off by up to about 4 eps |v|^2 for close points, and the top exponent by up to about
8 eps sum_i w_i^2 |v_i|^2 (1e-15 at the initial weights; tested against differences at large weights). Where
that bound passes ``EXPANSION_TOL`` (a width of a few hundred and more; since 2026-12-05), a row's leaf takes
the squared differences instead, which keeps the Gram matrix positive semi-definite to rounding; likewise an inner
node's term 2 w_i^2 (1 - k_i) (Eq. (7)) takes 1 - k_i from child i's exponent where the factors above it would
carry k_i's rounding past that bound (``EPS_COMPLEMENT``; since 2026-12-06; forward and backward passes, not the
annealing's stored blocks, :func:`propose_path`, which keep kernel values only). Before
2026-12-03, a leaf's loops took four features per pass over the row ((x_j - z_j)^2 summed directly, exact for
x = z).

- :func:`tree_kernel`: the root's kernel matrix k(X, Z), or every node's;
- :func:`tree_predict`: F = k(X, Z) @ alpha without storing k (alpha: m' x outputs);
- :func:`tree_gradient`: g_theta = sum_{u,v} W_uv dk(x_u, z_v)/dtheta with W = R A^T formed row by row (R: m x
  outputs, A: m' x outputs), by Lemma 4.1 from the root down, without storing any m x m' matrix; or, given the
  targets, the least-squares risk and its gradient in that same single pass; :func:`tree_gradient_symmetric`
  the same contraction with Z = X from the upper triangle (half the work: the refit objective's K11 term);
- :func:`propose_path`: the annealing step on stored blocks (one weight changed: one factor per node on the path),
  in the blocks' precision (float64 or float32).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic, overload

CHUNK = 16  # rows per scratch allocation

# ---------------------------------------------------------------------------------------------------------------
# exp(x) for compiled loops that LLVM can vectorise (numba has no vector math library here: without Intel's SVML,
# ``math.exp`` in a loop is one libm call per element, and the hierarchical kernels' loops are bound by it). Kept in
# this file: numba's on-disk cache of a function is invalidated by changes to that function's own file only, so a
# callee in another file could leave stale machine code behind.
#
# Method (the classical one of Cody & Waite, as in most libm implementations): x = k ln 2 + r with k the nearest
# integer to x / ln 2 and |r| <= ln(2) / 2, ln 2 split in a high part with trailing zero bits and a low part so that
# k ln2_hi is exact; exp(r) by its Taylor polynomial of degree 13 (remainder below 0.35^14 / 14! < 2e-18
# relative), evaluated by Estrin's scheme (a short dependency chain: 24 % faster than Horner's rule here, same
# accuracy), and 2^k built in the exponent bits. k is rounded with the "add 1.5 * 2^52" trick and read back with a bit cast,
# so the loop body has no branch and no float-to-int conversion (which AVX2 lacks for 64-bit integers).
#
# Range: within about two units in the last place for -708 <= x <= 709; below -708 it returns 0 (the true value is
# below 3.3e-308, a subnormal: kernel values that small are 0 for every purpose here); above 709 it is not used
# (the kernels' exponents are never positive). Tested against ``numpy.exp`` in tests/methods/hgk/test_hierarchical_fast.py.


_BIT_CASTS = {types.float64: (types.int64, ir.IntType(64)), types.float32: (types.int32, ir.IntType(32)),
              types.int64: (types.float64, ir.DoubleType()), types.int32: (types.float32, ir.FloatType())}


def _bit_cast_of(frm, kind):
    """(numba type, LLVM type) a float64 / float32 (kind "float") or an int64 / int32 (kind "int") is cast to."""
    if frm not in _BIT_CASTS or (kind == "float") != isinstance(frm, types.Float):
        return None
    return _BIT_CASTS[frm]


@intrinsic
def _float_bits(typingctx, x):
    """The IEEE-754 bits of a float64 (float32) as an int64 (int32): an LLVM bit cast, no instruction."""
    cast = _bit_cast_of(x, "float")
    if cast is None:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], cast[1])

    return cast[0](x), codegen


@intrinsic
def _bits_float(typingctx, x):
    """The float64 (float32) whose IEEE-754 bits are the int64 (int32) ``x``."""
    cast = _bit_cast_of(x, "int")
    if cast is None:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], cast[1])

    return cast[0](x), codegen


_LOG2E = 1.4426950408889634
_LN2_HI = 0.6931471803691238  # 0x3FE62E42FEE00000: 32 trailing zero bits, so k * _LN2_HI is exact for |k| < 2^20
_LN2_LO = 1.9082149292705877e-10
_SHIFT = 6755399441055744.0  # 1.5 * 2^52: adding it rounds to an integer held in the low mantissa bits
_SHIFT_BITS = 0x4338000000000000
_UNDERFLOW = -708.0
_C3, _C4, _C5, _C6, _C7, _C8 = 1 / 6, 1 / 24, 1 / 120, 1 / 720, 1 / 5040, 1 / 40320  # 1 / i!
_C9, _C10, _C11, _C12, _C13 = 1 / 362880, 1 / 3628800, 1 / 39916800, 1 / 479001600, 1 / 6227020800


@njit(fastmath=False, cache=True)
def fast_exp(x):
    """exp(x), branch-free (see the module); 0 below -708."""
    xc = max(x, _UNDERFLOW)
    kd = xc * _LOG2E + _SHIFT
    k = _float_bits(kd) - _SHIFT_BITS
    kd = kd - _SHIFT
    r = (xc - kd * _LN2_HI) - kd * _LN2_LO
    # Taylor coefficients 1/i! by Estrin's scheme: a dependency chain of 5 multiply-adds instead of Horner's 13
    r2 = r * r
    r4 = r2 * r2
    q0 = (1.0 + r) + (0.5 + _C3 * r) * r2
    q1 = (_C4 + _C5 * r) + (_C6 + _C7 * r) * r2
    q2 = (_C8 + _C9 * r) + (_C10 + _C11 * r) * r2
    q3 = _C12 + _C13 * r
    p = (q0 + q1 * r4) + (q2 + q3 * r4) * (r4 * r4)
    scale = _bits_float((k + 1023) << 52)
    return p * scale if x >= _UNDERFLOW else 0.0


_SERIES_MAX = 0.0625


@njit(fastmath=False, cache=True)
def one_minus_exp(e, k):
    """1 - exp(-e) for an exponent e >= 0, given k = exp(-e) as computed, branch-free (a select): up to 1/16 the
    Taylor series e - e^2/2! + ... + e^9/9! by Horner's rule (the next term is below 5e-18 relative there), to a
    few ulps; above it 1 - k, within k's rounding (about eps absolute, so 4e-15 relative at most, at e = 1/16).
    ``1.0 - k`` alone is off by that same eps absolute for close points too, where it is all of the value (e near
    eps); the series keeps e's own precision there. No exponential: k is the one the node's row already holds.
    Tested against ``numpy.expm1``."""
    s = min(e, _SERIES_MAX)
    p = _C8 - s * _C9  # the coefficients 1 / i! of fast_exp
    p = _C7 - s * p
    p = _C6 - s * p
    p = _C5 - s * p
    p = _C4 - s * p
    p = _C3 - s * p
    p = 0.5 - s * p
    p = s * (1.0 - s * p)
    return p if e <= _SERIES_MAX else 1.0 - k


# The same in single precision, for the annealing proposals on float32 blocks (``annealing_dtype="float32"``,
# :func:`propose_path`): 8 lanes per AVX2 vector instead of 4 and a polynomial of degree 7 (remainder below
# 0.347^8 / 8! = 5e-9 relative, under float32's half ulp of 6e-8); ln 2 split as Cephes' expf does (the high part
# 0.693359375 has 9 significant bits, so k ln2_hi is exact for |k| < 2^15); rounding by adding 1.5 * 2^23.
# Within about three float32 ulps (2e-7 relative) for -87 <= x <= 0; below -87 it returns 0 (the true value is
# below 1.7e-38, about float32's least normal number). Tested against ``numpy.exp``.


_F32 = np.float32
_LOG2E_32, _LN2_HI_32, _LN2_LO_32 = _F32(1.4426950408889634), _F32(0.693359375), _F32(-2.12194440e-4)
_SHIFT_32, _SHIFT_BITS_32, _UNDERFLOW_32 = _F32(12582912.0), np.int32(0x4B400000), _F32(-87.0)
_ONE_32, _ZERO_32, _BIAS_32, _MANT_32 = _F32(1.0), _F32(0.0), np.int32(127), np.int32(23)
_D2, _D3, _D4, _D5, _D6, _D7 = (_F32(1 / 2), _F32(1 / 6), _F32(1 / 24), _F32(1 / 120), _F32(1 / 720),
                                _F32(1 / 5040))


@njit(fastmath=False, cache=True)
def fast_exp32(x):
    """exp(x) of a float32, branch-free, in float32 (see above); 0 below -87."""
    xc = max(x, _UNDERFLOW_32)
    kd = xc * _LOG2E_32 + _SHIFT_32
    k = np.int32(_float_bits(kd) - _SHIFT_BITS_32)
    kd = kd - _SHIFT_32
    r = (xc - kd * _LN2_HI_32) - kd * _LN2_LO_32
    r2 = r * r
    r4 = r2 * r2
    q0 = (_ONE_32 + r) + (_D2 + _D3 * r) * r2
    q1 = (_D4 + _D5 * r) + (_D6 + _D7 * r) * r2
    p = q0 + q1 * r4
    scale = _bits_float(np.int32((k + _BIAS_32) << _MANT_32))
    return p * scale if x >= _UNDERFLOW_32 else _ZERO_32


# The leaves' exponents as matrix products lose about EPS_EXPANSION (a(x_u) + a(z_v)) to cancellation (module doc).
# Where that, times the factors 2 w_i^2 of the leaf's ancestors (through which it reaches the top exponent, Eq.
# (7)), exceeds EXPANSION_TOL for a row and leaf (a depth-1 kernel: a(x_u) + max_v a(z_v) above about 1.1e5, squared
# widths of that order with inputs in [-1, 1]), the row's leaf exponents are summed from the squared differences
# instead, exact for close points. Found on 2026-12-05: Algorithm 1 had driven two of thyroid's 21 inhomogeneous
# widths to 1.8e6 and 2.4e4; the matrix products put the Gram matrix's diagonal at 0.9990 and its least eigenvalue
# at -0.207, below the ridge shift m lambda = 0.178, so the least-squares SVM's Cholesky factorisation failed (the
# squared differences: -8e-15). 1e-10 keeps an entry's error far below the smallest shift the lambda grids reach (m
# lambda >= 1e-8 x 1000) at every size tkbench runs, and is reached at no width the initial weights or the tests at
# 16 times them use (there the bound is 1e-13 or less), so those kernels are unchanged bit for bit.
EPS_EXPANSION = 4.0 * 2.220446049250313e-16
EXPANSION_TOL = 1e-10
# The same bound for an inner node's terms 2 w_i^2 (1 - k_i) (Eq. (7)): 1 - k_i from the rounded k_i is off by about
# EPS_COMPLEMENT (k_i's own rounding; the subtraction is exact), all of its value for close points, and reaches the
# top exponent times amp_i, the product of 2 w^2 from child i up to the root. Where amp_i EPS_COMPLEMENT exceeds
# EXPANSION_TOL (a factor above about 2.3e5: a top weight above about 340 at depth 2), the row keeps child i's
# exponent e_i and the term takes 1 - exp(-e_i) from it (:func:`one_minus_exp`), to e_i's own precision.
# Found on 2026-12-05 beside the leaves' case: thyroid's depth2:3 candidate reached a top weight of 1.8e6, where
# two evaluations of one kernel, each exact to rounding but for this, differed by 7e-4. Below that factor the
# kernels are unchanged bit for bit.
EPS_COMPLEMENT = 2.0 * 2.220446049250313e-16


@njit(cache=True)
def _leaf_form(Zt, kind, start, stop, items, woff, wsq):
    """The leaves' exponents as matrix products (Eq. (4)): sum_j v_j^2 (x_j - z_j)^2 = a(x) + a(z) - 2 sum_j v_j^2
    x_j z_j with a(x) = sum_j v_j^2 x_j^2. Returns (P, leaf_of, Az, Acut): P[l, j] the squared weight of feature j in
    the l-th leaf (0 where the leaf does not use j; a feature listed twice adds up), leaf_of[n] the leaf index of
    node n (-1 for inner nodes), Az[l, v] = a_l(z_v), and Acut[l] = max_v a_l(z_v) - EXPANSION_TOL /
    (EPS_EXPANSION max(amp_l, 1)), amp_l the product of 2 w_i^2 over the leaf's ancestors: a row x_u with a_l(x_u) +
    Acut[l] > 0 takes the squared differences for leaf l (:data:`EXPANSION_TOL`); then ``exact[n]``: node n's term
    in its parent takes 1 - exp(-e_n) from its exponent e_n (amp_n EPS_COMPLEMENT > EXPANSION_TOL)."""
    nn, d = kind.shape[0], Zt.shape[0]
    leaf_of = np.full(nn, -1, dtype=np.int64)
    n_leaves = 0
    for n in range(nn):
        if kind[n] == 1:
            leaf_of[n] = n_leaves
            n_leaves += 1
    P = np.zeros((n_leaves, d))
    for n in range(nn):
        if kind[n] == 1:
            for t in range(start[n], stop[n]):
                P[leaf_of[n], items[t]] += wsq[woff[n] + t - start[n]]
    Az = np.dot(P, Zt * Zt)
    # a leaf's rounding reaches the top exponent times its ancestors' factors 2 w_i^2 (Eq. (7)): amp[n], from the
    # root (the last node) down, parents before children in reverse post-order; at least 1
    amp = np.ones(nn)
    for n in range(nn - 1, -1, -1):
        if kind[n] == 0:
            for t in range(start[n], stop[n]):
                amp[items[t]] = amp[n] * 2.0 * wsq[woff[n] + t - start[n]]
    Acut = np.zeros(n_leaves)
    for n in range(nn):
        if kind[n] == 1:
            t = leaf_of[n]
            if Az.shape[1] > 0:
                Acut[t] = Az[t].max()
            # the row's a(x_u) above which its exponents are summed from the differences (EXPANSION_TOL)
            Acut[t] -= EXPANSION_TOL / (EPS_EXPANSION * max(amp[n], 1.0))
    exact = np.zeros(nn, dtype=np.bool_)
    for n in range(nn - 1):  # the root (the last node) is no node's child
        exact[n] = amp[n] * EPS_COMPLEMENT > EXPANSION_TOL
    return P, leaf_of, Az, Acut, exact


@njit(cache=True)
def _leaf_scratch(lf, mp):
    """A thread's scratch for :func:`_row_kernels_from` (``lf``: :func:`_leaf_form`): (-2 P x_u, the leaves' a(x_u),
    their products with Z, the nodes' exponents, which have rows only where some node is ``exact``)."""
    P, exact = lf[0], lf[4]
    n_leaves, d = P.shape
    rows = exact.shape[0] if exact.any() else 0
    return np.empty((n_leaves, d)), np.empty(n_leaves), np.empty((n_leaves, mp)), np.empty((rows, mp))


@njit(cache=True, fastmath=True)
def _row_kernels(xu, Zt, kind, start, stop, items, woff, wsq, Krow, lf, scratch):
    """Krow[n, v] = k_n(x_u, z_v) for every node n (post-order: children are ready before their parent)."""
    _row_kernels_from(xu, Zt, 0, 0, kind, start, stop, items, woff, wsq, Krow, lf, scratch)


@njit(cache=True, fastmath=True)
def _row_kernels_from(xu, Zc, c0, v0, kind, start, stop, items, woff, wsq, Krow, lf, scratch):
    """:func:`_row_kernels` for the columns v >= v0 only (Krow[:, :v0] is left as it was), given Zc = Z^T[:, c0:]
    (contiguous, c0 <= v0; the symmetric passes copy it once per chunk of rows) and a scratch sized for it
    (:func:`_leaf_scratch`). The loops run over slices that start at v0 (contiguous, so they vectorise as the full
    rows do: indexing from a run-time start instead made each element 2.6 times slower, measured).

    The leaves' exponents come from one matrix product per row, (-2 P o x_u) @ Zc for all leaves at once
    (:func:`_leaf_form`; BLAS), plus a(x_u) + a(z_v), clipped at 0 where rounding makes it negative (the module
    says what that rounding is). Against one pass per four features of (x_j - z_j)^2 sums (until 2026-12-03), old
    and new code alternated, one thread, beside two sweeps (2026-12-03): a 1555 x 3111 block of depth2:16 on 16
    features 0.54-0.70 s against 0.36-0.54 s (1.3-1.5x), of depth2:8 on 36 features 0.40-0.60 s against
    0.20-0.30 s (1.5-2x), on 4 features no change (0.17-0.23 s both); the mirrored 3111 x 3111 block of depth2:16
    on 16 features 0.73-0.93 s against 0.59-0.63 s."""
    P, leaf_of, Az, Acut, exact = lf
    Mu, axu, Gl, Erow = scratch
    n_leaves, d = P.shape
    for t in range(n_leaves):
        a = 0.0
        for j in range(d):
            pj = P[t, j] * xu[j]
            a += pj * xu[j]
            Mu[t, j] = -2.0 * pj
        axu[t] = a
    np.dot(Mu, Zc, Gl)
    mq = c0 + Zc.shape[1] - v0
    for n in range(kind.shape[0]):
        row = Krow[n][v0:]
        if kind[n] == 1:  # Eq. (4): exp(-sum_j v_j^2 (x_j - z_j)^2)
            t = leaf_of[n]
            a = axu[t]
            az = Az[t][v0:]
            gl = Gl[t][v0 - c0:]
            if a + Acut[t] <= 0.0:  # (a(x_u) + max a(z)) EPS_EXPANSION amp <= EXPANSION_TOL: the products
                if exact[n]:
                    er = Erow[n][v0 - c0:]
                    for v in range(mq):
                        er[v] = max(a + az[v] + gl[v], 0.0)
                        row[v] = fast_exp(-er[v])
                else:
                    for v in range(mq):
                        row[v] = fast_exp(-max(a + az[v] + gl[v], 0.0))
            else:  # widths where the expansion's cancellation matters: the squared differences themselves
                for v in range(mq):
                    row[v] = 0.0
                for j in range(d):
                    pj = P[t, j]
                    if pj != 0.0:
                        zj = Zc[j][v0 - c0:]
                        xj = xu[j]
                        for v in range(mq):
                            dj = xj - zj[v]
                            row[v] += pj * dj * dj
                if exact[n]:
                    er = Erow[n][v0 - c0:]
                    for v in range(mq):
                        er[v] = row[v]
                for v in range(mq):
                    row[v] = fast_exp(-row[v])
        else:  # Eq. (7), gamma = 1: exp(-2 sum_i w_i^2 (1 - k_i))
            for v in range(mq):
                row[v] = 0.0
            for t in range(start[n], stop[n]):
                a = wsq[woff[n] + t - start[n]]
                c = items[t]
                kc = Krow[c][v0:]
                if exact[c]:  # 1 - k_i from the child's exponent (EPS_COMPLEMENT)
                    ec = Erow[c][v0 - c0:]
                    for v in range(mq):
                        row[v] += a * one_minus_exp(ec[v], kc[v])
                else:
                    for v in range(mq):
                        row[v] += a * (1.0 - kc[v])
            if exact[n]:
                er = Erow[n][v0 - c0:]
                for v in range(mq):
                    er[v] = 2.0 * row[v]
            for v in range(mq):
                row[v] = fast_exp(-2.0 * row[v])


@njit(parallel=True, cache=True, fastmath=True)
def tree_kernel(X, Zt, kind, start, stop, items, woff, wsq, out):
    """out[i, u, v] = k_n(x_u, z_v) for the last out.shape[0] nodes n (post-order): out of shape (1, m, m') gets the
    root's kernel, (nodes, m, m') every node's."""
    m, mp, nn = X.shape[0], Zt.shape[1], kind.shape[0]
    first = nn - out.shape[0]
    lf = _leaf_form(Zt, kind, start, stop, items, woff, wsq)
    n_chunks = (m + CHUNK - 1) // CHUNK
    for ch in prange(n_chunks):
        Krow = np.empty((nn, mp))
        scratch = _leaf_scratch(lf, mp)
        for u in range(ch * CHUNK, min(m, (ch + 1) * CHUNK)):
            _row_kernels(X[u], Zt, kind, start, stop, items, woff, wsq, Krow, lf, scratch)
            for n in range(first, nn):
                out[n - first, u, :] = Krow[n]


@njit(cache=True)
def _paired_chunk(p, side, n_chunks):
    """The chunk a symmetric pass's parallel iteration p takes on one side: chunk p from the front (side 0), chunk
    n_chunks - 1 - p from the back (side 1); -1 for the back of the middle chunk of an odd count (done once). The
    rows of a triangle shrink with u, so the two ends make equal work per iteration."""
    ch = p if side == 0 else n_chunks - 1 - p
    return -1 if side == 1 and ch == p else ch


@njit(cache=True)
def _chunk_columns(Xt, lf, ch):
    """A symmetric pass's chunk ``ch``: its first row c0, the columns from c0 on (contiguous, for the leaves'
    products) and the leaves' scratch for that many columns."""
    c0 = ch * CHUNK
    return c0, np.ascontiguousarray(Xt[:, c0:]), _leaf_scratch(lf, np.int64(Xt.shape[1] - c0))


@njit(parallel=True, cache=True, fastmath=True)
def tree_kernel_symmetric(X, Xt, kind, start, stop, items, woff, wsq, out):
    """:func:`tree_kernel` with Z = X: each row u computes the columns v >= u only, and the lower triangle is the
    upper one mirrored (half the exponentials): exactly symmetric, where the full pass's k(x_u, x_v) and
    k(x_v, x_u) may differ in the last bits (the leaves' matrix products round x_u^T D x_v and x_v^T D x_u
    apart); the two agree to rounding (tested). The triangle's rows shrink with u, so a parallel iteration takes a
    chunk from each end (equal work per iteration; numba splits the iterations evenly between threads); a chunk
    copies the columns from its first row on once, for the leaves' products."""
    m, nn = X.shape[0], kind.shape[0]
    first = nn - out.shape[0]
    lf = _leaf_form(Xt, kind, start, stop, items, woff, wsq)
    n_chunks = (m + CHUNK - 1) // CHUNK
    for p in prange((n_chunks + 1) // 2):
        Krow = np.empty((nn, m))
        for side in range(2):
            ch = _paired_chunk(p, side, n_chunks)
            if ch < 0:
                break
            c0, Xc, scratch = _chunk_columns(Xt, lf, ch)
            for u in range(c0, min(m, c0 + CHUNK)):
                _row_kernels_from(X[u], Xc, c0, u, kind, start, stop, items, woff, wsq, Krow, lf, scratch)
                for n in range(first, nn):
                    out[n - first, u, u:] = Krow[n, u:]
    block = 64
    n_blocks = (m + block - 1) // block
    for b in prange(n_blocks):  # the lower triangle, block row by block row (the transposed reads stay in cache)
        for i0 in range(0, b * block + 1, block):
            for k in range(out.shape[0]):
                for u in range(b * block, min(m, (b + 1) * block)):
                    for v in range(i0, min(u, i0 + block)):
                        out[k, u, v] = out[k, v, u]


@njit(parallel=True, cache=True, fastmath=True)
def tree_predict(X, Zt, kind, start, stop, items, woff, wsq, alpha):
    """F = k(X, Z) @ alpha (m x outputs), row by row."""
    m, mp, nn, k = X.shape[0], Zt.shape[1], kind.shape[0], alpha.shape[1]
    F = np.zeros((m, k))
    At = np.ascontiguousarray(alpha.T)
    lf = _leaf_form(Zt, kind, start, stop, items, woff, wsq)
    n_chunks = (m + CHUNK - 1) // CHUNK
    for ch in prange(n_chunks):
        Krow = np.empty((nn, mp))
        scratch = _leaf_scratch(lf, mp)
        for u in range(ch * CHUNK, min(m, (ch + 1) * CHUNK)):
            _row_kernels(X[u], Zt, kind, start, stop, items, woff, wsq, Krow, lf, scratch)
            top = Krow[nn - 1]
            for c in range(k):
                a = At[c]
                s = 0.0
                for v in range(mp):
                    s += top[v] * a[v]
                F[u, c] = s
    return F


@njit(cache=True)
def _backward_scratch(n_leaves, d, width):
    """A thread's scratch for :func:`_row_backward_from`: the leaves' rows B_l K_l (zero before v0), their sums,
    and their products with Z and with Z o Z."""
    return np.empty((n_leaves, width)), np.empty(n_leaves), np.empty((n_leaves, d)), np.empty((n_leaves, d))


@njit(cache=True, fastmath=True)
def _row_backward_from(xu, Zr, Zr2, c0, v0, kind, start, stop, items, woff, w, wsq, Krow, Erow, B, lf, scratch, g):
    """The backward pass of :func:`tree_gradient` for one row, columns v >= v0 (slices, as in
    :func:`_row_kernels_from`): B[root] holds the row's weights W_u., Krow its node kernels; adds the row's
    dk/dtheta contractions to g. Inner nodes first, parents before children, each passing B_c = 2 w_i^2 B_n K_n
    down; then every leaf at once: with H_l = B_l K_l, a leaf's sum_v H_l(v) (x_j - z_vj)^2 is x_j^2 sum_v H_l(v)
    - 2 x_j (H_l Z)_j + (H_l (Z o Z))_j, two matrix products for all leaves (BLAS; Zr = Z[c0:], Zr2 = Zr o Zr,
    c0 <= v0, H zero on the columns before v0), where one pass per four features summed (x_j - z_vj)^2 terms
    until 2026-12-03 (see :func:`tree_kernel`'s timing). An ``exact`` child's 1 - K_c comes from its exponent in
    Erow (the forward pass's scratch, :data:`EPS_COMPLEMENT`), as the forward pass took it."""
    _, leaf_of, _, _, exact = lf
    Hc, h0, S1, S2 = scratch
    mq, nn = c0 + Zr.shape[0] - v0, kind.shape[0]
    skip = v0 - c0
    for n in range(nn - 1, -1, -1):  # parents before children: every inner node's B_c is set before its leaves
        if kind[n] == 1:
            Kn = Krow[n][v0:]
            Bn = B[n][v0:]
            t = leaf_of[n]
            h = Hc[t]
            for v in range(skip):
                h[v] = 0.0
            hv = h[skip:]
            s = 0.0
            for v in range(mq):
                hv[v] = Bn[v] * Kn[v]
                s += hv[v]
            h0[t] = s
        else:
            Kn = Krow[n][v0:]
            Bn = B[n][v0:]
            for t in range(start[n], stop[n]):
                c = items[t]
                i = woff[n] + t - start[n]
                Bc = B[c][v0:]
                factor = 2.0 * wsq[i]
                s = 0.0
                Kc = Krow[c][v0:]
                if exact[c]:
                    ec = Erow[c][v0 - c0:]
                    for v in range(mq):
                        common = Bn[v] * Kn[v]
                        s += common * one_minus_exp(ec[v], Kc[v])
                        Bc[v] = common * factor
                else:
                    for v in range(mq):
                        common = Bn[v] * Kn[v]
                        s += common * (1.0 - Kc[v])
                        Bc[v] = common * factor
                g[i] += -4.0 * w[i] * s
    np.dot(Hc, Zr, S1)
    np.dot(Hc, Zr2, S2)
    for n in range(nn):
        if kind[n] == 1:
            t = leaf_of[n]
            for it in range(start[n], stop[n]):
                j = items[it]
                xj = xu[j]
                i = woff[n] + it - start[n]
                g[i] += -2.0 * w[i] * (xj * xj * h0[t] - 2.0 * xj * S1[t, j] + S2[t, j])


@njit(parallel=True, cache=True, fastmath=True)
def tree_gradient(X, Zt, kind, start, stop, items, woff, w, R, A, mode):
    """g_theta = sum_{u,v} W_uv dk(x_u, z_v)/dtheta, W = r A^T, by Lemma 4.1: B_root = W; a node n with kernel K_n
    passes B_c = 2 w_i^2 B_n K_n to child i and gets dk/dw_i = -4 w_i (1 - K_c) K_n per unit of B_n; a leaf
    gets dk/dv_j = -2 v_j (x_j - z_j)^2 K_leaf per unit of B_leaf.

    R holds the targets Y, and row u's residual r_u = Y_u - k(x_u, Z) A is formed from the row just computed,
    scaled by -2 / (m outputs): g is then the gradient of the mean squared residual, in one pass (the residual of
    a row needs only that row). ``hinge``: the loss is the hinge loss max(0, 1 - Y_u f_u) instead (labels +-1),
    whose derivative in f is -Y_u where the margin is below 1 and 0 elsewhere, scaled by 1 / (m outputs).
    ``mode``: 0 the least-squares loss, 1 the hinge loss, 2 R holds the row weights themselves (W = R A^T: the
    adjoint term v^T dK alpha of a refitted SVM's risk; the returned sum of losses is then 0).
    Returns (g, sum of the losses)."""
    m, mp, nn, k = X.shape[0], Zt.shape[1], kind.shape[0], R.shape[1]
    nw = w.shape[0]
    wsq = w * w
    At = np.ascontiguousarray(A.T)
    lf = _leaf_form(Zt, kind, start, stop, items, woff, wsq)
    Z = np.ascontiguousarray(Zt.T)
    Z2 = Z * Z
    n_leaves, d = lf[0].shape
    n_chunks = (m + CHUNK - 1) // CHUNK
    G = np.zeros((n_chunks, nw))
    sse = np.zeros(n_chunks)
    scale = -2.0 / (m * k)
    for ch in prange(n_chunks):
        Krow = np.empty((nn, mp))
        scratch = _leaf_scratch(lf, mp)
        B = np.empty((nn, mp))
        back = _backward_scratch(n_leaves, d, mp)
        r = np.empty(k)
        g = G[ch]
        for u in range(ch * CHUNK, min(m, (ch + 1) * CHUNK)):
            _row_kernels(X[u], Zt, kind, start, stop, items, woff, wsq, Krow, lf, scratch)
            top = Krow[nn - 1]
            for c in range(k):
                if mode == 2:
                    r[c] = R[u, c]
                    continue
                a = At[c]
                f = 0.0
                for v in range(mp):
                    f += top[v] * a[v]
                if mode == 1:
                    margin = R[u, c] * f
                    if margin < 1.0:
                        sse[ch] += 1.0 - margin
                        r[c] = -R[u, c] / (m * k)
                    else:
                        r[c] = 0.0
                else:
                    res = R[u, c] - f
                    sse[ch] += res * res
                    r[c] = scale * res
            root = B[nn - 1]
            for v in range(mp):
                root[v] = 0.0
            for c in range(k):
                rc = r[c]
                a = At[c]
                for v in range(mp):
                    root[v] += rc * a[v]
            _row_backward_from(X[u], Z, Z2, 0, 0, kind, start, stop, items, woff, w, wsq, Krow, scratch[3], B, lf,
                               back, g)
    out = np.zeros(nw)
    for ch in range(n_chunks):
        out += G[ch]
    return out, sse.sum()


@njit(parallel=True, cache=True, fastmath=True)
def tree_gradient_symmetric(X, Xt, kind, start, stop, items, woff, w, V, A):
    """:func:`tree_gradient`'s mode 2 with Z = X: g_theta = sum_{u,v} W_uv dk(x_u, x_v)/dtheta, W = V A^T, from the
    upper triangle: dk(x_u, x_v) = dk(x_v, x_u), so the pair u < v counts with the weight W_uv + W_vu, and the
    diagonal counts nothing (every node's kernel is 1 at x_u = x_v: a leaf's dk/dv_j has the factor
    (x_j - x_j)^2 = 0, a node's dk/dw_i the factor 1 - K_c = 0). Half the kernel rows and backward passes of the
    full pass; equal to it up to the order of the sums (tested). Chunks pair from both ends as in
    :func:`tree_kernel_symmetric`."""
    m, nn, k = X.shape[0], kind.shape[0], V.shape[1]
    nw = w.shape[0]
    wsq = w * w
    At = np.ascontiguousarray(A.T)
    Vt = np.ascontiguousarray(V.T)
    lf = _leaf_form(Xt, kind, start, stop, items, woff, wsq)
    X2 = X * X
    n_leaves, d = lf[0].shape
    n_chunks = (m + CHUNK - 1) // CHUNK
    n_pairs = (n_chunks + 1) // 2
    G = np.zeros((n_pairs, nw))
    for p in prange(n_pairs):
        Krow = np.empty((nn, m))
        B = np.empty((nn, m))
        g = G[p]
        for side in range(2):
            ch = _paired_chunk(p, side, n_chunks)
            if ch < 0:
                break
            c0, Xc, scratch = _chunk_columns(Xt, lf, ch)
            back = _backward_scratch(n_leaves, d, np.int64(m - c0))
            Xr, Xr2 = X[c0:], X2[c0:]
            for u in range(c0, min(m, c0 + CHUNK)):
                v0 = u + 1
                if v0 >= m:
                    continue
                mq = m - v0
                _row_kernels_from(X[u], Xc, c0, v0, kind, start, stop, items, woff, wsq, Krow, lf, scratch)
                root = B[nn - 1][v0:]
                for v in range(mq):
                    root[v] = 0.0
                for c in range(k):
                    vu, au = V[u, c], A[u, c]
                    a = At[c][v0:]
                    vv = Vt[c][v0:]
                    for v in range(mq):
                        root[v] += vu * a[v] + vv[v] * au
                _row_backward_from(X[u], Xr, Xr2, c0, v0, kind, start, stop, items, woff, w, wsq, Krow, scratch[3], B,
                                   lf, back, g)
    out = np.zeros(nw)
    for p in range(n_pairs):
        out += G[p]
    return out


def _exp_of(x):
    """exp(x) in the precision of x: :func:`fast_exp` for a float64, :func:`fast_exp32` for a float32 (compiled code
    only; the choice is made at compile time, by type)."""
    raise NotImplementedError("compiled code only")


@overload(_exp_of, jit_options={"cache": True})
def _exp_of_impl(x):
    if x == types.float32:
        return lambda x: fast_exp32(x)
    return lambda x: fast_exp(x)


def _as_type_of(value, like):
    """``value`` converted to the float type of ``like`` (compiled code only)."""
    raise NotImplementedError("compiled code only")


@overload(_as_type_of, jit_options={"cache": True})
def _as_type_of_impl(value, like):
    if like == types.float32:
        return lambda value, like: np.float32(value)
    return lambda value, like: np.float64(value)


@njit(parallel=True, cache=True, fastmath=True)
def propose_path(K, active, path, wsq, is_leaf, change, xcol, zcol, child, alpha):
    """The path's new kernels in the inactive buffers, and F = K_top_new @ alpha (alpha: columns x outputs).

    Level 0 is the node that owns the changed weight: a leaf gets K *= exp(-change (x_j - z_j)^2) (xcol, zcol:
    feature j), an inner node K *= exp(-2 change (1 - K_child)); each ancestor at level l gets
    K *= exp(-2 wsq[l] (K_old - K_new)) of the level below (Eqs. (4) and (7): the exponents are sums, so a change
    of one term is one factor).

    In the blocks' precision: on float32 blocks (``annealing_dtype="float32"``) the factors are computed in float32
    (:func:`fast_exp32`; ``xcol``, ``zcol`` then float32, ``change`` and ``wsq`` rounded to it), on float64 blocks
    in float64 (:func:`fast_exp`); F = K_top_new @ alpha is summed in float64 either way (``alpha``: float64)."""
    m, mp = K.shape[2], K.shape[3]
    n_out = alpha.shape[1]
    depth = path.shape[0]
    At = np.ascontiguousarray(alpha.T)
    f = np.zeros((m, n_out))
    n0 = path[0]
    a0 = active[n0]
    ac = active[child] if child >= 0 else 0
    one = _as_type_of(1.0, K[0, 0, 0, 0])
    c1 = _as_type_of(change, one)
    c2 = _as_type_of(2.0 * change, one)
    for u in prange(m):
        old = K[a0, n0, u]
        new = K[1 - a0, n0, u]
        if is_leaf:
            xu = xcol[u]
            for v in range(mp):
                d = xu - zcol[v]
                new[v] = old[v] * _exp_of(-c1 * d * d)
        else:
            kc = K[ac, child, u]
            for v in range(mp):
                new[v] = old[v] * _exp_of(-c2 * (one - kc[v]))
        for level in range(1, depth):
            p = path[level]
            ap = active[p]
            parent_old = K[ap, p, u]
            parent_new = K[1 - ap, p, u]
            a = _as_type_of(2.0 * wsq[level], one)
            for v in range(mp):
                parent_new[v] = parent_old[v] * _exp_of(-a * (old[v] - new[v]))
            old = parent_old
            new = parent_new
        for c in range(n_out):
            ac_ = At[c]
            s = 0.0
            for v in range(mp):
                s += np.float64(new[v]) * ac_[v]
            f[u, c] = s
    return f
