"""Independent exact privacy loss of a Markov-correlated release, by enumeration (tests only).

Model (docs/temporal-loss.md §1): a hidden chain x_1..x_T on n states whose law, given the first
pinned time s₁, runs backward with P^B and forward with P^F; at each t the release draws
o_t ~ K_t(·|x_t) independently given the chain. The loss of a protected set S for hypotheses
(a_S, b_S) is sup_o log Pr[o | x_S = a_S] / Pr[o | x_S = b_S].

Two kinds of kernels, each enumerated exactly:

* ``polytope``: the worst kernel allowed by per-pair step losses ℓ_t(a, b) = ε_t·δ(a, b), i.e.
  every likelihood vector λ with λ_a ≤ e^{ℓ_t(a, b)} λ_b. The ratio is linear-fractional in each
  λ_t separately, so its supremum over the product of polytopes is attained at a product of
  vertices; the vertices are enumerated by brute force (n ≤ 4).
* ``laplace``: the real Laplace mechanism on values v_a with sensitivity Δ. Between two
  consecutive values the ratio is monotone in e^{2ε o/Δ}, so per coordinate the supremum is at
  some o_t = v_a or at o_t → ±∞; those n + 2 likelihood vectors are enumerated.
* ``grid``: the integer value mechanism (docs/fp-safe-noise.md §4): k_a = round(v_a/g) on a
  grid of spacing g, output m = k_a + Z with Z discrete Laplace of integer scale t,
  Pr[m | a] = tanh(1/(2t))·e^{−|m − k_a|/t}. The same argument on the integers puts the
  supremum at m = k_a or m → ±∞; (g, t) per budget are given by the caller (the mechanism
  under test), and :func:`grid_step_loss` enumerates every output m for one step.

Given x_S the segments (before s₁, each bridge between pins, after s_k) are independent, so the
maximum over outputs splits per segment; the outer maximum over (a_S, b_S) is a max-plus chain.
Nothing here uses lmdk_core.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np


def polytope_vertices(step: np.ndarray) -> np.ndarray:
    """Vertices (rows, each summing to 1) of {λ ≥ 0, Σλ = 1, λ_a ≤ e^{step[a,b]} λ_b}
    (read-only; remembered per step matrix: a case's exact losses for several sets S and the
    pair restriction ask for the same polytopes, and n = 4 has 220 candidate vertices)."""
    step = np.ascontiguousarray(step, dtype=np.float64)
    return _polytope_vertices(step.shape[0], step.tobytes())


@functools.lru_cache(maxsize=4096)
def _polytope_vertices(n: int, key: bytes) -> np.ndarray:
    step = np.frombuffer(key, dtype=np.float64).reshape(n, n)
    if n == 1 or not np.any(step > 0):
        V = np.full((1, n), 1.0 / n)
        V.setflags(write=False)
        return V
    rows = []
    for a in range(n):
        for b in range(n):
            if a != b:
                r = np.zeros(n)
                r[a] = 1.0
                r[b] = -np.exp(step[a, b])
                rows.append(r)
    A = np.array(rows)
    verts = []
    for combo in itertools.combinations(range(len(A)), n - 1):
        M = np.vstack([A[list(combo)], np.ones(n)])
        if abs(np.linalg.det(M)) < 1e-12:
            continue
        rhs = np.zeros(n)
        rhs[-1] = 1.0
        lam = np.linalg.solve(M, rhs)
        if np.all(lam >= -1e-12) and np.all(A @ lam <= 1e-9 * (1 + np.abs(A).sum(1))):
            verts.append(np.maximum(lam, 0.0))
    V = np.unique(np.round(np.array(verts), 12), axis=0)
    V.setflags(write=False)
    return V


def laplace_vectors(values: np.ndarray, eps: float, sens: float) -> np.ndarray:
    """Likelihood vectors of the Laplace mechanism at o = v_a and o → ±∞ (rescaled, rows)."""
    v = np.asarray(values, dtype=float)
    if eps == 0:
        return np.ones((1, v.size))
    out = [np.exp(-eps * np.abs(o - v) / sens) for o in v]
    out.append(np.exp(eps * (v - v.max()) / sens))  # o → +∞
    out.append(np.exp(-eps * (v - v.min()) / sens))  # o → −∞
    return np.array(out)


def grid_index(values: np.ndarray, g: float) -> np.ndarray:
    """round(v/g) as integers (round half to even, like np.rint; g a power of two: v/g exact)."""
    return np.rint(np.asarray(values, dtype=float) / g).astype(np.int64)


def grid_step_loss(a: float, b: float, g: float, t: int) -> Fraction:
    """Exact sup over outputs m of log Pr[m | a]/Pr[m | b] for the integer value mechanism.

    Pr[m | x] = tanh(1/(2t))·e^{−|m − round(x/g)|/t}: the normalisers cancel, so the log-ratio
    is (|m − k_b| − |m − k_a|)/t, an integer over t. Every m from min(k) − 2 to max(k) + 2 is
    enumerated (outside that range the ratio is constant).
    """
    ka, kb = (int(k) for k in grid_index(np.array([a, b]), g))
    lo, hi = min(ka, kb) - 2, max(ka, kb) + 2
    if hi - lo > 50_000_000:
        raise ValueError("values too far apart on this grid to enumerate")
    m = np.arange(lo, hi + 1, dtype=np.int64)
    return Fraction(int((np.abs(m - kb) - np.abs(m - ka)).max()), int(t))


def _combos(vecs: list[np.ndarray]) -> np.ndarray:
    """All products: array (C, len(vecs), n) of one vector per position."""
    if not vecs:
        return np.zeros((1, 0, 0))
    idx = np.array(list(itertools.product(*[range(len(v)) for v in vecs])))
    return np.stack([vecs[k][idx[:, k]] for k in range(len(vecs))], axis=1)


def _chain_weights(P: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """W[c, a, b] = Σ over paths a → … → b of Π P and Π λ at the intermediate steps.

    ``lam`` is (C, g, n) for g intermediate positions; the path has g + 1 transitions."""
    C, g = lam.shape[0], lam.shape[1]
    W = np.broadcast_to(P, (C, *P.shape)).copy()
    for k in range(g):
        W = (W * lam[:, k, None, :]) @ P
    return W


def exact_loss(
    eps: np.ndarray,
    S: list[int],
    P_b: np.ndarray,
    P_f: np.ndarray,
    vectors,
    pinned_step,
    allowed=None,
) -> float:
    """Exact sup over outputs and hypothesis pairs of the log-likelihood ratio for the set S.

    ``vectors(t)`` gives the candidate likelihood vectors at free time t (rows);
    ``pinned_step(t)`` the n×n matrix of sup_o log K_t(o|a)/K_t(o|b) at a pinned time;
    ``allowed`` (n×n bool, optional) restricts the pair (a_s, b_s) at every pinned time.
    Hypotheses of zero probability are excluded.
    """
    T = len(eps)
    S = sorted(set(S))
    n = P_f.shape[0]
    NEG = -np.inf
    # backward segment: times 0..s1-1, feeding state at s1 through P^B
    s1, sk = S[0], S[-1]
    back = _combos([vectors(t) for t in range(s1 - 1, -1, -1)])  # positions s1-1 down to 0
    if s1 == 0:
        Bseg = np.zeros((n, n))
    else:
        # value(a) = Σ P^B[a, x_{s1-1}] λ_{s1-1}(x) Σ P^B[x, …] …
        C = back.shape[0]
        v = np.ones((C, n))
        for k in range(back.shape[1] - 1, -1, -1):  # from time 0 upward
            v = back[:, k, :] * v
            v = v @ P_b.T
        with np.errstate(divide="ignore"):
            lv = np.log(v)
        Bseg = (lv[:, :, None] - lv[:, None, :]).max(axis=0)
    if sk == T - 1:
        Fseg = np.zeros((n, n))
    else:
        fwd = _combos([vectors(t) for t in range(sk + 1, T)])
        C = fwd.shape[0]
        v = np.ones((C, n))
        for k in range(fwd.shape[1] - 1, -1, -1):
            v = fwd[:, k, :] * v
            v = v @ P_f.T
        with np.errstate(divide="ignore"):
            lv = np.log(v)
        Fseg = (lv[:, :, None] - lv[:, None, :]).max(axis=0)
    # bridges: tensor G[a, a', b, b'] = max over outputs of log W(a,a')/Z(a,a') − log W(b,b')/Z
    bridges = []
    for s, s_next in itertools.pairwise(S):
        lam = _combos([vectors(t) for t in range(s + 1, s_next)])
        g = s_next - s - 1
        Z = np.linalg.matrix_power(P_f, g + 1)
        W = P_f[None] if g == 0 else _chain_weights(P_f, lam)
        with np.errstate(divide="ignore", invalid="ignore"):
            lw = np.log(W) - np.log(Z)[None]
        ok = Z > 0
        G = (lw[:, :, :, None, None] - lw[:, None, None, :, :]).max(axis=0)
        G = np.where(ok[:, :, None, None] & ok[None, None, :, :], G, NEG)
        bridges.append(G)
    # max-plus over the chain of pinned pairs (a_i, b_i)
    pin0 = pinned_step(S[0])
    if allowed is not None:
        pin0 = np.where(allowed, pin0, NEG)
    val = Bseg + pin0  # (a1, b1)
    for i, G in enumerate(bridges):
        pin = pinned_step(S[i + 1])
        if allowed is not None:
            pin = np.where(allowed, pin, NEG)
        # new[a', b'] = max_{a, b} val[a, b] + G[a, a', b, b']
        tot = val[:, None, :, None] + G
        val = tot.max(axis=(0, 2)) + pin
    val = val + Fseg
    return float(val.max())


def all_pairs(eps_t: float, n: int) -> np.ndarray:
    """Step-loss matrix of an ε_t-DP step between any two states (Cao et al.'s assumption)."""
    return eps_t * (1.0 - np.eye(n))


def case_exact(
    eps: np.ndarray,
    S: list[int],
    P_b: np.ndarray,
    P_f: np.ndarray,
    delta: np.ndarray | None,
    *,
    laplace_values: np.ndarray | None = None,
    sensitivity: float = 1.0,
    grid_values: np.ndarray | None = None,
    grid: Callable[[float], tuple[float, int]] | None = None,
    allowed: np.ndarray | None = None,
) -> float:
    """Exact loss of S for step losses ε_t·δ (worst kernel), the real Laplace mechanism on
    ``laplace_values`` or the integer grid mechanism on ``grid_values`` with ``grid(ε) = (g, t)``
    (for both, ``delta`` is not used); ``allowed`` restricts pinned pairs."""
    cache: dict[float, tuple[np.ndarray, np.ndarray]] = {}

    def kernel(t: int) -> tuple[np.ndarray, np.ndarray]:
        """(candidate likelihood vectors, pinned step-loss matrix) at budget ε_t."""
        e = float(eps[t])
        if e not in cache:
            if e == 0 and (laplace_values is not None or grid_values is not None):
                n = P_f.shape[0]
                cache[e] = np.ones((1, n)), np.zeros((n, n))
            elif laplace_values is not None:
                v = np.asarray(laplace_values, dtype=float)
                cache[e] = (laplace_vectors(v, e, sensitivity),
                            e * np.abs(v[:, None] - v[None, :]) / sensitivity)
            elif grid_values is not None:
                assert grid is not None
                g, scale = grid(e)
                k = grid_index(grid_values, g)
                cache[e] = (laplace_vectors(k.astype(float), 1.0 / scale, 1.0),
                            np.abs(k[:, None] - k[None, :]) / scale)
            else:
                assert delta is not None
                cache[e] = polytope_vertices(e * delta), e * delta
        return cache[e]

    return exact_loss(eps, S, P_b, P_f, lambda t: kernel(t)[0], lambda t: kernel(t)[1],
                      allowed)


def _statistics(n_cases: int, seed: int = 2026) -> None:  # pragma: no cover - a report, not a test
    """Print enumeration statistics: reported bound / exact loss over random small cases."""
    from lmdk_core.correlation import (
        StepLosses,
        landmark_temporal_loss,
        location_steps,
        value_steps,
    )
    from lmdk_core.noise.exact import value_params

    def grid(e: float) -> tuple[float, int]:
        g, _d, t = value_params(1.0, e)
        return float(g), int(t)

    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_cases):
        kind = ("any", "laplace", "values-worst", "locations", "grid")[i % 5]
        n = int(rng.integers(2, 4 if kind != "any" else 5))
        T = int(rng.integers(1, 7 if n <= 3 else 5))
        W = rng.random((n, n)) ** rng.choice([1, 3, 8]) + 1e-9
        P_f = W / W.sum(1, keepdims=True)
        Wb = rng.random((n, n)) ** 3 + 1e-9
        P_b = Wb / Wb.sum(1, keepdims=True) if rng.random() < 0.5 else P_f
        eps = rng.choice([0.0, 0.05, 0.2, 0.5, 1.5], size=T)
        L = sorted(set(rng.integers(0, T, size=int(rng.integers(0, 3))).tolist()))
        t = int(rng.integers(0, T))
        lv = gv = None
        if kind == "any":
            steps, delta = None, all_pairs(1.0, n)
        elif kind in ("laplace", "values-worst"):
            v = np.sort(rng.choice([0.0, 0.5, 1.0, 2.0, 4.0], size=n, replace=False))
            steps = value_steps(v, sensitivity=1.0)
            delta, lv = steps.delta, (v if kind == "laplace" else None)
        elif kind == "grid":  # values a fraction of a grid step or about Δ = 1 apart
            gv = np.sort(rng.choice([0.0, 0.6, 1.5, 700.0, 1024.3, 2048.6], size=n,
                                    replace=False)) * 2.0**-10
            steps = value_steps(gv, sensitivity=1.0)
            delta = steps.delta
        else:
            c = np.column_stack([39.9 + rng.random(n) * 0.01, 116.3 + rng.random(n) * 0.01])
            steps = location_steps(c, radius_m=float(rng.choice([200.0, 500.0])), cell_m=100.0)
            delta = steps.delta
            eps = eps * 0.1
        lm = landmark_temporal_loss(eps, L, P_b, P_f, steps=steps)
        S = sorted(set(L) | {t})
        exact = case_exact(eps, S, P_b, P_f, delta, laplace_values=lv, grid_values=gv, grid=grid)
        single = case_exact(eps, [t], P_b, P_f, delta, laplace_values=lv, grid_values=gv,
                            grid=grid)
        old = lm.loss.tpl[t] + sum(lm.loss.tpl[i] for i in L if i != t)
        former = None  # grid: the former value steps |a − b|/Δ (no rounding) below exact?
        if gv is not None:
            fs = StepLosses(np.abs(gv[:, None] - gv[None, :]), "values", "former")
            fl = landmark_temporal_loss(eps, L, P_b, P_f, steps=fs)
            former = (fl.composed[t] < exact - 1e-9 * (1 + exact)
                      or fl.loss.tpl[t] < single - 1e-9 * (1 + single))
        rows.append((kind, len(S), lm.composed[t], exact, lm.loss.tpl[t], single, old,
                     lm.cap, former))
    kinds = sorted({r[0] for r in rows})
    print(f"{len(rows)} random cases (n ≤ 4 states, T ≤ 6), seed {seed}")
    for k in [*kinds, "all"]:
        sel = [r for r in rows if k in ("all", r[0])]
        joint = [(r[2], r[3]) for r in sel if r[3] > 1e-12]
        one = [(r[4], r[5]) for r in sel if r[5] > 1e-12]
        jr = np.array([b / e for b, e in joint])
        orat = np.array([b / e for b, e in one])
        bad = sum(b < e - 1e-9 * (1 + e) for b, e in joint) + sum(
            b < e - 1e-9 * (1 + e) for b, e in one)
        over_cap = sum(r[2] > r[7] + 1e-12 for r in sel)
        multi = [r for r in sel if r[1] > 1 and r[3] > 1e-12]
        old_low = sum(r[6] < r[3] - 1e-9 for r in multi)
        print(f"  {k:13s} cases {len(sel):5d}  joint bound/exact min {jr.min():.4f} "
              f"max {jr.max():.3f}  single-event TPL/exact min {orat.min():.4f} "
              f"max {orat.max():.3f}  below exact: {bad}  above cap: {over_cap}  "
              f"old Σ TPL below exact: {old_low}/{len(multi)}")
        if k == "grid":
            print(f"  {'':13s} former value steps |a − b|/Δ below exact: "
                  f"{sum(bool(r[8]) for r in sel)}/{len(sel)}")


if __name__ == "__main__":  # pragma: no cover
    import sys

    _statistics(int(sys.argv[1]) if len(sys.argv) > 1 else 400)


def brute_force_increment(P: np.ndarray, alpha: float) -> float:
    """Cao et al.'s loss increment L(α) of transition matrix ``P`` by its definition: the max over
    ordered row pairs (q, d) and non-empty column subsets J of
    log(1 + (e^α − 1)·P[q, J].sum()) − log(1 + (e^α − 1)·P[d, J].sum())."""
    y, n = math.expm1(alpha), P.shape[0]
    best = 0.0
    for i, j in itertools.permutations(range(n), 2):
        for r in range(1, n + 1):
            for J in itertools.combinations(range(n), r):
                J = list(J)
                best = max(best, math.log1p(y * P[i, J].sum()) - math.log1p(y * P[j, J].sum()))
    return best
