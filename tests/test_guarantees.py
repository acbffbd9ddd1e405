"""The privacy guarantees, property-tested over random inputs (hypothesis).

* every scheme except event: G_t = Σ_{i∈L∪{t}} ε_i ≤ ε at every t (lmdk_core.accounting);
* bd/ba: every w-window sums to ≤ ε as well;
* event: violates G_t ≤ ε exactly where |L ∪ {t}| ≥ 2;
* outputs never depend on data a scheme must not read (Skip's landmarks; timestamps Adaptive,
  BD, BA approximate), given the seed.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from release_inputs import inputs

from lmdk_core import allocate, release_locations, release_values
from lmdk_core.accounting import landmark_guarantee, landmark_violations, window_sums

TOL = 1e-9
PRIVATE = ("user", "uniform", "skip", "adaptive", "reserve", "bd", "ba")


def _locations(x):
    """A trajectory whose steps follow x (metres-ish scale around Beijing)."""
    lat = 39.9 + np.clip(x, -1e5, 1e5) * 1e-5
    lon = 116.4 + np.clip(np.roll(x, 1), -1e5, 1e5) * 1e-5
    return lat, lon


def _releases(x, mask, epsilon, w, seed, scheme):
    params = {"w": w} if scheme in ("bd", "ba") else {}
    yield release_values(x, mask, epsilon=epsilon, scheme=scheme, sensitivity=1.0, rng=seed,
                         **params)
    yield release_locations(
        _locations(x), mask, epsilon=epsilon, scheme=scheme, radius_m=100.0, rng=seed, **params
    )


@settings(max_examples=150)
@given(inputs())
def test_landmark_guarantee_and_w_event_for_every_private_scheme(case):
    x, mask, epsilon, w, seed = case
    for scheme in PRIVATE:
        for r in _releases(x, mask, epsilon, w, seed, scheme):
            assert np.all(r.budget >= 0)
            g = landmark_guarantee(r.budget, mask)
            assert g.max() <= epsilon + TOL, (scheme, r.kind, g.max(), epsilon)
            if scheme in ("bd", "ba"):
                assert window_sums(r.budget, w).max() <= epsilon + TOL, (scheme, r.kind)
            if scheme in ("user", "uniform", "skip"):  # the closed forms are what is spent
                np.testing.assert_array_equal(r.budget, allocate(len(x), mask, epsilon=epsilon,
                                                              scheme=scheme))
                np.testing.assert_array_equal(r.published, r.budget > 0)
            if scheme == "adaptive":
                eps_r = epsilon / (mask.sum() + 1)
                assert np.all((r.budget == 0) | np.isclose(r.budget, eps_r, rtol=1e-12))
            # a fresh release is exactly where budget was spent on a publication
            assert np.all(r.budget[r.published] > 0)
            assert r.published[0] or scheme in ("skip", "reserve")


@given(inputs())
def test_event_level_violates_exactly_where_L_and_t_hold_two_events(case):
    x, mask, epsilon, w, seed = case
    k = int(mask.sum())
    # |L ∪ {t}| = k + 1 at a regular t, k at a landmark: the violation needs that size ≥ 2
    expected = np.flatnonzero(np.where(mask, k, k + 1) >= 2)
    for r in _releases(x, mask, epsilon, w, seed, "event"):
        np.testing.assert_array_equal(r.budget, np.full(len(x), epsilon))
        np.testing.assert_array_equal(landmark_violations(r.budget, mask, epsilon=epsilon),
                                      expected)
        np.testing.assert_allclose(
            landmark_guarantee(r.budget, mask), epsilon * np.where(mask, k, k + 1)
        )


@settings(max_examples=60)
@given(inputs(max_n=300), st.integers(0, 2**32 - 1))
def test_skip_never_reads_landmark_values(case, seed2):
    x, mask, epsilon, _, seed = case
    other = x.copy()
    other[mask] = np.random.default_rng(seed2).normal(0, 1e4, int(mask.sum()))
    a = release_values(x, mask, epsilon=epsilon, scheme="skip", rng=seed)
    b = release_values(other, mask, epsilon=epsilon, scheme="skip", rng=seed)
    np.testing.assert_array_equal(a.values, b.values)
    la, lb = (
        release_locations(_locations(v), mask, epsilon=epsilon, scheme="skip",
                          rng=seed) for v in (x, other)
    )
    # _locations(x) moves lon of t+1 with x_t: compare the timestamps whose point is unchanged
    same = ~(mask | np.roll(mask, 1))
    assert np.array_equal(la.lat[same], lb.lat[same], equal_nan=True)
    np.testing.assert_array_equal(la.budget, lb.budget)


@settings(max_examples=60)
@given(inputs(max_n=300), st.integers(0, 2**32 - 1), st.floats(0.0, 0.95))
def test_reserve_never_reads_approximated_timestamps(case, seed2, share):
    """Reserve's schedule is public: replacing every repeated timestamp's data changes nothing."""
    x, mask, epsilon, _, seed = case
    for share_ in (share, "auto"):
        a = release_values(x, mask, epsilon=epsilon, scheme="reserve", rng=seed,
                           landmark_share=share_)
        other = x.copy()
        other[~a.published] = np.random.default_rng(seed2).normal(0, 1e4, int((~a.published).sum()))
        b = release_values(other, mask, epsilon=epsilon, scheme="reserve", rng=seed,
                           landmark_share=share_)
        np.testing.assert_array_equal(a.values, b.values)
        np.testing.assert_array_equal(a.budget, b.budget)


@settings(max_examples=60)
@given(inputs(max_n=300), st.integers(0, 2**32 - 1))
def test_adaptive_never_reads_approximated_timestamps(case, seed2):
    x, mask, epsilon, _, seed = case
    a = release_values(x, mask, epsilon=epsilon, scheme="adaptive", rng=seed)
    skipped = ~a.published
    other = x.copy()
    other[skipped] = np.random.default_rng(seed2).normal(0, 1e4, int(skipped.sum()))
    b = release_values(other, mask, epsilon=epsilon, scheme="adaptive", rng=seed)
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.published, b.published)
    lat, lon = _locations(x)
    la = release_locations((lat, lon), mask, epsilon=epsilon, scheme="adaptive", rng=seed)
    lat2, lon2 = lat.copy(), lon.copy()
    lat2[~la.published] += 0.05
    lon2[~la.published] -= 0.05
    lb = release_locations((lat2, lon2), mask, epsilon=epsilon, scheme="adaptive", rng=seed)
    np.testing.assert_array_equal(la.published, lb.published)
    np.testing.assert_allclose(la.lat, lb.lat, rtol=0, atol=1e-9)  # projection origin may shift


@settings(max_examples=60)
@given(inputs(max_n=300))
def test_wevent_reads_approximated_timestamps_only_through_the_private_test(case):
    """At a timestamp BD/BA did not publish, x_t enters only the noisy test. Moving x_t onto the
    last release can only lower the test statistic, so the output must not change at all."""
    x, mask, epsilon, w, seed = case
    for scheme in ("bd", "ba"):
        a = release_values(x, mask, epsilon=epsilon, scheme=scheme, rng=seed, w=w)
        skipped = ~a.published
        other = np.where(skipped, a.values, x)
        b = release_values(other, mask, epsilon=epsilon, scheme=scheme, rng=seed, w=w)
        np.testing.assert_array_equal(a.values, b.values)
        np.testing.assert_array_equal(a.budget, b.budget)


@settings(max_examples=40)
@given(inputs(max_n=300), st.floats(-1e3, 1e3))
def test_value_releases_are_shift_equivariant(case, shift):
    """Noise is drawn independently of the data: shifting all values shifts the release.

    Fast noise: any shift (up to float rounding). Safe noise: shifts by whole multiples of the
    grids (any integer at Δ = 1, whose grids are 2^-10 or finer) shift the release exactly.
    """
    x, mask, epsilon, w, seed = case
    for scheme in ("uniform", "skip", "adaptive", "reserve", "bd", "ba"):
        params = {"w": w} if scheme in ("bd", "ba") else {}
        fast = {"rng": seed, "noise": "fast", **params}
        a = release_values(x, mask, epsilon=epsilon, scheme=scheme, **fast)
        b = release_values(x + shift, mask, epsilon=epsilon, scheme=scheme, **fast)
        np.testing.assert_array_equal(a.published, b.published)
        scale = 1 + np.abs(x).max() + abs(shift) + np.nanmax(np.abs(a.values), initial=0)
        np.testing.assert_allclose(b.values, a.values + shift, rtol=0, atol=1e-9 * scale)
        k = float(round(shift))
        a = release_values(x, mask, epsilon=epsilon, scheme=scheme, rng=seed, **params)
        b = release_values(x + k, mask, epsilon=epsilon, scheme=scheme, rng=seed, **params)
        np.testing.assert_array_equal(a.published, b.published)
        np.testing.assert_array_equal(b.values, a.values + k)
