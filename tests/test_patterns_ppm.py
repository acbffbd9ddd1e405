"""Pattern-level PPMs: budgets, untouched events, exact and empirical privacy, adaptive budgets."""

from __future__ import annotations

import itertools
from decimal import Decimal, getcontext

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_core.errors import ParameterError
from lmdk_core.patterns import (
    EventStream,
    Pattern,
    adaptive_allocation,
    adaptive_ppm,
    adaptive_ppm_periods,
    event_rr,
    flip_threshold,
    region_events,
    release_with_allocation,
    type_budgets,
    uniform_allocation,
    uniform_ppm,
)
from lmdk_core.patterns.taxi import hotspot_regions, taxi_trajectories

getcontext().prec = 60
TYPES = ("A", "B", "C", "D")
NS = 1_000_000_000


def _replicated(n_users: int, n_ticks: int, events: list[tuple[int, str]]) -> EventStream:
    """n_users identical users, ticks 0..n_ticks-1 s, the same events (tick, type) each."""
    uid = np.repeat(np.arange(n_users), n_ticks)
    time = np.tile(np.arange(n_ticks, dtype=np.int64) * NS, n_users)
    et = np.array([u * n_ticks + t for u in range(n_users) for t, _ in events], dtype=np.int64)
    ty = np.array([TYPES.index(k) for _ in range(n_users) for _, k in events], dtype=np.int64)
    return EventStream.from_arrays(tick_uid=uid, tick_time=time, event_tick=et, event_type=ty,
                                   types=TYPES)


PRIV = Pattern(("A", "B"), 10, private=True, name="priv")
PUB = Pattern(("C", "B"), 10, name="pub")


def test_uniform_budgets_per_neighbour_reading_and_shared_types():
    p2 = Pattern(("A", "B"), 10, private=True, name="p2")
    p3 = Pattern(("A", "C", "D"), 10, private=True, name="p3")
    inst = type_budgets([p2, p3], uniform_allocation([p2, p3], epsilon=1.2), types=TYPES)
    assert inst == pytest.approx({"A": 0.4, "B": 0.6, "C": 0.4, "D": 0.4})  # A: min(0.6, 0.4)
    ev = type_budgets([p2, p3], uniform_allocation([p2, p3], epsilon=1.2, neighbour="event"),
                      types=TYPES)
    assert ev == pytest.approx({"A": 1.2, "B": 1.2, "C": 1.2, "D": 1.2})
    with pytest.raises(ParameterError, match="neighbour"):
        uniform_allocation([p2], epsilon=1, neighbour="user")
    with pytest.raises(ParameterError, match="private"):
        uniform_allocation([PUB], epsilon=1)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), 1e300])
def test_bad_epsilon_is_refused(bad):
    s = _replicated(1, 3, [(0, "A")])
    with pytest.raises(ParameterError):
        uniform_ppm(s, [PRIV], epsilon=bad, rng=0)


def test_budget_above_safe_limit_is_refused():
    s = _replicated(1, 3, [(0, "A")])
    with pytest.raises(ParameterError, match=r"RR_MAX_EPSILON = 2\^20"):
        uniform_ppm(s, [PRIV], epsilon=2.0**22, rng=0)  # 2^21 per event > 2^20


def test_allocation_over_budget_is_refused():
    s = _replicated(1, 3, [(0, "A")])
    with pytest.raises(ParameterError, match="exceeds epsilon"):
        release_with_allocation(s, [PRIV], {"priv": (0.7, 0.7)}, epsilon=1.0, rng=0)


@st.composite
def random_streams(draw):
    n = draw(st.integers(1, 40))
    uid = np.sort(np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))))
    time = np.arange(n, dtype=np.int64) * NS
    events = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, 3)), max_size=30))
    et = np.array([e[0] for e in events], dtype=np.int64)
    ty = np.array([e[1] for e in events], dtype=np.int64)
    lat = np.array([float(i) for i in range(len(events))])
    return EventStream.from_arrays(tick_uid=uid, tick_time=time, event_tick=et, event_type=ty,
                                   types=TYPES, lat=lat, lon=-lat)


@settings(max_examples=60)
@given(random_streams(), st.sampled_from([("A", "B"), ("B",), ("A", "C", "A")]),
       st.floats(0.1, 8), st.integers(0, 2**32))
def test_events_outside_private_patterns_pass_unchanged(stream, ptypes, eps, seed):
    pats = [Pattern(ptypes, 5, private=True), Pattern(("C", "D"), 5)]
    rel = uniform_ppm(stream, pats, epsilon=eps, rng=seed)
    codes = [stream.type_code(t) for t in ptypes]
    for s in (stream, rel.stream):
        assert s.tick_time is stream.tick_time or np.array_equal(s.tick_time, stream.tick_time)
    keep_t = ~np.isin(stream.etype, codes)
    keep_r = ~np.isin(rel.stream.etype, codes)
    for name in ("tick", "etype", "lat", "lon"):
        np.testing.assert_array_equal(getattr(stream, name)[keep_t],
                                      getattr(rel.stream, name)[keep_r])
    # every released protected event is real-and-kept or injected; suppressed ones are gone
    assert not rel.injected[keep_r].any()
    assert not rel.suppressed[keep_t].any()
    assert len(rel.stream) == len(stream) - rel.suppressed.sum() + rel.injected.sum()


def _exact_max_log_ratio(bits_a: dict, bits_b: dict, cell_eps: dict) -> Decimal:
    """Max over output sets of log Pr[M(S)=o]/Pr[M(S')=o], by enumerating every output."""
    cells = sorted(cell_eps)
    # the exact RR flips with probability 1/(1 + e^{ε₀}), ε₀ = threshold/2^40 (patterns.rr)
    qs = {c: 1 / (1 + (Decimal(int(flip_threshold(cell_eps[c]))) / Decimal(2**40)).exp())
          for c in cells}
    worst = Decimal(-1)
    for out in itertools.product((0, 1), repeat=len(cells)):
        pa = pb = Decimal(1)
        for c, o in zip(cells, out, strict=True):
            q = qs[c]
            pa *= (1 - q) if o == bits_a[c] else q
            pb *= (1 - q) if o == bits_b[c] else q
        worst = max(worst, (pa / pb).ln())
    return worst


@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
def test_exact_pattern_level_bound_by_enumeration(eps):
    """Every pattern-level neighbour pair (any subset of one instance of seq(A, B, A) removed),
    every output of 3 ticks x 2 protected types: log-ratio ≤ ε; under the event reading the
    whole instance costs 3ε (so the single-event budget really is weaker)."""
    pat = Pattern(("A", "B", "A"), 10, private=True, name="p")
    instance = [(0, "A"), (1, "B"), (2, "A")]
    for reading, bound in (("instance", eps), ("event", 3 * eps)):
        budgets = type_budgets([pat], uniform_allocation([pat], epsilon=eps, neighbour=reading),
                               types=("A", "B"))
        cell_eps = {(t, k): budgets[k] for t in range(3) for k in ("A", "B")}
        full = {c: 0 for c in cell_eps}
        for t, k in instance:
            full[(t, k)] = 1
        worst = Decimal(-1)
        for r in range(1, 4):
            for removed in itertools.combinations(instance, r):
                other = dict(full)
                for t, k in removed:
                    other[(t, k)] = 0
                worst = max(worst, _exact_max_log_ratio(full, other, cell_eps),
                            _exact_max_log_ratio(other, full, cell_eps))
        assert worst <= Decimal(bound)
        assert worst >= Decimal(bound) * Decimal("0.9999")  # tight: the whole instance removed


def _outcome_freqs(rel, n_users: int, n_ticks: int, cells: list[tuple[int, str]]) -> np.ndarray:
    s = rel.stream
    present = np.zeros((n_users, len(cells)), bool)
    for j, (t, k) in enumerate(cells):
        code = TYPES.index(k)
        sel = (s.etype == code) & (s.tick % n_ticks == t)
        present[s.tick[sel] // n_ticks, j] = True
    idx = present @ (1 << np.arange(len(cells)))
    return np.bincount(idx, minlength=2 ** len(cells))


def _audit(mech, eps: float, n_users: int = 60_000) -> tuple[float, float]:
    """Largest observed outcome ratio between neighbours and its 99.9 % lower bound."""
    n_ticks = 3
    cells = [(1, "A"), (2, "B")]
    s_in = _replicated(n_users, n_ticks, [(0, "C"), (1, "A"), (2, "B")])  # instance present
    s_out = _replicated(n_users, n_ticks, [(0, "C")])  # instance absent
    fa = _outcome_freqs(mech(s_in, 11), n_users, n_ticks, cells)
    fb = _outcome_freqs(mech(s_out, 12), n_users, n_ticks, cells)
    worst, lower = 0.0, 0.0
    for a, b in ((fa, fb), (fb, fa)):
        ok = (a > 0) & (b > 0)
        logr = np.log(a[ok] / b[ok])
        se = np.sqrt(1 / a[ok] + 1 / b[ok])
        i = int(np.argmax(logr))
        worst = max(worst, float(logr[i]))
        lower = max(lower, float(logr[i] - 3.3 * se[i]))
    return worst, lower


@pytest.mark.parametrize("eps", [0.5, 1.5])
def test_empirical_audit_pattern_level_neighbours(eps):
    """Uniform PPM: observed ratio ≤ e^ε up to sampling error; ε per event fails the audit."""
    def good(s, seed):
        return uniform_ppm(s, [PRIV, PUB], epsilon=eps, rng=seed)

    def broken(s, seed):  # ε per event although the whole instance must be protected
        return release_with_allocation(s, [PRIV, PUB], {"priv": (eps, eps)}, epsilon=eps,
                                       neighbour="event", rng=seed)

    worst, _ = _audit(good, eps)
    assert worst <= eps + 0.06  # sampling tolerance at 60,000 users per side
    _, lower = _audit(broken, eps)
    assert lower > eps  # significantly above e^ε: the broken mechanism is caught


def test_event_rr_touches_every_type():
    s = _replicated(200, 4, [(0, "C"), (1, "A"), (2, "D")])
    rel = event_rr(s, [PRIV, PUB], epsilon=0.5, rng=1)
    assert set(rel.type_epsilon) == set(TYPES)
    assert rel.type_epsilon["C"] == pytest.approx(0.25)
    codes = s.type_code("C")
    assert rel.suppressed[s.etype == codes].any()  # public-only types are perturbed too


@pytest.fixture(scope="module")
def taxi_periods():
    df = taxi_trajectories(60, days=2, rng=5)
    reg = hotspot_regions(rng=5)
    stream = region_events(df, reg).coarsen(300)
    day = np.datetime64("2008-02-03T00:00:00", "ns").astype(np.int64)
    return stream.time_slice(stop=day), stream.time_slice(start=day)


def test_adaptive_budgets_sum_to_epsilon_and_follow_public_use(taxi_periods):
    history, _ = taxi_periods
    priv = Pattern(("enter:H0", "enter:H1", "enter:H2"), 4 * 3600, private=True, name="priv")
    pub = Pattern(("enter:H1", "enter:H3"), 2 * 3600, name="pub")
    alloc = adaptive_allocation(history, [priv, pub], epsilon=3.0, alpha=0.5)
    b = np.array(alloc["priv"])
    assert b.sum() <= 3.0
    assert b.sum() == pytest.approx(3.0, rel=1e-12)
    assert np.all(b > 0)
    assert b[1] > 1.0  # enter:H1, the only private type the public pattern uses, gets more


def test_adaptive_depends_only_on_history(taxi_periods):
    history, current = taxi_periods
    priv = Pattern(("enter:H0", "enter:H1", "enter:H2"), 4 * 3600, private=True, name="priv")
    pub = Pattern(("enter:H1", "enter:H3"), 2 * 3600, name="pub")
    pats = [priv, pub]
    a = adaptive_ppm(current, pats, history=history, epsilon=3.0, rng=1).allocation
    other_current = current.with_events(current.tick[::2], current.etype[::2],
                                        current.lat[::2], current.lon[::2])
    b = adaptive_ppm(other_current, pats, history=history, epsilon=3.0, rng=2).allocation
    assert a == b
    thin_history = history.with_events(history.tick[:0], history.etype[:0], history.lat[:0],
                                       history.lon[:0])
    c = adaptive_ppm(current, pats, history=thin_history, epsilon=3.0, rng=1).allocation
    assert c != a  # a history without public matches leaves the uniform split
    with pytest.raises(ParameterError, match="disjoint"):
        adaptive_ppm(current, pats, history=current, epsilon=3.0, rng=1)


def test_adaptive_per_period_learns_from_the_previous_release_only(taxi_periods):
    _, current = taxi_periods
    priv = Pattern(("enter:H0", "enter:H1", "enter:H2"), 4 * 3600, private=True, name="priv")
    pub = Pattern(("enter:H1", "enter:H3"), 2 * 3600, name="pub")
    rels = adaptive_ppm_periods(current, [priv, pub], period_s=6 * 3600, epsilon=3.0, rng=5)
    assert len(rels) == 4  # one day in 6-hour periods
    assert rels[0].allocation["priv"] == pytest.approx((1.0, 1.0, 1.0))
    for rel in rels:
        b = np.array(rel.allocation["priv"])
        assert b.sum() <= 3.0 and b.sum() == pytest.approx(3.0)
    # period 2's budgets are a function of period 1's RELEASED stream alone
    again = adaptive_allocation(rels[0].stream, [priv, pub], epsilon=3.0)
    assert tuple(again["priv"]) == rels[1].allocation["priv"]


def test_a_real_release_draws_everything_from_chacha20(monkeypatch):
    """Issue 24 finding 10: with rng=None every random draw of a pattern-level release — the
    flips AND the locations of released protected events — comes from the release's ChaCha20
    RandomSource, never from a numpy Generator (not even an OS-seeded one)."""
    from lmdk_core.noise import RandomSource
    from lmdk_core.patterns import GridRegions, PlaceRegions

    def no_generator(self):
        raise AssertionError("a real release touched a numpy Generator")

    monkeypatch.setattr(RandomSource, "generator", property(no_generator))
    monkeypatch.setattr(np.random, "default_rng", no_generator)
    keys = []
    secure = RandomSource.secure.__func__

    def counted(cls):
        src = secure(cls)
        keys.append(src)
        return src

    monkeypatch.setattr(RandomSource, "secure", classmethod(counted))
    places = PlaceRegions(("A", "B"), np.array([40.0, 40.01]), np.array([116.0, 116.01]),
                          np.array([100.0, 150.0]))
    stream = _replicated(2, 50, [(3, "A"), (7, "B"), (20, "C")])
    rel = uniform_ppm(stream, [PRIV, PUB], epsilon=1.0, regions=places)
    assert len(keys) == 1 and keys[0].is_secure  # one ChaCha20 source for the whole release
    frame = rel.stream.to_frame()
    moved = frame[frame["type"].isin(["A", "B"])]
    assert len(moved) and moved[["lat", "lon"]].notna().all().all()
    grid = GridRegions(40.0, 116.0, 500.0, 3, 3)
    lat, lon = grid.sample(np.arange(9), rng=RandomSource.secure())
    assert np.isfinite(lat).all() and np.isfinite(lon).all()
    assert (grid.assign(lat, lon) == np.arange(9)).all()
    lat, lon = places.sample(np.array([0, 1, 1]))  # rng=None: a fresh ChaCha20 source
    assert (places.assign(lat, lon) == [0, 1, 1]).all()


def test_seeded_locations_are_reproducible_and_stay_in_their_region():
    from lmdk_core.noise import RandomSource
    from lmdk_core.patterns import PlaceRegions

    places = PlaceRegions(("A",), np.array([40.0]), np.array([116.0]), np.array([100.0]))
    a = places.sample(np.zeros(500, np.int64), rng=RandomSource.seeded(5))
    b = places.sample(np.zeros(500, np.int64), rng=5)
    np.testing.assert_array_equal(a[0], b[0])
    assert (places.assign(*a) == 0).all()
