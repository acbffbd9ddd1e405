"""ReleaseLedger: sequential composition of the releases a user took away, against brute force."""

from __future__ import annotations

import itertools
import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from lmdk_core import ParameterError, ReleaseLedger, landmark_guarantee, release_locations
from lmdk_core.geo import EARTH_RADIUS_M
from lmdk_core.ledger import LATTICE_SLACK, Cost, distance_factor
from lmdk_core.noise.exact import DIST_ERR_M, great_circle_m, lattice_index, lattice_params

POOL = pd.date_range("2024-05-01", periods=12, freq="min").as_unit("ns").to_numpy()


def fake_release(times, budget, landmarks, *, radius_m=None, costs=()):
    return SimpleNamespace(time=np.asarray(times), budget=np.asarray(budget, float),
                           landmarks=np.asarray(landmarks, bool),
                           params={} if radius_m is None else {"radius_m": radius_m},
                           costs=tuple(costs))


COST_POOL = (Cost("a:select", 0.1), Cost("b:select", 0.25), Cost("model:m", 0.3, protects=2),
             Cost("model:n", 0.05, protects=1), Cost("model:big", 0.2, protects=50))
"""Fixed costs releases may share (one key, one object: the same model behind two releases)."""


@st.composite
def releases(draw, extras: bool = False):
    """1-4 releases on a 12-minute pool; ``extras``: with radii and fixed costs too."""
    out = []
    for _ in range(draw(st.integers(1, 4))):
        idx = sorted(draw(st.sets(st.integers(0, POOL.size - 1), min_size=1, max_size=8)))
        budget = draw(st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]),
                               min_size=len(idx), max_size=len(idx)))
        lm = draw(st.lists(st.booleans(), min_size=len(idx), max_size=len(idx)))
        radius = draw(st.sampled_from([None, 100.0, 200.0, 2000.0])) if extras else None
        costs = (draw(st.lists(st.sampled_from(COST_POOL), max_size=3, unique=True))
                 if extras else ())
        out.append(fake_release(POOL[idx], budget, lm, radius_m=radius, costs=costs))
    return out


def brute_force_total(rels, distance_m: float | None = None) -> float:
    """max over every t in the pool of Σ_r f_r·Σ_{i ∈ (L ∪ {t}) ∩ T_r} ε^r_i + Σ_costs charge,
    by plain loops: f_r the distance factor of release r's radius at ``distance_m`` (1 without
    either), every cost key once, ε·⌈(|L| + 1)/k⌉ for a cost covering k changed points."""
    landmarks = {t for r in rels for t, m in zip(r.time, r.landmarks, strict=True) if m}
    fixed = {}
    for r in rels:
        for c in r.costs:
            fixed.setdefault(c.key, c)
    changed = len(landmarks) + 1
    charge = sum(c.epsilon if c.protects is None or changed <= c.protects
                 else c.epsilon * math.ceil(changed / c.protects) for c in fixed.values())

    def factor(r) -> float:
        radius = r.params.get("radius_m")
        return 1.0 if distance_m is None or radius is None else formula_factor(distance_m, radius)

    best = 0.0
    for t in POOL:
        protected = landmarks | {t}
        total = charge + sum(factor(r) * e for r in rels
                             for ti, e in zip(r.time, r.budget, strict=True) if ti in protected)
        best = max(best, total)
    return best


@settings(max_examples=60)
@given(releases())
def test_total_loss_equals_brute_force(rels):
    ledger = ReleaseLedger()
    for r in rels:
        ledger = ledger.add(r)
    assert ledger.total_loss() == pytest.approx(brute_force_total(rels), abs=1e-12)
    assert len(ledger) == len(rels)


@settings(max_examples=100)
@given(releases(extras=True), st.sampled_from([None, 0.0, 50.0, 200.0, 250.0, 2000.0, 1e4]))
def test_total_loss_with_radii_and_costs_equals_brute_force(rels, distance_m):
    ledger = ReleaseLedger()
    for r in rels:
        ledger = ledger.add(r, costs=r.costs)
    expected = brute_force_total(rels, distance_m)
    assert ledger.total_loss(distance_m=distance_m) == pytest.approx(expected, abs=1e-12)
    assert {c.key for c in ledger.costs()} == {c.key for r in rels for c in r.costs}


@settings(max_examples=30)
@given(releases())
def test_one_release_costs_its_max_landmark_guarantee(rels):
    r = rels[0]
    ledger = ReleaseLedger().add(r)
    assert ledger.total_loss() == pytest.approx(landmark_guarantee(r.budget, r.landmarks).max())


def test_two_downloads_of_independent_releases_add_up():
    traj = pd.DataFrame({"time": POOL, "lat": np.linspace(39.9, 39.91, 12), "lon": 116.3})
    mask = np.zeros(12, bool)
    mask[[2, 3]] = True
    a = release_locations(traj, mask, epsilon=1.0, scheme="uniform")
    b = release_locations(traj, mask, epsilon=1.0, scheme="skip")
    ledger = ReleaseLedger().add(a, key="a", label="uniform")
    assert ledger.total_loss() == pytest.approx(1.0)
    # the same draw again (e.g. its GeoJSON after its CSV) reveals nothing new: counted once
    assert ledger.add(a, key="a") is ledger and ledger.total_if_added(a, key="a") == 1.0
    assert not ledger.would_exceed(a, epsilon=1.0, key="a")
    # a second, independent draw adds up: uniform ε/3 everywhere + skip ε off the landmarks
    assert ledger.total_if_added(b, key="b") == pytest.approx(1.0 + 1.0)
    assert ledger.would_exceed(b, epsilon=1.0, key="b")
    assert not ledger.would_exceed(b, epsilon=2.0, key="b")
    # a release of a disjoint time range still pays for its landmarks at every t
    later = fake_release(POOL + np.timedelta64(1, "h"), np.full(12, 0.25), mask)
    assert ledger.total_if_added(later) == pytest.approx(1.0 + 2 * 0.25)


def test_places_marked_in_any_release_count_as_landmarks_for_all():
    a = fake_release(POOL[:3], [0.5, 0.5, 0.5], [False, False, False])
    b = fake_release(POOL[:3], [0.0, 0.5, 0.5], [True, False, False])
    # L = {t0}: t = t1 → a spends at t0 (landmark) and t1, b at t1 → 0.5 + 0.5 + 0.5
    assert ReleaseLedger().add(a).add(b).total_loss() == pytest.approx(1.5)


def test_empty_ledger_and_mixed_kinds():
    assert ReleaseLedger().total_loss() == 0.0
    with_time = fake_release(POOL[:2], [1.0, 1.0], [False, False])
    no_time = SimpleNamespace(time=None, budget=np.ones(2), landmarks=np.zeros(2, bool))
    ledger = ReleaseLedger().add(with_time)
    with pytest.raises(ParameterError, match="times"):
        ledger.add(no_time)
    with pytest.raises(ParameterError, match="length"):
        ReleaseLedger().add(fake_release(POOL[:2], [1.0], [False, False]))
    with pytest.raises(ParameterError, match="epsilon"):
        ledger.would_exceed(with_time, epsilon=0.0)


@given(st.lists(st.integers(-50, 50), max_size=60))
@settings(max_examples=50, deadline=None)
def test_sorted_unique_is_the_sorted_set(values):
    from lmdk_core.ledger import _sorted_unique

    got = _sorted_unique(np.asarray(values, dtype=np.int64))
    assert got.tolist() == sorted(set(values))


# ------------------------------------------------------------------ distance factor vs lattice


def _unit(lat: float, lon: float) -> np.ndarray:
    p, lm = math.radians(lat), math.radians(lon)
    return np.array([math.cos(p) * math.cos(lm), math.cos(p) * math.sin(lm), math.sin(p)])


def _latlon(v: np.ndarray) -> tuple[float, float]:
    return (math.degrees(math.atan2(v[2], math.hypot(v[0], v[1]))),
            math.degrees(math.atan2(v[1], v[0])))


def _pair(lat: float, lon: float, d: float, direction) -> tuple[float, float, float] | None:
    """The point d metres (along the great circle) from (lat, lon) towards ``direction``
    projected on the tangent plane, and the pair's TRUE great-circle distance as the library
    computes it (within DIST_ERR_M of the exact one); None if the direction is degenerate."""
    p = _unit(lat, lon)
    u = np.asarray(direction, dtype=float)
    u = u - (u @ p) * p
    if np.linalg.norm(u) < 1e-3:
        return None
    u /= np.linalg.norm(u)
    phi = d / EARTH_RADIUS_M
    lat2, lon2 = _latlon(p * math.cos(phi) + u * math.sin(phi))
    return lat2, lon2, float(great_circle_m(lat, lon, lat2, lon2))


def _shift(lat, lon, lat2, lon2, radius, eps) -> float:
    """The exact per-step loss ‖k − k'‖₁/t of the lattice mechanism between two true points."""
    g, _, t = lattice_params(radius, eps)
    k1 = np.array(lattice_index(lat, lon, g))
    k2 = np.array(lattice_index(lat2, lon2, g))
    return float(np.abs(k1 - k2).sum()) / float(t)


def formula_factor(d: float, r: float) -> float:
    """docs/composition.md's distance factor, written out again (not ledger.distance_factor)."""
    c = 1.0 / (math.sqrt(3.0) * 2**10 + 2.0)
    x = d / r
    if x <= 1.0:
        return min(1.0, x + 3 * c + 6e-6 / (math.sqrt(3.0) * r))
    return x + max(0.0, 3.0 - 2.0 * x) * c


LATS = st.one_of(st.floats(-90, 90), st.floats(89.99, 90), st.floats(-90, -89.99))
LONS = st.one_of(st.floats(-180, 180), st.floats(179.99, 180), st.floats(-180, -179.99))
SIGNS = st.tuples(*[st.sampled_from([-1.0, 1.0])] * 3)
X = st.one_of(st.just(0.0), st.floats(0, 1e-3), st.floats(0, 1), st.floats(0.999, 1.001),
              st.floats(1, 1.5), st.floats(0, 50))


def _on_diagonal_circle(lat: float, lon: float, signs) -> tuple[float, float] | None:
    """(lat, lon) moved onto the great circle orthogonal to the lattice diagonal ``signs``:
    there the diagonal is a tangent direction, the lattice's worst (‖u‖₁ = √3·‖u‖₂)."""
    s = np.asarray(signs, dtype=float) / math.sqrt(3.0)
    p = _unit(lat, lon)
    p = p - (p @ s) * s
    return None if np.linalg.norm(p) < 1e-3 else _latlon(p / np.linalg.norm(p))


@settings(max_examples=400)
@given(LATS, LONS, st.one_of(SIGNS, st.tuples(*[st.floats(-1, 1)] * 3)), st.booleans(), X,
       st.floats(0, 5), st.floats(-3, math.log10(50)))
def test_distance_factor_bounds_the_exact_lattice_shift(lat, lon, direction, diagonal, x, log_r,
                                                        log_eps):
    """Any two true points anywhere (poles, antimeridian), d from 0 to 50·r, r from 1 m to
    100 km, ε_t from 1e-3 to 50: the lattice mechanism's loss ‖k−k'‖₁/t ≤ ε_t·factor(d, r),
    d the pair's great-circle distance (``diagonal``: moving along a lattice diagonal)."""
    radius, eps = 10.0**log_r, 10.0**log_eps
    if diagonal:
        moved = _on_diagonal_circle(lat, lon, np.sign(np.asarray(direction) + 1e-300))
        assume(moved is not None)
        lat, lon = moved
        direction = np.sign(np.asarray(direction) + 1e-300)
    pair = _pair(lat, lon, x * radius, direction)
    assume(pair is not None)
    lat2, lon2, d = pair
    loss = _shift(lat, lon, lat2, lon2, radius, eps)
    bound = eps * distance_factor(d + DIST_ERR_M, radius_m=radius)
    assert loss <= bound * (1 + 1e-12), (loss, bound, d / radius)
    assert distance_factor(d, radius_m=radius) == formula_factor(d, radius)


def _diagonal_pairs(n: int, seed: int, metres):
    """n pairs at random places moving along a lattice diagonal (the worst direction) by
    ``metres(radius, g)``: (lat, lon, lat2, lon2, d, radius, ε_t)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        radius, eps = 10.0 ** rng.uniform(0, 3), 10.0 ** rng.uniform(-3, math.log10(50))
        signs = rng.choice([-1.0, 1.0], 3)
        start = _on_diagonal_circle(rng.uniform(-90, 90), rng.uniform(-180, 180), signs)
        if start is None:
            continue
        g = lattice_params(radius, eps)[0]
        pair = _pair(*start, metres(rng, radius, g), signs)
        if pair is not None:
            out.append((*start, *pair, radius, eps))
    return out


def test_distance_factor_is_nearly_tight_and_a_smaller_factor_fails():
    """Diagonal pairs reach ≥ 95 % of the bound for d ≥ r, so the test above can fail: a factor
    of 0.9·d/r is exceeded, and so is d/r alone for points closer than one lattice step."""
    ratios, too_small = [], 0
    pairs = _diagonal_pairs(300, 3, lambda rng, r, g: rng.uniform(1.0, 50.0) * r)
    for lat, lon, lat2, lon2, d, radius, eps in pairs:
        loss = _shift(lat, lon, lat2, lon2, radius, eps)
        ratios.append(loss / (eps * distance_factor(d + DIST_ERR_M, radius_m=radius)))
        too_small += loss > eps * 0.9 * d / radius
    assert max(ratios) <= 1.0 + 1e-12 and min(ratios) >= 0.95
    assert too_small == len(pairs)  # every diagonal pair breaks the wrong factor 0.9·d/r
    # the rounding term 3c: points 0.6 lattice steps apart along the diagonal (√3·d/g = 1.8)
    # usually straddle the rounding boundary on two or three axes (‖k − k'‖₁ ≥ 2 > 1.8): more
    # than ε_t·d/r allows, within the factor
    straddles = 0
    pairs = _diagonal_pairs(300, 4, lambda rng, r, g: 0.6 * math.sqrt(3.0) * g)
    for lat, lon, lat2, lon2, d, radius, eps in pairs:
        loss = _shift(lat, lon, lat2, lon2, radius, eps)
        assert loss <= eps * distance_factor(d + DIST_ERR_M, radius_m=radius) * (1 + 1e-12)
        straddles += loss > eps * d / radius
    assert straddles >= 150


def test_distance_factor_shape():
    c = LATTICE_SLACK
    assert c == pytest.approx(1 / (math.sqrt(3) * 1024 + 2))
    assert distance_factor(200.0, radius_m=200.0) == 1.0  # the mechanism's guarantee at d = r
    at_0 = 3 * c + 6e-6 / (math.sqrt(3) * 200)
    assert distance_factor(0.0, radius_m=200.0) == pytest.approx(at_0)
    assert distance_factor(2000.0, radius_m=200.0) == 10.0  # x ≥ 1.5: exactly d/r
    assert distance_factor(250.0, radius_m=200.0) == pytest.approx(1.25 + 0.5 * c)
    # non-decreasing in d (so a bound at d covers every pair closer than d)
    ds = np.sort(np.concatenate([np.linspace(0, 3000, 3001), [199.999, 200.001, 300.0001]]))
    vals = [distance_factor(d, radius_m=200.0) for d in ds]
    assert all(b >= a for a, b in itertools.pairwise(vals))


# ------------------------------------------------------------------ fixed costs and radii


def test_a_cost_key_counts_once_and_each_release_pays_its_selection():
    a = fake_release(POOL[:4], [0.5, 0.0, 0.5, 0.5], [False, True, False, False])
    b = fake_release(POOL[:4], [0.25] * 4, [False] * 4)
    shared = Cost("model:m", 0.3)
    one = ReleaseLedger().add(a, key="a", costs=(shared,)).add(b, key="b", costs=(shared,))
    # at t0: a spends 0.5 (+0 at the landmark t1), b 0.25 + 0.25; the shared cost once
    assert one.total_loss() == pytest.approx(0.5 + 0.25 * 2 + 0.3)
    two = ReleaseLedger().add(a, key="a", costs=(shared,)).add(
        b, key="b", costs=(Cost("model:other", 0.3),))
    assert two.total_loss() == pytest.approx(one.total_loss() + 0.3)
    # ε_sel from a release's params: one selection per release (keyed by the release)
    sel_a = SimpleNamespace(**{**vars(a), "params": {"epsilon_select": 0.1}})
    sel_b = SimpleNamespace(**{**vars(b), "params": {"epsilon_select": 0.1}})
    ledger = ReleaseLedger().add(sel_a, key="a").add(sel_b, key="b")
    assert ledger.total_loss() == pytest.approx(0.5 + 0.25 * 2 + 0.1 + 0.1)
    assert ledger.add(sel_a, key="a") is ledger  # the same draw again: nothing more
    assert [c.epsilon for c in ledger.costs()] == [0.1, 0.1]


def _dp_model(traj, protected_events, seed=1):
    from lmdk_core.correlation import dp_grid_model

    return dp_grid_model(traj, epsilon_model=0.2, protected_events=protected_events,
                         centre=(39.99, 116.34), extent_m=4000.0, cell_m=1000.0,
                         radius_m=200.0, rng=seed)


def _small_trace(n=30, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "time": pd.date_range("2024-05-01", periods=n, freq="min"),
        "lat": 39.99 + np.cumsum(rng.normal(0, 2e-4, n)),
        "lon": 116.34 + np.cumsum(rng.normal(0, 2e-4, n)),
    })


def test_one_dp_model_behind_two_releases_is_paid_once_with_group_privacy():
    from lmdk_core import release_with_budget
    from lmdk_core.correlation import allocate_for_model

    traj = _small_trace()
    mask = np.zeros(len(traj), bool)
    mask[[3, 4, 10, 11, 20]] = True  # |L| + 1 = 6 changed points
    for protects, factor in ((6, 1), (10, 1), (2, 3), (4, 2), (1, 6)):
        model = _dp_model(traj, protects)
        alloc = allocate_for_model(0.5, model, T=len(traj))
        r1, r2 = (release_with_budget(traj, mask, budget=alloc, radius_m=200.0, rng=s,
                                      noise="fast") for s in (1, 2))
        assert r1.params["model_key"] == model.key and r1.params["model_protects"] == protects
        plain = ReleaseLedger()
        for k, r in (("1", r1), ("2", r2)):
            plain = plain.add(fake_release(r.time, r.budget, r.landmarks, radius_m=200.0), key=k)
        ledger = ReleaseLedger().add(r1, key="1").add(r2, key="2")
        assert ledger.total_loss() == pytest.approx(plain.total_loss() + factor * 0.2)
        assert len(ledger.costs()) == 1
        # a second model (another draw, another key) is paid again
        other = release_with_budget(traj, mask, budget=allocate_for_model(
            0.5, _dp_model(traj, protects, seed=2), T=len(traj)), radius_m=200.0, rng=3,
            noise="fast")
        assert ledger.add(other, key="3").total_loss() == pytest.approx(
            plain.add(fake_release(other.time, other.budget, other.landmarks, radius_m=200.0),
                      key="3").total_loss() + 2 * factor * 0.2)


def test_cost_charge_is_group_privacy():
    assert Cost("s", 0.1).charge(10_000) == 0.1  # ε_sel: any number of changed points
    c = Cost("m", 0.2, protects=3)
    assert [c.charge(n) for n in (1, 3, 4, 6, 7)] == pytest.approx([0.2, 0.2, 0.4, 0.4, 0.6])


def test_dummy_landmarks_are_composed_over_the_real_ones(sample):
    """Issue 23's 856: two Skip releases (ε_scheme 0.9) each with its own dummy draw (ε_sel
    0.1) on alice's trace with Home and Clinic. Composed over the real landmarks, they lose
    0.9 + 0.9 + 0.1 + 0.1 = 2.0 at a moment neither made a dummy; the old ledger took every
    dummy of one draw as a landmark of the other, whose Skip spends 0.9 there: tens (greedy: its
    draws are nested and differ in a few dozen moments) to hundreds (Bernoulli)."""
    import lmdk_core as lm
    from lmdk_core.dummies import hide_landmarks

    traj = lm.select_user(sample, "alice")
    places = [lm.Place("Home", 39.9925, 116.3395, 100), lm.Place("Clinic", 39.9820, 116.3564, 100)]
    real = lm.landmark_mask(traj, places)
    assert real.sum() == 7046
    for generator in ("greedy", "bernoulli"):
        new, old = ReleaseLedger(), ReleaseLedger()
        dummies = []
        for seed in (1, 2):
            hidden = hide_landmarks(real, epsilon_select=0.1, generator=generator, rng=seed)
            dummies.append(hidden.mask & ~real)
            rel = release_locations(traj, hidden.mask, epsilon=0.9, scheme="skip", rng=seed,
                                    noise="fast")
            sel = (Cost(f"{seed}:select", 0.1),)
            new = new.add(rel, key=str(seed), landmarks=real, costs=sel)
            old = old.add(rel, key=str(seed), costs=sel)  # the dummy masks as landmarks
        assert (dummies[0] != dummies[1]).any()
        assert 1.9 <= new.total_loss() <= 2.0 + 1e-9
        assert old.total_loss() > 10 * new.total_loss()


def test_releases_with_different_radii_compose_at_a_distance():
    traj = pd.DataFrame({"time": POOL, "lat": np.linspace(39.9, 39.91, 12), "lon": 116.3})
    mask = np.zeros(12, bool)
    mask[[2, 3]] = True
    near = release_locations(traj, mask, epsilon=1.0, scheme="skip", radius_m=200.0, rng=1,
                             noise="fast")
    far = release_locations(traj, mask, epsilon=1.0, scheme="skip", radius_m=2000.0, rng=2,
                            noise="fast")
    ledger = ReleaseLedger().add(near, key="near").add(far, key="far")
    assert ledger.total_loss() == pytest.approx(2.0)  # each at its own radius: "adds up to 2"
    at_200 = ledger.total_loss(distance_m=200.0)
    assert at_200 == pytest.approx(1.0 + distance_factor(200.0, radius_m=2000.0))
    assert 1.10 <= at_200 <= 1.11
    assert ledger.total_loss(distance_m=2000.0) == pytest.approx(11.0)  # 10 + 1, not 2
    fakes = [fake_release(r.time, r.budget, r.landmarks, radius_m=r.params["radius_m"])
             for r in (near, far)]
    for d in (0.0, 100.0, 200.0, 500.0, 2000.0, 5000.0):
        assert ledger.total_loss(distance_m=d) == pytest.approx(brute_force_total(fakes, d))
