"""Every loss the library reports as a bound is ≥ the exact loss and ≤ the composition bound.

Exact losses come from tests/correlation_exact.py (independent enumeration over outputs and
hypotheses, no lmdk_core code), for three neighbour relations: any two states (Cao et al.),
values (the real mechanisms — continuous Laplace and the integer grid mechanism the releases
use, lmdk_core.noise.exact — and the worst kernel with steps ε_t·(|a−b| + g_max)/Δ) and grid
cells of a location release (the worst kernel with steps ε_t·f(d + cell diagonal, r), f the
lattice mechanism's distance factor; the step itself is checked against the integer lattice
shift of real point pairs inside the two cells). Deliberately wrong formulas (Σ TPL over
L ∪ {t}; the recursion fed ε_t instead of the step losses; value steps without the grid's
rounding; location steps (d + cell diagonal)/r without the lattice's rounding) are shown to
fail, so these checks can fail.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from correlation_exact import all_pairs, case_exact, grid_step_loss
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_core.correlation import (
    StepLosses,
    landmark_temporal_loss,
    location_steps,
    temporal_loss,
    value_steps,
)
from lmdk_core.correlation.neighbours import location_factor
from lmdk_core.geo import haversine_m, offset_points
from lmdk_core.ledger import LATTICE_SLACK, distance_factor
from lmdk_core.noise.exact import lattice_index, lattice_params, value_params

TOL = 1e-9
CEX_P = np.array([[1 - 1e-6, 1e-6], [0.7, 0.3]])
CEX_EPS = np.array([0.3, 0.0, 2.0, 0.05])


def test_issue_counterexample_landmark_bound():
    exact = case_exact(CEX_EPS, [0, 3], CEX_P, CEX_P, all_pairs(1.0, 2))
    assert exact == pytest.approx(2.350, abs=5e-4)
    lm = landmark_temporal_loss(CEX_EPS, [0], CEX_P, CEX_P)
    assert lm.composed[3] >= exact - TOL  # sound (here tight: 2.35)
    assert lm.composed[3] <= CEX_EPS.sum() + TOL
    # the former formula Σ_{i ∈ L ∪ {t}} TPL_i reported 1.905 < 2.350: not a bound
    tpl = temporal_loss(CEX_EPS, CEX_P, CEX_P).tpl
    assert tpl[0] + tpl[3] == pytest.approx(1.905, abs=5e-4)
    assert tpl[0] + tpl[3] < exact - 0.4


def test_values_need_their_step_losses():
    # values {0, 1, 50}, Laplace with Δ = 1: 0 vs 50 at t loses far more than ε_t
    v = np.array([0.0, 1.0, 50.0])
    P = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]])
    eps = np.array([0.1, 0.1])
    steps = value_steps(v, sensitivity=1.0)
    exact = case_exact(eps, [0], P, P, steps.delta, laplace_values=v)
    cao = temporal_loss(eps, P, P).tpl[0]  # assumes ε_t-DP between any two states
    assert cao < 0.21 and exact > 5.0  # the unscaled recursion is far too low
    sound = temporal_loss(eps, P, P, steps=steps)
    assert sound.tpl[0] >= exact - TOL and sound.tpl[0] <= sound.cap + TOL
    # the pair the user cares about, 0 vs 1: exact only over hypotheses 1 apart
    near = np.abs(v[:, None] - v[None, :]) <= 1.0
    exact_pair = case_exact(eps, [0], P, P, steps.delta, laplace_values=v, allowed=near)
    pair = temporal_loss(eps, P, P, steps=steps, separation=1.0).pair[0]
    assert exact_pair - TOL <= pair < sound.tpl[0]


# ---- values released on the exact grid (issue 24, finding 8) ------------------------------
def _g_max(sens):
    """The largest grid step of the value release at sensitivity ``sens`` (any ε ≤ 1)."""
    return float(value_params(sens, 1.0)[0])


def _grid(sens):
    """ε ↦ (g, t) of the value release at sensitivity ``sens``: the mechanism under test."""
    def params(e):
        g, _d, t = value_params(sens, e)
        return float(g), int(t)
    return params


def _old_bound(a, b, sens, eps):
    """The former value step loss ε·|a − b|/Δ (no rounding)."""
    return eps * abs(a - b) / sens


def _scan(n_cases, seed=24):
    """(cases with a positive exact loss, below exact for the old formula, for value_steps,
    worst exact/old ratio) over random values, Δ and ε (ε up to 50, where g shrinks)."""
    rng = np.random.default_rng(seed)
    cases = old_low = new_low = 0
    worst = 1.0
    for _ in range(n_cases):
        sens = float(rng.choice([0.01, 0.3, 1.0, 7.0, 250.0]))
        eps = float(rng.choice([0.01, 0.1, 0.5, 1.0, 1.7, 3.0, 50.0]))
        g, _d, t = value_params(sens, eps)
        a = float(rng.uniform(-20, 20)) * sens
        b = a + (float(rng.uniform(0, 3)) * g if rng.random() < 0.5
                 else float(rng.uniform(0, 2)) * sens)
        exact = grid_step_loss(a, b, g, int(t))
        if exact == 0:
            continue
        cases += 1
        old = _old_bound(a, b, sens, eps)
        if Fraction(old) < exact:
            old_low += 1
            worst = max(worst, float(exact) / old if old else float("inf"))
        new_low += Fraction(eps * value_steps([a, b], sensitivity=sens).delta[0, 1]) < exact
    return cases, old_low, new_low, worst


def test_value_steps_cover_the_grid_rounding():
    cases, old_low, new_low, worst = _scan(2000)
    assert cases > 1500
    assert new_low == 0
    assert old_low > 100 and worst > 1.5  # the former |a − b|/Δ is not a bound (can fail)


def test_grid_rounding_counterexample():
    # Δ = 1, ε = 0.5: g = 2^-10, D = 1025, t = ⌈2050·(1 + 2^-40)⌉ = 2051. 0 and 0.6·g round
    # one grid step apart: the exact loss is 1/t = 4.876e-4; the former ε·|a − b|/Δ = 2.93e-4
    sens, eps, a, b = 1.0, 0.5, 0.0, 0.6 * 2.0**-10
    g, d, t = value_params(sens, eps)
    assert (g, d, t) == (2.0**-10, 1025, 2051)
    exact = grid_step_loss(a, b, g, int(t))
    assert exact == Fraction(1, 2051) and _old_bound(a, b, sens, eps) < float(exact) * 0.61
    steps = value_steps([a, b], sensitivity=sens)
    assert Fraction(eps * steps.delta[0, 1]) >= exact
    # through the loss recursion too: one release, the pair 0 vs 0.6·g
    P = np.array([[0.9, 0.1], [0.2, 0.8]])
    e = np.array([eps])
    v = np.array([a, b])
    chain_exact = case_exact(e, [0], P, P, None, grid_values=v, grid=_grid(sens))
    assert chain_exact == pytest.approx(1 / 2051, rel=1e-12)
    assert temporal_loss(e, P, P, steps=steps).tpl[0] >= chain_exact
    old = StepLosses(np.abs(v[:, None] - v[None, :]) / sens, "values", "old", sens)
    assert temporal_loss(e, P, P, steps=old).tpl[0] < chain_exact * 0.61


@st.composite
def value_pairs(draw):
    sens = draw(st.floats(1e-3, 1e3))
    eps = draw(st.one_of(st.floats(0.01, 1.0), st.floats(1.0, 64.0)))
    g = float(value_params(sens, eps)[0])
    a = draw(st.floats(-50.0, 50.0)) * sens
    near = draw(st.booleans())
    sep = draw(st.floats(0.0, 4.0)) * (g if near else sens)
    return a, a + sep, sens, eps


@settings(max_examples=300)
@given(value_pairs())
def test_value_steps_bound_the_exact_grid_loss(case):
    a, b, sens, eps = case
    g, _d, t = value_params(sens, eps)
    exact = grid_step_loss(a, b, g, int(t))  # max over every output of the pmf ratio
    steps = value_steps([a, b], sensitivity=sens)
    assert g <= _g_max(sens)
    assert Fraction(eps * steps.delta[0, 1]) >= exact
    assert Fraction(eps * steps.pair_scale(abs(b - a))) >= exact


# ---- location steps against the lattice mechanism's exact loss ----------------------------
def _lattice_loss(p, q, radius_m: float, eps: float) -> Fraction:
    """Exact loss over every output of the location release between true points p and q:
    ‖k − k'‖₁/t with k = lattice_index(·, g), (g, D, t) = lattice_params(r, ε_t)."""
    g, _d, t = lattice_params(radius_m, eps)
    k1, k2 = lattice_index(*p, g), lattice_index(*q, g)
    return Fraction(sum(abs(int(a) - int(b)) for a, b in zip(k1, k2, strict=True)), int(t))


def _former_location_delta(ca, cb, radius_m: float, cell_m: float) -> float:
    return float((haversine_m(*ca, *cb) + np.sqrt(2.0) * cell_m) / radius_m)


def test_location_lattice_rounding_counterexample():
    """Two points 0.85 mm apart (cell_m = 0) round to neighbouring lattice points: loss 1/t,
    ~100× the former bound ε_t·d/r; the new δ covers it."""
    r, eps = 200.0, 0.5
    a, b = (39.9, 116.3), (39.9, 116.3 + 1e-8)
    exact = _lattice_loss(a, b, r, eps)
    assert exact == Fraction(1, int(lattice_params(r, eps)[2]))  # one lattice step, 1/5549
    assert Fraction(eps * _former_location_delta(a, b, r, 0.0)) * 50 < exact
    steps = location_steps([a, b], radius_m=r, cell_m=0.0)
    assert Fraction(eps * steps.delta[0, 1]) >= exact
    assert Fraction(eps * steps.pair_scale(float(haversine_m(*a, *b)))) >= exact


def _cell_pairs(n: int, seed: int):
    """n random nearby pairs of cells (centres 10^-3.5·r to 2·r apart, anywhere up to ±70°),
    r from 3 m to 3 km, ε_t from 10⁻³ to 50, cells from 0 to r/256 (the small cells where the
    diagonal does not absorb the rounding), and a true point in each cell (half of them at a
    corner): (centre a, centre b, point a, point b, r, ε_t, cell side). The draws are made pair
    by pair (the same stream as drawing each pair whole), the points placed all at once."""
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(n):
        r = 10.0 ** rng.uniform(0.5, 3.5)
        eps = 10.0 ** rng.uniform(-3, np.log10(50))
        cell = float(rng.choice([0.0, r * 2.0**-12, r * 2.0**-10, r * 2.0**-8]))
        cell *= float(rng.choice([1.0, 0.7]))
        ca = (rng.uniform(-70, 70), rng.uniform(-180, 179))
        sep, ang = 10.0 ** rng.uniform(-3.5, 0.3) * r, rng.uniform(0, 2 * np.pi)
        offs = []
        for _c in range(2):
            corner = rng.random() < 0.5
            offs.append(rng.choice([-0.5, 0.5], 2) if corner else rng.uniform(-0.5, 0.5, 2))
        draws.append((r, eps, cell, *ca, sep, ang, *offs[0], *offs[1]))
    r, eps, cell, a_lat, a_lon, sep, ang, ea, na, eb, nb = np.array(draws).T
    b_lat, b_lon = offset_points(a_lat, a_lon, sep * np.cos(ang), sep * np.sin(ang))
    pa_lat, pa_lon = offset_points(a_lat, a_lon, ea * cell * 0.999, na * cell * 0.999)
    pb_lat, pb_lon = offset_points(b_lat, b_lon, eb * cell * 0.999, nb * cell * 0.999)
    for c_lat, c_lon, p_lat, p_lon in ((a_lat, a_lon, pa_lat, pa_lon),
                                       (b_lat, b_lon, pb_lat, pb_lon)):
        assert np.all(haversine_m(c_lat, c_lon, p_lat, p_lon) <= cell / np.sqrt(2.0))  # in disc
    for i in range(n):
        yield ((float(a_lat[i]), float(a_lon[i])), (float(b_lat[i]), float(b_lon[i])),
               (float(pa_lat[i]), float(pa_lon[i])), (float(pb_lat[i]), float(pb_lon[i])),
               float(r[i]), float(eps[i]), float(cell[i]))


def test_location_steps_cover_the_lattice_rounding():
    """3,000 random nearby cell pairs: the exact lattice loss of the two true points never
    exceeds ε_t·δ(a, b) (nor ε_t·pair_scale(d(c_a, c_b))); the former (d + √2·c)/r is below it
    for dozens of them (79 with this seed, up to 2.8×)."""
    former_below, worst, moved = 0, 0.0, 0
    for ca, cb, pa, pb, r, eps, cell in _cell_pairs(3000, 1):
        exact = _lattice_loss(pa, pb, r, eps)
        if exact == 0:
            continue
        moved += 1
        steps = location_steps([ca, cb], radius_m=r, cell_m=cell)
        assert Fraction(eps * steps.delta[0, 1]) >= exact, (ca, cb, pa, pb, r, eps, cell)
        sep = float(haversine_m(*ca, *cb))
        assert Fraction(eps * steps.pair_scale(sep)) >= exact
        former = Fraction(eps * _former_location_delta(ca, cb, r, cell))
        if former < exact:
            former_below += 1
            worst = max(worst, float(exact / former))
    assert moved > 2900
    assert former_below > 50 and worst > 2.5, (former_below, worst)  # 79 and 2.78×


@settings(max_examples=300)
@given(st.floats(0.0, 60.0), st.floats(0.0, 60.0), st.floats(0.0, 3.0), st.floats(0.0, 4.0))
def test_location_factor_is_the_ledger_factor_and_subadditive(x1, x2, log_r, cells):
    """f = ledger.distance_factor at d·(1 + 1e-12) + 1e-6 m, non-decreasing and subadditive, so
    δ(a, b) = f(d(c_a, c_b) + D_cell) obeys the triangle inequality (docs/temporal-loss.md §1)."""
    r = 10.0**log_r
    d1, d2 = x1 * r / 20.0, x2 * r / 20.0
    f1, f2 = float(location_factor(d1, r)), float(location_factor(d2, r))
    assert f1 == distance_factor(d1 * (1 + 1e-12) + 1e-6, radius_m=r)
    assert d1 / r <= f1 <= d1 / r + 3 * LATTICE_SLACK + 1e-5 / r
    assert float(location_factor(d1 + d2, r)) <= f1 + f2 + 1e-15
    lo, hi = sorted((d1, d2))
    assert float(location_factor(lo, r)) <= float(location_factor(hi, r))
    diag = np.sqrt(2.0) * cells * r / 4.0  # triangle inequality with the cell diagonal added
    assert float(location_factor(d1 + d2 + diag, r)) <= (float(location_factor(d1 + diag, r))
                                                         + float(location_factor(d2 + diag, r))
                                                         + 1e-15)


@pytest.mark.parametrize("cell_m", [100.0, 500.0, 1000.0, 5000.0])
@pytest.mark.parametrize("radius_m", [50.0, 200.0, 500.0, 2000.0])
def test_default_cells_change_negligibly(cell_m, radius_m):
    """For the default cells (100–5000 m) the new δ is the former (d + √2·c)/r plus at most
    3·LATTICE_SLACK ≈ 0.0017, and unchanged (up to the 10⁻⁶ m allowance) from 1.5·r on: δ_max
    is unchanged whenever the grid spans 1.5·r."""
    n = 6
    lat = 39.9 + np.arange(n) * cell_m / 111_195.0
    centres = np.column_stack([np.repeat(lat, n), np.tile(116.3 + np.arange(n) * cell_m
                                                          / 85_000.0, n)])
    steps = location_steps(centres, radius_m=radius_m, cell_m=cell_m)
    d = haversine_m(centres[:, None, 0], centres[:, None, 1], centres[None, :, 0],
                    centres[None, :, 1])
    former = (d + np.sqrt(2.0) * cell_m) / radius_m
    np.fill_diagonal(former, 0.0)
    diff = steps.delta - former
    assert diff.min() >= 0.0 and diff.max() <= 3 * LATTICE_SLACK + 1e-8
    far = former >= 1.5
    assert np.all(np.abs(diff[far]) <= 1e-9 * former[far] + 2e-6 / radius_m)
    if former.max() >= 1.5:
        assert steps.worst == pytest.approx(former.max(), rel=1e-9, abs=2e-6 / radius_m)


# ---- random cases -------------------------------------------------------------------------
@st.composite
def chains(draw, max_n=3):
    n = draw(st.integers(2, max_n))
    T = draw(st.integers(1, 6 if n <= 3 else 4))
    sparse = draw(st.booleans())
    rows = []
    for _ in range(2 * n):
        w = np.array(draw(st.lists(st.sampled_from([0.0, 1e-6, 0.05, 0.3, 1.0, 3.0]),
                                   min_size=n, max_size=n)))
        if sparse and draw(st.booleans()):
            w[draw(st.integers(0, n - 1))] = 0.0
        if w.sum() == 0:
            w[draw(st.integers(0, n - 1))] = 1.0
        rows.append(w / w.sum())
    P_f = np.array(rows[:n])
    P_b = np.array(rows[n:]) if draw(st.booleans()) else P_f
    eps = np.array(draw(st.lists(st.sampled_from([0.0, 0.05, 0.2, 0.5, 1.5]),
                                 min_size=T, max_size=T)))
    L = sorted(draw(st.sets(st.integers(0, T - 1), max_size=min(T, 3))))
    t = draw(st.integers(0, T - 1))
    return P_b, P_f, eps, L, t


def _check(P_b, P_f, eps, L, t, steps, exact_fn, sep=None, allowed=None):
    lm = landmark_temporal_loss(eps, L, P_b, P_f, steps=steps, separation=sep)
    S = sorted(set(L) | {t})
    exact = exact_fn(S, None)
    assert lm.composed[t] >= exact - TOL * (1 + exact), (lm.composed[t], exact)
    assert lm.composed[t] <= lm.cap + TOL
    single = exact_fn([t], None)
    assert lm.loss.tpl[t] >= single - TOL * (1 + single)
    assert lm.loss.bpl[t] <= lm.loss.cap + TOL and lm.loss.fpl[t] <= lm.loss.cap + TOL
    if sep is not None:
        ex_pair = exact_fn(S, allowed)
        assert lm.composed_pair[t] >= ex_pair - TOL * (1 + ex_pair)
        assert lm.composed_pair[t] <= lm.cap_pair[t] + TOL
        assert lm.loss.pair[t] >= exact_fn([t], allowed) - TOL
    return lm.composed[t], exact


@pytest.mark.slow
@settings(max_examples=60)
@given(chains(max_n=4))
def test_any_pair_relation(case):
    P_b, P_f, eps, L, t = case
    n = P_f.shape[0]
    delta = all_pairs(1.0, n)
    _check(P_b, P_f, eps, L, t, None,
           lambda S, allowed: case_exact(eps, S, P_b, P_f, delta, allowed=allowed))


@settings(max_examples=40)
@given(chains(max_n=3), st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 4.0]), min_size=3,
                                 max_size=3, unique=True), st.sampled_from([0.5, 1.0, 2.0]))
def test_laplace_values(case, values, sep):
    P_b, P_f, eps, L, t = case
    n = P_f.shape[0]
    v = np.array(values[:n])
    steps = value_steps(v, sensitivity=1.0)
    near = np.abs(v[:, None] - v[None, :]) <= sep
    for kind in ("laplace", "worst kernel"):
        lv = v if kind == "laplace" else None
        _check(P_b, P_f, eps, L, t, steps,
               lambda S, allowed, lv=lv: case_exact(eps, S, P_b, P_f, steps.delta,
                                                    laplace_values=lv, allowed=allowed),
               sep=sep, allowed=near)


@pytest.mark.slow
@settings(max_examples=30)
@given(chains(max_n=4), st.integers(0, 2**31 - 1), st.sampled_from([100.0, 200.0, 500.0]),
       st.sampled_from([0.0, 100.0, 300.0]))
def test_location_cells(case, seed, radius_m, cell_m):
    P_b, P_f, eps, L, t = case
    n = P_f.shape[0]
    rng = np.random.default_rng(seed)
    centres = np.column_stack([39.9 + rng.random(n) * 0.01, 116.3 + rng.random(n) * 0.01])
    steps = location_steps(centres, radius_m=radius_m, cell_m=cell_m)
    from lmdk_core.geo import haversine_m

    d = haversine_m(centres[:, None, 0], centres[:, None, 1], centres[None, :, 0],
                    centres[None, :, 1])
    sep = radius_m
    _check(P_b, P_f, eps * 0.1, L, t, steps,
           lambda S, allowed: case_exact(eps * 0.1, S, P_b, P_f, steps.delta, allowed=allowed),
           sep=sep, allowed=d <= sep)


@settings(max_examples=40)
@given(chains(max_n=3), st.sets(st.sampled_from([0.0, 0.4, 0.6, 1.5, 700.0, 1024.3, 2048.6]),
                                min_size=3, max_size=3),
       st.sampled_from([1.0, 3.0]), st.sampled_from([0.0, 1.0, 2.0]))
def test_grid_values(case, units, sens, sep):
    """The chain bounds under the integer grid mechanism, values within a few grid steps or Δ
    apart (units of g_max; budgets up to 1.5, where g shrinks)."""
    P_b, P_f, eps, L, t = case
    n = P_f.shape[0]
    v = np.array(sorted(units)[:n]) * _g_max(sens)
    steps = value_steps(v, sensitivity=sens)
    near = np.abs(v[:, None] - v[None, :]) <= sep
    _check(P_b, P_f, eps, L, t, steps,
           lambda S, allowed: case_exact(eps, S, P_b, P_f, None, grid_values=v,
                                         grid=_grid(sens), allowed=allowed),
           sep=sep, allowed=near)
