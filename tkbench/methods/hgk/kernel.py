"""Hierarchical Gaussian kernels (paper 002: Steinwart, Thomann & Schmid 2016, section 2, Eqs. (3)-(7)).

An *architecture* is a tree. A leaf (a depth-1 node) holds a feature subset I and one weight v_j per feature:
the inhomogeneous Gaussian of Eq. (4),

    k_v(x, x') = exp(-sum_{j in I} v_j^2 (x_j - x'_j)^2).

An inner node holds children k_1..k_l (normalised kernels: k_i(x, x) = 1) and one weight w_i per child: Eq. (7),

    k(x, x') = exp(-2 gamma^-2 sum_i w_i^2 (1 - k_i(x_{I_i}, x'_{I_i}))),

with gamma = 1 (the top gamma is absorbed by the top weights, as the paper notes below Eq. (5)). The depth of a
tree is that of Definition 2.1: a leaf has depth 1, a node over depth-(m-1) children depth m.

Architecture syntax (configs and ``HGK*`` estimators), nested lists of 0-based feature indices:

- ``[0, 1, 2]``: a leaf, the inhomogeneous Gaussian on features 0-2 (depth 1);
- ``[[0, 1], [1, 2, 3]]``: depth 2 with two first-layer nodes on features {0, 1} and {1, 2, 3} (Eq. (5));
- ``[[[0, 1], [2]], [[3, 4]]]``: depth 3 (Eq. (6)); children of one node may have different depths;
- shorthands resolved against the number of features d: ``"inhomogeneous"`` (one leaf on all features) and
  ``"depth2:l"`` (l first-layer leaves, each on all features: the paper's section 5 architectures, l = 4..16).

Weights are one flat vector in depth-first order (a node's own weights, then each child's), see
:meth:`Architecture.slices`. Derivatives by Lemma 4.1: for a node k with children k_i,
dk/dw_i = -4 w_i (1 - k_i) k, and for a weight theta inside child i, dk/dtheta = 2 w_i^2 (dk_i/dtheta) k.
(Lemma 4.1's second formula as printed lacks the factor k of the parent, and so does its depth-2 example in the
appendix; the chain rule needs it. The finite-difference test decides.) A leaf: dk/dv_j = -2 v_j (x_j - x'_j)^2 k.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np


class ArchitectureError(ValueError):
    pass


@dataclass
class Node:
    """A leaf (``features``) or an inner node (``children``); ``offset`` and ``size`` locate its own weights."""

    features: tuple[int, ...] | None = None
    children: list[Node] = field(default_factory=list)
    offset: int = 0
    size: int = 0

    @property
    def is_leaf(self) -> bool:
        return self.features is not None

    @property
    def depth(self) -> int:
        return 1 if self.is_leaf else 1 + max(c.depth for c in self.children)


class Architecture:
    """A parsed architecture: the tree, its weight layout and its depth."""

    def __init__(self, spec: Any, n_features: int):
        self.spec = spec
        self.n_features = int(n_features)
        self.root = _parse(_expand(spec, self.n_features), self.n_features, path="architecture")
        self.n_weights = _layout(self.root, 0)

    @property
    def depth(self) -> int:
        return self.root.depth

    def nodes(self) -> list[Node]:
        out: list[Node] = []
        _walk(self.root, out)
        return out

    @cached_property
    def flat(self) -> FlatTree:
        """The tree as arrays for the compiled loops (post-order, root last)."""
        return _flatten(self.root)

    def describe(self) -> Any:
        """The architecture as nested lists of feature indices (shorthands resolved)."""
        return _describe(self.root)

    def initial_weights(self, scale: float | None = None) -> np.ndarray:
        """All weights of a leaf 1 / sqrt(|I|) and of an inner node 1 / sqrt(l) (scale None), or ``scale``."""
        w = np.empty(self.n_weights)
        for node in self.nodes():
            w[node.offset:node.offset + node.size] = scale if scale is not None else 1.0 / np.sqrt(node.size)
        return w


def _expand(spec: Any, d: int) -> Any:
    if isinstance(spec, str):
        if spec == "inhomogeneous":
            return list(range(d))
        if spec.startswith("depth2:"):
            try:
                l = int(spec.split(":", 1)[1])  # noqa: E741
            except ValueError:
                l = 0  # noqa: E741
            if l < 1:
                raise ArchitectureError(f"architecture {spec!r}: expected depth2:l with l >= 1 first-layer nodes")
            return [list(range(d)) for _ in range(l)]
        raise ArchitectureError(f"architecture {spec!r}: expected nested lists of feature indices, "
                                "'inhomogeneous' or 'depth2:l'")
    return spec


def _parse(spec: Any, d: int, path: str) -> Node:
    if not isinstance(spec, list | tuple) or len(spec) == 0:
        raise ArchitectureError(f"{path}: {spec!r}: expected a non-empty list (of feature indices, or of nodes)")
    if all(isinstance(s, int | np.integer) and not isinstance(s, bool) for s in spec):
        bad = [int(s) for s in spec if not 0 <= int(s) < d]
        if bad or len(set(spec)) != len(spec):
            raise ArchitectureError(f"{path}: {list(spec)}: expected distinct feature indices in 0..{d - 1}")
        return Node(features=tuple(int(s) for s in spec))
    if all(isinstance(s, list | tuple) for s in spec):
        return Node(children=[_parse(s, d, f"{path}[{i}]") for i, s in enumerate(spec)])
    raise ArchitectureError(f"{path}: {spec!r}: a node lists either feature indices (a leaf) or child nodes")


def _layout(node: Node, offset: int) -> int:
    node.offset = offset
    node.size = len(node.features) if node.is_leaf else len(node.children)
    offset += node.size
    for child in node.children:
        offset = _layout(child, offset)
    return offset


def _walk(node: Node, out: list[Node]) -> None:
    out.append(node)
    for child in node.children:
        _walk(child, out)


def _describe(node: Node) -> Any:
    return list(node.features) if node.is_leaf else [_describe(c) for c in node.children]


@dataclass(frozen=True)
class FlatTree:
    """A tree in post-order as the compiled loops read it (:mod:`tkbench.methods.hgk._numba`)."""

    nodes: list[Node]  # post-order: children before parents, the root last
    kind: np.ndarray  # 1 leaf, 0 inner node
    start: np.ndarray
    stop: np.ndarray
    items: np.ndarray  # a leaf's feature indices / an inner node's child node indices
    woff: np.ndarray  # offset of the node's weights

    def arrays(self) -> tuple[np.ndarray, ...]:
        return self.kind, self.start, self.stop, self.items, self.woff


def _flatten(root: Node) -> FlatTree:
    order: list[Node] = []

    def post(node: Node) -> None:
        for child in node.children:
            post(child)
        order.append(node)

    post(root)
    index = {id(n): i for i, n in enumerate(order)}
    kind, start, stop, items, woff = [], [], [], [], []
    for n in order:
        kind.append(1 if n.is_leaf else 0)
        start.append(len(items))
        items.extend(n.features if n.is_leaf else [index[id(c)] for c in n.children])
        stop.append(len(items))
        woff.append(n.offset)
    as_int = lambda v: np.asarray(v, dtype=np.int64)  # noqa: E731
    return FlatTree(order, as_int(kind), as_int(start), as_int(stop), as_int(items), as_int(woff))


# ---------------------------------------------------------------------------------------------------------------
# kernel matrices and their weight derivatives


def _squared_differences(X: np.ndarray, Z: np.ndarray, features: tuple[int, ...]) -> np.ndarray:
    """(x_j - z_j)^2 for each feature j of the leaf: |I| x m x m'."""
    idx = list(features)
    return (X[:, idx].T[:, :, None] - Z[:, idx].T[:, None, :]) ** 2


def leaf_exponent(X: np.ndarray, Z: np.ndarray, features: tuple[int, ...], v: np.ndarray) -> np.ndarray:
    """sum_j v_j^2 (x_uj - z_vj)^2 over the leaf's features, as |x'|^2 + |z'|^2 - 2 x'^T z' with x' = v o x_I
    (one matrix product; rounding below 0 is clipped)."""
    idx = list(features)
    Xs, Zs = X[:, idx] * v, Z[:, idx] * v
    S = np.einsum("uj,uj->u", Xs, Xs)[:, None] + np.einsum("vj,vj->v", Zs, Zs)[None, :] - 2.0 * (Xs @ Zs.T)
    return np.maximum(S, 0.0, out=S)


def node_kernel(node: Node, weights: np.ndarray, X: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """The m x m' matrix of the kernel at ``node`` (Eq. (4) for a leaf, Eq. (7) with gamma = 1 above)."""
    w = weights[node.offset:node.offset + node.size]
    if node.is_leaf:
        return np.exp(-leaf_exponent(X, Z, node.features, w))
    S = np.zeros((len(X), len(Z)))
    for i, child in enumerate(node.children):
        S += w[i] ** 2 * (1.0 - node_kernel(child, weights, X, Z))
    return np.exp(-2.0 * S)


def _checked(arch: Architecture, weights: np.ndarray) -> np.ndarray:
    weights = np.asarray(weights, float)
    if weights.shape != (arch.n_weights,):
        raise ArchitectureError(f"weights: expected {arch.n_weights} values for this architecture, got "
                                f"{weights.shape}")
    return weights


def kernel(arch: Architecture, weights: np.ndarray, X: np.ndarray, Z: np.ndarray | None = None) -> np.ndarray:
    """The hierarchical Gaussian kernel matrix k(X, Z) of ``arch`` with ``weights`` (Z None: Z = X), compiled
    (:func:`tkbench.methods.hgk._numba.tree_kernel`; :func:`node_kernel` is the NumPy reference). Z None computes
    the upper triangle and mirrors it when the tree has inner nodes (:func:`tkbench.methods.hgk._numba.
    tree_kernel_symmetric`: the full pass's matrix to rounding, exactly symmetric, from half the exponentials;
    1.6-1.8 times faster for depth2:6 on 16 features and depth2:8 on 4 at about 3000 rows, one thread,
    2026-12-02). A single Gaussian (``inhomogeneous``) is cheap per entry, and there mirroring cost more than the
    half it saved (0.36 s against 0.32 s at 3111 rows and 28 features), so it takes the full pass (symmetric to
    rounding: the leaves' exponents are matrix products, :mod:`tkbench.methods.hgk._numba`)."""
    from tkbench.methods.hgk._numba import tree_kernel, tree_kernel_symmetric

    weights = _checked(arch, weights)
    X = np.ascontiguousarray(X, float)
    Zt = np.ascontiguousarray(X.T if Z is None else np.asarray(Z, float).T)
    out = np.empty((len(X), Zt.shape[1]))
    flat = arch.flat.arrays()
    symmetric = Z is None and len(flat[0]) > 1  # flat[0]: the nodes' kinds
    (tree_kernel_symmetric if symmetric else tree_kernel)(X, Zt, *flat, weights ** 2, out[None])
    return out


def kernel_predict(arch: Architecture, weights: np.ndarray, X: np.ndarray, Z: np.ndarray,
                   alpha: np.ndarray) -> np.ndarray:
    """k(X, Z) @ alpha without storing k(X, Z): memory O(m x outputs), one compiled pass (alpha: a vector or
    m' x outputs)."""
    from tkbench.methods.hgk._numba import tree_predict

    weights = _checked(arch, weights)
    alpha = np.asarray(alpha, float)
    A = np.ascontiguousarray(alpha.reshape(len(alpha), -1))
    F = tree_predict(np.ascontiguousarray(X, float), np.ascontiguousarray(np.asarray(Z, float).T),
                     *arch.flat.arrays(), weights ** 2, A)
    return F[:, 0] if alpha.ndim == 1 else F


def risk_and_gradient(arch: Architecture, weights: np.ndarray, X: np.ndarray, Z: np.ndarray, Y: np.ndarray,
                      A: np.ndarray, loss: str = "ls") -> tuple[float, np.ndarray]:
    """The least-squares risk mean((Y - k(X, Z) A)^2) (over points and outputs) and its gradient in the weights,
    in one compiled pass over the block (Lemma 4.1; no m x m' matrix stored). ``loss="hinge"``: the hinge risk
    mean(max(0, 1 - Y k(X, Z) A)) (Y in {-1, +1}) and its (sub)gradient, 0 where the margin is 1 or more."""
    if loss not in ("ls", "hinge"):
        raise ValueError(f"loss = {loss!r}: expected 'ls' or 'hinge'")
    from tkbench.methods.hgk._numba import tree_gradient

    weights = _checked(arch, weights)
    Y = np.asarray(Y, float)
    A = np.asarray(A, float)
    Ym = np.ascontiguousarray(Y.reshape(len(Y), -1))
    g, sse = tree_gradient(np.ascontiguousarray(X, float), np.ascontiguousarray(np.asarray(Z, float).T),
                           *arch.flat.arrays(), weights, Ym, np.ascontiguousarray(A.reshape(len(A), -1)),
                           1 if loss == "hinge" else 0)
    return float(sse / Ym.size), g


def weighted_gradient(arch: Architecture, weights: np.ndarray, X: np.ndarray, Z: np.ndarray | None, V: np.ndarray,
                      A: np.ndarray) -> np.ndarray:
    """sum_{u,v,c} V_uc A_vc dk(x_u, z_v)/dW for every weight, in one compiled pass (Lemma 4.1; no m x m' matrix
    stored): the adjoint term of a refitted SVM's risk (:func:`tkbench.methods.hgk.annealing.refit_risk_gradient`).
    V: m x outputs (or a vector), A: m' x outputs. Z None: Z = X, from the upper triangle
    (:func:`tkbench.methods.hgk._numba.tree_gradient_symmetric`: half the work, equal to the full pass up to the
    order of the sums)."""
    from tkbench.methods.hgk._numba import tree_gradient, tree_gradient_symmetric

    weights = _checked(arch, weights)
    X = np.ascontiguousarray(X, float)
    V = np.ascontiguousarray(np.asarray(V, float).reshape(len(V), -1))
    A = np.ascontiguousarray(np.asarray(A, float).reshape(len(A), -1))
    if Z is None:
        return tree_gradient_symmetric(X, np.ascontiguousarray(X.T), *arch.flat.arrays(), weights, V, A)
    g, _ = tree_gradient(X, np.ascontiguousarray(np.asarray(Z, float).T), *arch.flat.arrays(), weights, V, A, 2)
    return g


def kernel_and_gradient(arch: Architecture, weights: np.ndarray, X: np.ndarray,
                        Z: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """k(X, Z) and dk/dW for every weight (n_weights x m x m') by Lemma 4.1 (module doc)."""
    weights = np.asarray(weights, float)
    X = np.asarray(X, float)
    Z = X if Z is None else np.asarray(Z, float)
    grad = np.zeros((arch.n_weights, len(X), len(Z)))
    K = _node_grad(arch.root, weights, X, Z, grad, np.ones((len(X), len(Z))))
    return K, grad


def _node_grad(node: Node, weights: np.ndarray, X: np.ndarray, Z: np.ndarray, grad: np.ndarray,
               outer: np.ndarray) -> np.ndarray:
    """This node's kernel; adds ``outer`` * dk_node/dtheta to ``grad`` for every weight theta of its subtree.
    ``outer`` is d(top kernel)/d(this node's kernel): the product of the ancestors' chain factors 2 w_i^2 k.
    (A reference implementation: children's kernels are computed twice; the fast path is the annealing code's.)"""
    w = weights[node.offset:node.offset + node.size]
    if node.is_leaf:
        D = _squared_differences(X, Z, node.features)
        K = np.exp(-np.tensordot(w ** 2, D, axes=1))
        for j in range(node.size):
            grad[node.offset + j] += outer * (-2.0 * w[j] * D[j] * K)
        return K
    # first the children's kernels (needed for this node's kernel), then their gradients with the chain factor
    child_K = [node_kernel(c, weights, X, Z) for c in node.children]
    S = sum(w[i] ** 2 * (1.0 - Ki) for i, Ki in enumerate(child_K))
    K = np.exp(-2.0 * S)
    for i, (child, Ki) in enumerate(zip(node.children, child_K, strict=True)):
        grad[node.offset + i] += outer * (-4.0 * w[i] * (1.0 - Ki) * K)
        _node_grad(child, weights, X, Z, grad, outer * 2.0 * w[i] ** 2 * K)
    return K


# ---------------------------------------------------------------------------------------------------------------
# incremental updates (simulated annealing changes one weight per step)


class BlockState:
    """The kernel block k(X, Z) of an architecture, kept up to date under one-weight changes.

    Per node it holds its kernel matrix. A node's kernel is the exponential of a sum (leaf: -sum_j v_j^2 (x_j -
    z_j)^2; inner node: -2 sum_i w_i^2 (1 - k_i)), so changing one weight of node n multiplies the block at n by
    exp(-(w_new^2 - w_old^2) * term) and each ancestor's by exp(-2 w^2 (k_old - k_new)): one elementwise pass per
    level, never a rebuild, O(depth x m x m') time, fused with f = K alpha in one compiled loop
    (:mod:`tkbench.methods.hgk._numba`). Memory: every node's kernel in two buffers, 2 x nodes x m x m'
    doubles (0.97 GB for depth 2 with 16 first-layer nodes on a 1333 x 2667 block); a proposal writes the path
    into the inactive buffers and :meth:`commit` flips them (no copy). :meth:`refresh` recomputes everything from
    scratch (the incremental products drift by rounding; callers refresh every few thousand commits).

    ``dtype`` float32 (``annealing_dtype="float32"`` of the estimators; not the paper's) holds the blocks in single
    precision: half the memory, and the proposals' factors computed 8 to an AVX2 vector
    (:func:`~tkbench.methods.hgk._numba.propose_path` in the blocks' precision; F still summed in float64). The blocks are then exact to
    about 1e-7 relative after a refresh, and each committed step on a path multiplies in one more rounding of about
    2e-7; only the annealing's choices see them: the weights it returns are used in double precision.
    """

    def __init__(self, arch: Architecture, weights: np.ndarray, X: np.ndarray, Z: np.ndarray,
                 dtype: type | str = np.float64):
        self.arch = arch
        self.X = np.ascontiguousarray(X, float)
        self.Z = np.ascontiguousarray(Z, float)
        self.weights = np.array(weights, float)
        self.nodes = arch.flat.nodes  # post-order: the root is the last node
        self.index = {id(node): i for i, node in enumerate(self.nodes)}
        self.owner: dict[int, tuple[Node, int]] = {}
        self.parent: dict[int, tuple[Node, int]] = {}
        for node in self.nodes:
            for k in range(node.size):
                self.owner[node.offset + k] = (node, k)
            for i, child in enumerate(node.children):
                self.parent[id(child)] = (node, i)
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.float64, np.float32):
            raise ValueError(f"dtype = {dtype!r}: expected float64 or float32")
        self.K = np.empty((2, len(self.nodes), len(self.X), len(self.Z)), self.dtype)
        self.active = np.zeros(len(self.nodes), dtype=np.int64)
        self._pending: tuple[int, float, np.ndarray] | None = None
        self.refresh()

    def refresh(self) -> None:
        """Every node's block from scratch (one compiled pass, in double precision) into buffer 0."""
        from tkbench.methods.hgk._numba import tree_kernel

        self.active[:] = 0
        tree_kernel(self.X, np.ascontiguousarray(self.Z.T), *self.arch.flat.arrays(), self.weights ** 2, self.K[0])
        self._pending = None

    @property
    def kernel(self) -> np.ndarray:
        root = len(self.nodes) - 1
        return self.K[self.active[root], root]

    def _run(self, index: int, value: float, alpha: np.ndarray) -> np.ndarray:
        from tkbench.methods.hgk._numba import propose_path

        node, k = self.owner[index]
        old = self.weights[index]
        path, wsq = [self.index[id(node)]], [0.0]
        walk = node
        while id(walk) in self.parent:
            parent, i = self.parent[id(walk)]
            path.append(self.index[id(parent)])
            wsq.append(self.weights[parent.offset + i] ** 2)
            walk = parent
        if node.is_leaf:
            feature, child = node.features[k], -1
            xcol, zcol = self.X[:, feature], self.Z[:, feature]
        else:
            child = self.index[id(node.children[k])]
            xcol = zcol = np.zeros(1)
        path_arr = np.array(path, dtype=np.int64)
        f = propose_path(self.K, self.active, path_arr, np.array(wsq), node.is_leaf, value * value - old * old,
                    np.ascontiguousarray(xcol, self.dtype), np.ascontiguousarray(zcol, self.dtype), child, alpha)
        self._pending = (index, float(value), path_arr)
        return f

    def propose_predict(self, index: int, value: float, alpha: np.ndarray) -> np.ndarray:
        """K_new @ alpha with weight ``index`` set to ``value`` (the state is unchanged until :meth:`commit`);
        alpha a vector or a matrix (one column per output: the one-vs-all problems sharing the kernel)."""
        alpha = np.asarray(alpha, float)
        f = self._run(index, value, np.ascontiguousarray(alpha.reshape(len(alpha), -1)))
        return f[:, 0] if alpha.ndim == 1 else f

    def propose(self, index: int, value: float) -> np.ndarray:
        """The top kernel with weight ``index`` set to ``value`` (the state is unchanged until :meth:`commit`)."""
        self._run(index, value, np.zeros((len(self.Z), 1)))
        root = len(self.nodes) - 1
        return self.K[1 - self.active[root], root]

    def commit(self) -> None:
        """Keep the last proposal."""
        if self._pending is None:
            raise RuntimeError("commit() without a proposal")
        index, value, path = self._pending
        self.weights[index] = value
        self.active[path] = 1 - self.active[path]
        self._pending = None
