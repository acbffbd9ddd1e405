"""The scheme parameter ``fill`` (lmdk_core.schemes.fill; proof in docs/landmark-reserve.md §7).

* the delayed fills ("interpolate", "halfway") change no budget: ε_t, the fresh flags, the
  achieved ε'_t and hence every G_t are those of ``fill="repeat"`` (hypothesis, Skip and
  Reserve, values and locations), and G_t ≤ ε in exact rational arithmetic;
* the filled values read only the fresh releases and the public times: changing the true data
  at every non-fresh moment changes nothing (same seed); a deliberately broken fill that reads
  the true point there fails that check;
* exact interpolation on hand-computed cases (uneven times, rows, the antimeridian), edges
  (before the first and after the last fresh release, no fresh release, all fresh); "halfway"
  is never worse at a moment than the mean of the repeat's and the line's errors;
* the smoother treats filled rows as it treats repeats (same smoothed output), the public files
  keep the same rows, bad values raise ParameterError.
"""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from release_inputs import inputs

import lmdk_core.schemes as schemes_pkg
from lmdk_core import release_locations, release_values, smooth_release
from lmdk_core.errors import ParameterError
from lmdk_core.export import released_rows
from lmdk_core.schemes import fill as fl
from lmdk_core.schemes._space import forward_fill

NAN = np.nan
DELAYED = ("interpolate", "halfway")


def _trace(x, seconds):
    c = np.clip(x, -1e4, 1e4) * 1e-5
    return pd.DataFrame({"time": pd.Timestamp("2024-03-01", tz="UTC")
                         + pd.to_timedelta(seconds, unit="s"),
                         "lat": 39.9 + c, "lon": 116.4 - 0.7 * c})  # row t reads x_t only


def _release(kind, data, mask, epsilon, scheme, seed, fill, **params):
    if kind == "values":
        return release_values(data, mask, epsilon=epsilon, scheme=scheme, sensitivity=1.0,
                              rng=seed, noise="fast", fill=fill, **params)
    return release_locations(data, mask, epsilon=epsilon, scheme=scheme, radius_m=100.0,
                             rng=seed, noise="fast", fill=fill, **params)


def _cols(rel):
    return (np.asarray(rel.values),) if rel.kind == "values" else (np.asarray(rel.lat),
                                                                   np.asarray(rel.lon))


def _exact_max_g(budget, mask) -> Fraction:
    lm = sum((Fraction(float(e)) for e in budget[mask]), Fraction(0))
    return lm + max((Fraction(float(e)) for e in budget[~mask]), default=Fraction(0))


@st.composite
def cases(draw):
    x, mask, epsilon, _, seed = draw(inputs(max_n=80))
    scheme = draw(st.sampled_from(["skip", "reserve"]))
    params = {} if scheme == "skip" else {
        "landmark_share": draw(st.sampled_from(["auto", 0.0, 0.3, 0.8])),
        "speed": draw(st.sampled_from([0.1, 50.0]))}
    steps = draw(st.sampled_from(["even", "uneven"]))
    rng = np.random.default_rng(seed)
    seconds = np.cumsum(rng.integers(1, 600, x.size) if steps == "uneven" else
                        np.full(x.size, 30)) - (30 if steps == "even" else 0)
    fill = draw(st.sampled_from(DELAYED))
    return x, mask, epsilon, seed, scheme, params, seconds, fill


@settings(max_examples=40, deadline=None)
@given(cases())
def test_interpolate_changes_no_budget_and_keeps_every_fresh_release(case):
    x, mask, epsilon, seed, scheme, params, seconds, fill = case
    for kind, data in (("values", x), ("locations", _trace(x, seconds))):
        rep = _release(kind, data, mask, epsilon, scheme, seed, "repeat", **params)
        itp = _release(kind, data, mask, epsilon, scheme, seed, fill, **params)
        np.testing.assert_array_equal(itp.budget, rep.budget)
        np.testing.assert_array_equal(itp.published, rep.published)
        assert itp.params["achieved_epsilon"] == rep.params["achieved_epsilon"]
        assert _exact_max_g(np.asarray(itp.budget), mask) <= Fraction(epsilon)
        pub = np.asarray(itp.published)
        for a, b in zip(_cols(itp), _cols(rep), strict=True):
            np.testing.assert_array_equal(a[pub], b[pub])  # fresh releases untouched
            np.testing.assert_array_equal(np.isnan(a), np.isnan(b))  # same rows with output
        assert itp.params["fill"] == fill and rep.params["fill"] == "repeat"


def _ignores_nonfresh(kind, x, mask, seed, seconds, rng, fill="interpolate") -> bool:
    """True when the filled Skip release is unchanged (same seed) after the true data at every
    non-fresh moment is replaced by far-away values."""
    rel = _release(kind, x if kind == "values" else _trace(x, seconds), mask, 1.0, "skip",
                   seed, fill)
    y = x.copy()
    pub = np.asarray(rel.published)
    y[~pub] = rng.uniform(-1e4, 1e4, int((~pub).sum()))
    other = _release(kind, y if kind == "values" else _trace(y, seconds), mask, 1.0, "skip",
                     seed, fill)
    return all(np.array_equal(a, b, equal_nan=True)
               for a, b in zip(_cols(rel), _cols(other), strict=True))


@settings(max_examples=30, deadline=None)
@given(cases())
def test_filled_values_read_only_the_fresh_releases_and_the_times(case):
    x, mask, _, seed, _, _, seconds, fill = case
    rng = np.random.default_rng(seed)
    for kind in ("values", "locations"):
        assert _ignores_nonfresh(kind, x, mask, seed, seconds, rng, fill)


def test_a_fill_that_reads_the_true_point_is_caught(monkeypatch):
    """The check above fails for a broken fill that pulls each filled point towards the truth."""
    x = np.cumsum(np.random.default_rng(1).normal(0, 5, 60))
    mask = np.zeros(60, bool)
    mask[[10, 11, 12, 30, 40]] = True
    seconds = np.arange(60) * 30.0
    rng = np.random.default_rng(2)
    assert _ignores_nonfresh("values", x, mask, 7, seconds, rng)

    real = fl.apply_fill

    def broken(cols, published, space, fill):
        out = real(cols, published, space, fill)
        return tuple(np.where(published, o, 0.5 * (o + t))
                     for o, t in zip(out, space.columns, strict=True))

    monkeypatch.setattr(schemes_pkg, "apply_fill", broken)
    assert not _ignores_nonfresh("values", x, mask, 7, seconds, rng)
    assert not _ignores_nonfresh("locations", x, mask, 7, seconds, rng)


# ----------------------------------------------------------------------------- exact cases

def test_exact_interpolation_by_hand():
    pub = np.array([False, True, False, False, True, False, True, False])
    v = np.array([9.0, 1.0, 9.0, 9.0, 7.0, 9.0, 3.0, 9.0])  # 9: never read (not fresh)
    tau = np.array([0.0, 10.0, 20.0, 50.0, 70.0, 80.0, 80.0, 100.0])
    (out,) = fl.interpolate_fill((v,), pub, tau)
    # t=2: 1 + (20−10)/(70−10)·(7−1) = 2; t=3: 1 + 40/60·6 = 5; t=5: equal times 80 − 70 of
    # 80 − 70 → 7 + 1·(3 − 7) = 3; t=7 after the last fresh: repeat 3; t=0 before: NaN
    np.testing.assert_allclose(out, [NAN, 1.0, 2.0, 5.0, 7.0, 3.0, 3.0, 3.0])
    # rows: each row its own fresh flags, one time axis
    rows = np.vstack([v, v + 1])
    pubs = np.vstack([pub, [True] * 8])
    (both,) = fl.interpolate_fill((rows,), pubs, tau)
    np.testing.assert_allclose(both[0], out)
    np.testing.assert_array_equal(both[1], v + 1)
    # halfway: λ = 1/2 of the same shares: 1 + 3·1/6 = 1.5, 1 + 3·4/6 = 3, 7 + ½·(3 − 7) = 5
    (half,) = fl.interpolate_fill((v,), pub, tau, weight=0.5)
    np.testing.assert_allclose(half, [NAN, 1.0, 1.5, 3.0, 7.0, 5.0, 3.0, 3.0])


@settings(max_examples=30, deadline=None)
@given(cases())
def test_halfway_is_never_worse_than_the_mean_of_repeat_and_line(case):
    """At every moment |x − halfway| ≤ (|x − repeat| + |x − line|)/2 (values, same draw)."""
    x, mask, epsilon, seed, scheme, params, _, _ = case
    err = {f: np.abs(np.asarray(_release("values", x, mask, epsilon, scheme, seed, f,
                                         **params).values) - x) for f in fl.FILLS}
    ok = np.isfinite(err["repeat"])
    bound = (err["repeat"] + err["interpolate"]) / 2
    assert np.all(err["halfway"][ok] <= bound[ok] * (1 + 1e-12) + 1e-9)


def test_longitude_goes_the_short_way_round():
    pub = np.array([True, False, True])
    lat = np.array([10.0, 0.0, 20.0])
    lon = np.array([179.0, 0.0, -177.0])
    la, lo = fl.interpolate_fill((lat, lon), pub, np.array([0.0, 3.0, 4.0]), longitude=True)
    assert la[1] == pytest.approx(17.5)
    assert lo[1] == pytest.approx(-178.0)  # 179 + 3/4·4 = 182 → −178, not 179 − 3/4·356 = −88
    _, lo2 = fl.interpolate_fill((lat, lon), pub, np.array([0.0, 1.0, 4.0]), longitude=True)
    assert abs(lo2[1]) == pytest.approx(180.0)


@pytest.mark.parametrize("pub", [[], [False], [True], [False, False, False], [True, True, True],
                                 [False, True], [True, False, False]])
def test_edges_match_the_repeat_where_there_is_nothing_to_interpolate(pub):
    pub = np.array(pub, dtype=bool)
    v = np.arange(pub.size, dtype=float) * 3.0 + 1.0
    (out,) = fl.interpolate_fill((v,), pub, np.arange(pub.size, dtype=float))
    (rep,) = forward_fill((v,), pub)
    np.testing.assert_array_equal(out, rep)


def test_release_matches_the_hand_formula_on_its_own_fresh_values():
    x = np.array([0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0])
    mask = np.array([True, False, True, True, False, True, False])
    seconds = np.array([0.0, 30.0, 60.0, 150.0, 180.0, 190.0, 220.0])
    rep = _release("locations", _trace(x, seconds), mask, 1.0, "skip", 5, "repeat")
    itp = _release("locations", _trace(x, seconds), mask, 1.0, "skip", 5, "interpolate")
    for r, i in zip(_cols(rep), _cols(itp), strict=True):
        assert np.isnan(i[0])                                  # before the first fresh
        assert i[2] == pytest.approx(r[1] + (60 - 30) / (180 - 30) * (r[4] - r[1]), abs=1e-12)
        assert i[3] == pytest.approx(r[1] + (150 - 30) / (180 - 30) * (r[4] - r[1]), abs=1e-12)
        assert i[5] == pytest.approx(r[4] + (190 - 180) / (220 - 180) * (r[6] - r[4]), abs=1e-12)
        assert i[6] == r[6] and i[1] == r[1] and i[4] == r[4]


# ----------------------------------------------------------------------------- consumers

@pytest.mark.parametrize("fill", DELAYED)
def test_the_smoother_reads_filled_rows_as_it_reads_repeats(fill):
    rng = np.random.default_rng(3)
    n = 400
    x = np.cumsum(rng.normal(0, 30, n))
    mask = np.zeros(n, bool)
    mask[rng.choice(n, 120, replace=False)] = True
    mask[50:90] = True
    data = _trace(x, np.arange(n) * 30.0)
    rep = _release("locations", data, mask, 1.0, "skip", 11, "repeat")
    itp = _release("locations", data, mask, 1.0, "skip", 11, fill)
    tau = fl.time_axis(itp.time, n)
    found = fl.interpolated_rows(np.column_stack(_cols(itp)), tau, fill=fill, longitude=True)
    pub = np.asarray(itp.published)
    inside = ~pub & (np.cumsum(pub) > 0) & (np.cumsum(pub[::-1])[::-1] > 0)
    np.testing.assert_array_equal(found, inside)  # exactly the filled rows between fresh ones
    a, b = smooth_release(rep), smooth_release(itp)
    np.testing.assert_allclose(a.lat, b.lat, rtol=0, atol=1e-9)
    np.testing.assert_allclose(a.lon, b.lon, rtol=0, atol=1e-9)


def test_public_files_keep_the_same_rows():
    rng = np.random.default_rng(4)
    mask = rng.random(60) < 0.4
    mask[:3] = True
    data = _trace(np.cumsum(rng.normal(0, 9, 60)), np.arange(60) * 30.0)
    rows = [released_rows(_release("locations", data, mask, 1.0, s, 3, f)).tolist()
            for s in ("skip", "reserve") for f in fl.FILLS]
    assert all(r == rows[0] for r in rows)


@pytest.mark.parametrize("bad", ["linear", "", None, 1, True])
def test_bad_fill_raises(bad):
    with pytest.raises(ParameterError, match="fill must be one of"):
        release_values(np.arange(5.0), [1], epsilon=1.0, scheme="skip", fill=bad)


def test_fill_is_a_parameter_of_skip_and_reserve_only():
    with pytest.raises(ParameterError, match="unknown parameter"):
        release_values(np.arange(5.0), [1], epsilon=1.0, scheme="uniform", fill="interpolate")


def test_the_evaluation_fills_its_batched_draws_as_the_release_does():
    """bench/evaluation.py fills its batched rows with the library's fill; one row equals the
    release with that fill and the same seed (so its fill rows measure the real option)."""
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parents[1] / "bench"
    sys.path.insert(0, str(bench))
    try:
        import evaluation as ev
    finally:
        sys.path.remove(str(bench))
    rng = np.random.default_rng(6)
    n = 50
    mask = rng.random(n) < 0.4
    data = _trace(np.cumsum(rng.normal(0, 9, n)), np.cumsum(rng.integers(1, 300, n)))
    series = ev.Series("locations", (data["lat"].to_numpy(), data["lon"].to_numpy()),
                       data["time"], 100.0, data)
    for fill in DELAYED:
        rep = _release("locations", data, mask, 1.0, "skip", 9, "repeat")
        itp = _release("locations", data, mask, 1.0, "skip", 9, fill)
        got = ev.filled(series, [c[None, :] for c in _cols(rep)],
                        np.asarray(rep.published)[None, :], fill)
        for g, want in zip(got, _cols(itp), strict=True):
            np.testing.assert_array_equal(g[0], want)
