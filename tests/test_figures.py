"""Plotly figures: titles, axis titles with units, the expected traces with the right data, the
G_t > ε region present exactly when landmark privacy is violated, and display decimation."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from lmdk_core import Place, allocate, release_locations
from lmdk_core.errors import ParameterError
from lmdk_core.figures import (
    OKABE_ITO,
    PALETTE,
    allocation_figure,
    comparison_figure,
    display_index,
    error_figure,
    loss_figure,
    trajectory_figure,
)

T = 60
LANDMARKS = np.zeros(T, dtype=bool)
LANDMARKS[[3, 4, 5, 20, 41]] = True
EPSILON = 1.0


def brute_guarantee(eps, mask):
    """G_t = Σ_{i ∈ L ∪ {t}} ε_i by an explicit set per timestamp."""
    L = set(np.flatnonzero(mask).tolist())
    return np.array([sum(eps[i] for i in L | {t}) for t in range(len(eps))])


def trace(fig, prefix):
    found = [tr for tr in fig.data if tr.name and tr.name.startswith(prefix)]
    assert len(found) == 1, [tr.name for tr in fig.data]
    return found[0]


def names(fig):
    return [tr.name for tr in fig.data]


def check_common(fig, uirevision):
    assert fig.layout.title.text
    assert fig.layout.template.layout.paper_bgcolor == "white"  # plotly_white
    assert fig.layout.uirevision == uirevision
    assert fig.layout.height and 300 <= fig.layout.height <= 800
    assert fig.layout.showlegend is not False
    for tr in fig.data:
        assert tr.name, "every trace is named in the legend"
        assert tr.hovertemplate, f"trace {tr.name} has hover text"
    fig.to_json()  # serialisable (what Streamlit sends)


def trace_colours(fig):
    out = set()
    for tr in fig.data:
        if getattr(tr, "line", None) is not None and tr.line.color and tr.mode != "markers":
            out.add(tr.line.color)
        if getattr(tr, "marker", None) is not None and tr.marker.color and (
            tr.type == "bar" or "markers" in (tr.mode or "")
        ):
            out.add(tr.marker.color)
    return out


# ------------------------------------------------------------------ allocation


@pytest.mark.parametrize("scheme, violated", [("uniform", False), ("skip", False), ("event", True)])
def test_allocation_figure_traces_and_violation_region(scheme, violated):
    eps = allocate(T, LANDMARKS, epsilon=EPSILON, scheme=scheme)
    fig = allocation_figure(eps, LANDMARKS, epsilon=EPSILON)
    check_common(fig, "lmdk-allocation")
    assert fig.layout.xaxis2.title.text == "timestamp index"
    assert "ε" in fig.layout.yaxis.title.text and "G_t" in fig.layout.yaxis2.title.text

    e = trace(fig, "budget ε_t")
    np.testing.assert_array_equal(e.x, np.arange(T))
    np.testing.assert_array_equal(e.y, eps)
    assert e.line.shape == "hv"

    lm = trace(fig, "landmark")
    np.testing.assert_array_equal(lm.x, np.flatnonzero(LANDMARKS))
    np.testing.assert_array_equal(lm.y, eps[LANDMARKS])

    g = trace(fig, "guarantee G_t")
    assert g.yaxis == "y2"
    np.testing.assert_allclose(g.y, brute_guarantee(eps, LANDMARKS), rtol=1e-12)

    line = trace(fig, "target ε")
    assert list(line.y) == [EPSILON, EPSILON] and line.line.dash == "dash"

    region = [tr for tr in fig.data if tr.name.startswith("G_t > ε")]
    assert bool(region) == violated
    if violated:
        (r,) = region
        assert r.fill == "tonexty"
        assert names(fig).index(r.name) == names(fig).index(line.name) + 1  # fills to the ε line
        brute = brute_guarantee(eps, LANDMARKS)
        # Filled height above ε is exactly the excess of G_t over ε.
        np.testing.assert_allclose(np.asarray(r.y) - EPSILON, np.maximum(brute - EPSILON, 0.0))


def test_allocation_figure_computes_guarantee_only_when_not_given():
    eps = allocate(T, LANDMARKS, epsilon=EPSILON, scheme="uniform")
    fake = np.linspace(0, 2, T)
    fig = allocation_figure(eps, np.flatnonzero(LANDMARKS), epsilon=EPSILON, guarantee=fake)
    np.testing.assert_array_equal(trace(fig, "guarantee G_t").y, fake)
    assert any(n.startswith("G_t > ε") for n in names(fig))  # given G_t exceeds ε past t ≈ T/2


def test_time_axis_in_utc_from_any_timezone():
    t = pd.date_range("2024-05-01 10:00", periods=T, freq="30s", tz="Europe/Berlin")
    eps = allocate(T, LANDMARKS, epsilon=EPSILON, scheme="uniform")
    fig = allocation_figure(eps, LANDMARKS, epsilon=EPSILON, time=t)
    assert fig.layout.xaxis2.title.text == "time (UTC)"
    x = pd.DatetimeIndex(trace(fig, "budget ε_t").x)
    assert x[0] == pd.Timestamp("2024-05-01 08:00")  # 10:00 CEST = 08:00 UTC
    assert (x[1:] - x[:-1] == pd.Timedelta(seconds=30)).all()


def test_mismatched_lengths_raise_parameter_errors():
    eps = allocate(T, LANDMARKS, epsilon=EPSILON, scheme="uniform")
    with pytest.raises(ParameterError):
        allocation_figure(eps, LANDMARKS[:-1], epsilon=EPSILON)
    with pytest.raises(ParameterError):
        allocation_figure(eps, LANDMARKS, epsilon=EPSILON,
                          time=pd.date_range("2024", periods=3, freq="s"))
    with pytest.raises(ParameterError):
        allocation_figure(eps, LANDMARKS, epsilon=-1.0)
    with pytest.raises(ParameterError):
        error_figure(np.ones(T), np.ones(T - 1, dtype=bool))


# ------------------------------------------------------------------ decimation


def test_display_index_keeps_every_bucket_extreme():
    rng = np.random.default_rng(3)
    y = rng.normal(size=10_001)
    y[[17, 5000]] = np.nan
    idx = display_index(y, 400)
    assert idx.size <= 402 and (np.diff(idx) > 0).all() and idx[0] == 0 and idx[-1] == y.size - 1
    assert np.nanmax(y) in y[idx] and np.nanmin(y) in y[idx]
    k = math.ceil(y.size / 200)
    shown = set(idx.tolist())
    for start in range(0, y.size, k):
        seg = y[start:start + k]
        assert start + int(np.nanargmax(seg)) in shown and start + int(np.nanargmin(seg)) in shown
    np.testing.assert_array_equal(display_index(y[:300], 400), np.arange(300))
    np.testing.assert_array_equal(display_index(y, None), np.arange(y.size))


def test_long_series_are_thinned_but_a_single_violation_stays_visible():
    n = 20_000
    mask = np.zeros(n, dtype=bool)
    mask[::1000] = True
    eps = allocate(n, mask, epsilon=EPSILON, scheme="uniform")
    eps[12_345] *= 3  # one over-spent regular timestamp
    fig = allocation_figure(eps, mask, epsilon=EPSILON, max_points=1000)
    g = trace(fig, "guarantee G_t")
    assert len(g.x) <= 1002
    assert max(g.y) == pytest.approx(eps[mask].sum() + eps[12_345])
    assert 12_345 in set(trace(fig, "G_t > ε").x.tolist())
    full = allocation_figure(eps, mask, epsilon=EPSILON, max_points=None)
    assert len(trace(full, "guarantee G_t").x) == n


# ------------------------------------------------------------------ error


def test_error_figure_marks_fresh_and_approximated_and_states_mae():
    rng = np.random.default_rng(0)
    err = rng.gamma(2.0, 50.0, T)
    err[:4] = np.nan  # nothing released yet
    pub = rng.random(T) < 0.4
    pub[:4] = False
    fig = error_figure(err, pub, landmarks=LANDMARKS)
    check_common(fig, "lmdk-error")
    assert fig.layout.yaxis.title.text == "error (m)"
    assert fig.layout.xaxis.title.text == "timestamp index"
    mae = float(np.nanmean(err))
    assert f"mean error {mae:.{2 - int(np.floor(np.log10(mae)))}f} m" in fig.layout.title.text
    line = trace(fig, "error")
    assert len(line.y) == T and np.isnan(np.asarray(line.y, dtype=float)[:4]).all()
    fresh, approx = trace(fig, "fresh release"), trace(fig, "approximated")
    np.testing.assert_array_equal(fresh.x, np.flatnonzero(pub))
    np.testing.assert_array_equal(approx.x, np.flatnonzero(~pub & np.isfinite(err)))
    np.testing.assert_array_equal(approx.y, err[~pub & np.isfinite(err)])
    lm = trace(fig, "landmark timestamp")  # a rug on the time axis
    np.testing.assert_array_equal(lm.x, np.flatnonzero(LANDMARKS))
    assert not np.any(lm.y)
    assert not any(n.startswith("landmark") for n in names(error_figure(err, pub)))


def test_error_figure_of_a_real_release():
    rng = np.random.default_rng(1)
    traj = pd.DataFrame({
        "time": pd.date_range("2024-01-01", periods=T, freq="min", tz="UTC"),
        "lat": 39.9 + rng.normal(0, 1e-3, T), "lon": 116.3 + rng.normal(0, 1e-3, T),
    })
    rel = release_locations(traj, LANDMARKS, epsilon=EPSILON, scheme="adaptive", rng=5)
    from lmdk_core import error_metres

    err = error_metres(traj, rel)
    fig = error_figure(err, rel.published, time=traj["time"], landmarks=rel.landmarks)
    assert fig.layout.xaxis.title.text == "time (UTC)"
    assert len(trace(fig, "fresh release").x) == int(rel.published.sum())


# ------------------------------------------------------------------ loss


def test_loss_figure_traces_bounds_and_exceedance_markers():
    eps = allocate(T, LANDMARKS, epsilon=EPSILON, scheme="uniform")
    g = brute_guarantee(eps, LANDMARKS)
    g_bad = g + np.linspace(-0.2, 0.3, T)  # the guarantee crosses ε part-way
    bpl = np.cumsum(eps) * 0.5
    fpl = np.cumsum(eps[::-1])[::-1] * 0.5
    tpl = bpl + fpl - eps
    cap = float(eps.sum()) * 0.8
    composed = np.linspace(0.0, 2 * cap, T)  # above the cap in places: must be shown capped
    temporal = {"bpl": bpl, "fpl": fpl, "tpl": tpl, "pair": tpl * 0.5, "cap": cap}
    fig = loss_figure(eps, g_bad, epsilon=EPSILON, temporal=temporal, landmark_loss=composed,
                      pair_label="places 200 m apart")
    check_common(fig, "lmdk-loss")
    assert fig.layout.xaxis.title.text == "timestamp index"
    assert "privacy" in fig.layout.yaxis.title.text and "ε" in fig.layout.yaxis.title.text
    for prefix, data in (("budget ε_t", eps), ("landmark guarantee G_t", g_bad),
                         ("BPL", bpl), ("FPL", fpl), ("TPL", tpl),
                         ("one event, places 200 m apart", tpl * 0.5),
                         ("landmark loss: landmarks + t, worst pair", np.minimum(composed, cap))):
        tr = trace(fig, prefix)
        np.testing.assert_allclose(tr.y, np.minimum(data, cap) if prefix != "budget ε_t"
                                   and not prefix.startswith("landmark guarantee") else data)
        assert len(tr.x) == T
    # every correlated curve says it is an upper bound; BPL/FPL start hidden
    assert all("upper bound" in n for n in names(fig) if n.split(":")[0] in ("BPL", "FPL", "TPL"))
    assert trace(fig, "BPL").visible == "legendonly" and trace(fig, "TPL").visible is True
    assert list(trace(fig, "composition bound").y) == [cap, cap]
    # only the user's guarantee is marked, never a correlated bound
    over = trace(fig, "exceeds ε: G_t")
    expect = [t for t in range(T) if g_bad[t] > EPSILON + 1e-9]
    assert expect and list(over.x) == expect
    assert [n for n in names(fig) if n.startswith("exceeds")] == [over.name]
    assert list(trace(fig, "target ε").y) == [EPSILON, EPSILON]


def test_loss_figure_marks_nothing_when_the_guarantee_holds_however_large_the_bounds():
    eps = allocate(T, LANDMARKS, epsilon=EPSILON, scheme="uniform")
    g = brute_guarantee(eps, LANDMARKS)
    big = np.full(T, 50 * EPSILON)
    fig = loss_figure(eps, g, epsilon=EPSILON, temporal={"bpl": big, "fpl": big, "tpl": big},
                      landmark_loss=big)
    assert not any(n.startswith("exceeds") for n in names(fig))


def test_loss_figure_without_correlation_marks_guarantee_exceedances_only_when_present():
    eps_ok = allocate(T, LANDMARKS, epsilon=EPSILON, scheme="uniform")
    fig = loss_figure(eps_ok, brute_guarantee(eps_ok, LANDMARKS), epsilon=EPSILON)
    assert not any(n.startswith("exceeds") for n in names(fig))
    assert not any("BPL" in n or "TPL" in n for n in names(fig))
    eps_bad = allocate(T, LANDMARKS, epsilon=EPSILON, scheme="event")
    g = brute_guarantee(eps_bad, LANDMARKS)
    over = trace(loss_figure(eps_bad, g, epsilon=EPSILON), "exceeds ε: G_t")
    assert list(over.x) == [t for t in range(T) if g[t] > EPSILON]


def test_loss_figure_accepts_an_object_with_bpl_fpl_tpl_attributes():
    from types import SimpleNamespace

    eps = allocate(T, LANDMARKS, epsilon=EPSILON, scheme="uniform")
    tl = SimpleNamespace(bpl=eps * 2, fpl=eps * 3, tpl=eps * 4)
    fig = loss_figure(eps, brute_guarantee(eps, LANDMARKS), epsilon=EPSILON, temporal=tl)
    np.testing.assert_allclose(trace(fig, "TPL").y, eps * 4)
    with pytest.raises(ParameterError):
        loss_figure(eps, eps, epsilon=EPSILON, temporal={"bpl": eps, "fpl": eps, "tpl": eps[:-1]})


# ------------------------------------------------------------------ comparison


def test_comparison_figure_bars_error_bars_and_colouring():
    table = pd.DataFrame({
        "scheme": ["event", "user", "uniform", "skip"],
        "mae_m_mean": [400.0, 1e6, 9e3, 450.0],
        "mae_m_std": [5.0, 2e4, 80.0, 9.0],
        "fresh_share_mean": [1.0, 1.0, 1.0, 0.9],
        "budget_spent": [60.0, 1.0, 10.0, 55.0],
        "max_guarantee": [6.0, 1.0, 1.0, 1.0],
        "landmark_private": [False, True, True, True],
    })
    fig = comparison_figure(table)
    check_common(fig, "lmdk-comparison")
    assert fig.layout.xaxis.title.text == "scheme"
    assert "(m" in fig.layout.yaxis.title.text and fig.layout.yaxis.type == "log"
    assert list(fig.layout.xaxis.categoryarray) == table["scheme"].tolist()
    private, not_private = trace(fig, "landmark-private"), trace(fig, "not landmark-private")
    assert list(private.x) == ["user", "uniform", "skip"] and list(not_private.x) == ["event"]
    np.testing.assert_array_equal(private.y, [1e6, 9e3, 450.0])
    np.testing.assert_array_equal(private.error_y.array, [2e4, 80.0, 9.0])
    assert private.marker.color != not_private.marker.color
    assert comparison_figure(table, log_y=False).layout.yaxis.type == "linear"
    with pytest.raises(ParameterError, match="mae_m_std"):
        comparison_figure(table.drop(columns="mae_m_std"))


# ------------------------------------------------------------------ trajectory


def test_trajectory_figure_equal_aspect_and_traces():
    rng = np.random.default_rng(2)
    lat = 60.0 + np.cumsum(rng.normal(0, 1e-4, T))
    lon = 10.0 + np.cumsum(rng.normal(0, 1e-4, T))
    traj = pd.DataFrame({"lat": lat, "lon": lon})
    mask = LANDMARKS.copy()
    mask[0] = True  # skip has no output before its first regular timestamp: NaN points
    rel = release_locations(traj, mask, epsilon=EPSILON, scheme="skip", rng=0)
    places = [Place("home", 60.0, 10.0, 80.0)]
    fig = trajectory_figure(traj, rel, mask, places=places)
    check_common(fig, "lmdk-trajectory")
    assert "longitude" in fig.layout.xaxis.title.text and "°" in fig.layout.xaxis.title.text
    assert "latitude" in fig.layout.yaxis.title.text
    assert fig.layout.yaxis.scaleanchor == "x"
    assert fig.layout.yaxis.scaleratio == pytest.approx(1 / math.cos(math.radians(lat.mean())))
    path = trace(fig, "true path")
    np.testing.assert_array_equal(path.x, lon)
    np.testing.assert_array_equal(path.y, lat)
    released = trace(fig, "released")
    ok = np.isfinite(rel.lat)
    assert not ok[0] and ok[1:].all()
    np.testing.assert_array_equal(released.y, rel.lat[ok])
    lm = trace(fig, "landmark timestamp")
    np.testing.assert_array_equal(lm.y, lat[mask])
    pl = trace(fig, "landmark place")
    assert list(pl.text) == ["home"] and list(pl.x) == [10.0]


# ------------------------------------------------------------------ palette


def test_palette_is_okabe_ito_and_figures_use_it():
    assert PALETTE == ("#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2",
                       "#D55E00", "#CC79A7")
    eps = allocate(T, LANDMARKS, epsilon=EPSILON, scheme="event")
    g = brute_guarantee(eps, LANDMARKS)
    figs = [
        allocation_figure(eps, LANDMARKS, epsilon=EPSILON),
        loss_figure(eps, g, epsilon=EPSILON, temporal={"bpl": g, "fpl": g, "tpl": g},
                    landmark_loss=g),
        error_figure(g, LANDMARKS, landmarks=LANDMARKS),
    ]
    allowed = set(OKABE_ITO.values()) | {"#999999"}  # neutral grey for context lines
    for fig in figs:
        assert trace_colours(fig) <= allowed, trace_colours(fig) - allowed


def test_loss_figure_with_the_correlation_module_golden_chain():
    """Spec golden values: P^B = P^F = [[0.8, 0.2], [0, 1]], ε_t = 0.1, T = 10."""
    from lmdk_core.correlation import landmark_temporal_loss, temporal_loss

    P = np.array([[0.8, 0.2], [0.0, 1.0]])
    eps = np.full(10, 0.1)
    mask = np.zeros(10, dtype=bool)
    mask[[0, 9]] = True
    tl = temporal_loss(eps, P, P)
    lt = landmark_temporal_loss(eps, mask, P, P)  # object with .composed: accepted as is
    fig = loss_figure(eps, brute_guarantee(eps, mask), epsilon=0.5, temporal=tl, landmark_loss=lt)
    bpl = [0.100000, 0.180784, 0.247148, 0.302365, 0.348768, 0.388074, 0.421584, 0.450304,
           0.475028, 0.496389]
    np.testing.assert_allclose(trace(fig, "BPL").y, bpl, atol=1e-6)
    tpl = np.asarray(trace(fig, "TPL").y)
    assert tpl[0] == pytest.approx(0.496389, abs=1e-6)
    assert tpl[4] == pytest.approx(0.636841, abs=1e-6)
    # L = {0, 9} spans the whole series: the joint bound is Σ ε_t = 1.0 (Theorem 3), by hand
    np.testing.assert_allclose(trace(fig, "landmark loss: landmarks + t").y, np.full(10, 1.0))
    np.testing.assert_allclose(trace(fig, "composition bound").y, [1.0, 1.0])
    assert not any(n.startswith("exceeds") for n in names(fig))  # G_t = 0.2 or 0.3 ≤ 0.5


def test_loss_figure_log_axis_when_losses_dwarf_epsilon():
    eps = allocate(T, LANDMARKS, epsilon=EPSILON, scheme="uniform")
    g = brute_guarantee(eps, LANDMARKS)
    assert loss_figure(eps, g, epsilon=EPSILON).layout.yaxis.type != "log"  # G_t ≤ ε: linear
    huge = g * 1000
    fig = loss_figure(eps, g, epsilon=EPSILON, landmark_loss=huge)
    assert fig.layout.yaxis.type == "log" and "log scale" in fig.layout.yaxis.title.text
    linear = loss_figure(eps, g, epsilon=EPSILON, landmark_loss=huge, log_y=False)
    assert linear.layout.yaxis.type != "log"
    assert loss_figure(eps, g, epsilon=EPSILON, log_y=True).layout.yaxis.type == "log"


def test_loss_figure_log_axis_starts_near_epsilon_and_hides_a_far_composition_line():
    eps = allocate(T, LANDMARKS, epsilon=EPSILON, scheme="uniform")
    g = brute_guarantee(eps, LANDMARKS)
    tiny = np.geomspace(1e-150, 100 * EPSILON, T)  # a bound decaying to ~0 at republished times
    fig = loss_figure(eps, g, epsilon=EPSILON, temporal={"bpl": tiny, "fpl": tiny, "tpl": tiny,
                                                 "cap": 1e6})
    assert fig.layout.yaxis.type == "log"
    lo, hi = fig.layout.yaxis.range
    assert lo == pytest.approx(np.log10(EPSILON * 1e-3)) and hi >= np.log10(100 * EPSILON)
    assert not any(n.startswith("composition bound") for n in names(fig))  # 1e6 ≫ the curves
    near = loss_figure(eps, g, epsilon=EPSILON, temporal={"bpl": tiny, "fpl": tiny, "tpl": tiny,
                                                  "cap": 500 * EPSILON})
    assert any(n.startswith("composition bound") for n in names(near))


def test_allocation_figure_marks_dummy_landmarks_apart():
    eps = allocate(T, LANDMARKS, epsilon=EPSILON, scheme="uniform")
    dummies = np.zeros(T, bool)
    dummies[[0, 1]] = True
    dummies[np.flatnonzero(LANDMARKS)[0]] = True  # a real landmark is never shown as a dummy
    fig = allocation_figure(eps, LANDMARKS, epsilon=EPSILON, dummies=dummies, max_points=None)
    tr = trace(fig, "dummy landmark (2, private view)")
    assert list(tr.x) == [0, 1]
    assert not any(n.startswith("dummy") for n in names(
        allocation_figure(eps, LANDMARKS, epsilon=EPSILON)))


# ------------------------------------------------------------------ charts say what they show


def _comparison_table():
    return pd.DataFrame({"scheme": ["skip", "user"], "mae_m_mean": [300.0, 2.7e6],
                         "mae_m_std": [10.0, 1e5], "landmark_private": [True, True]})


def test_log_axes_label_decades_only_in_plain_digits():
    """Issue 13: log axes showed stray minor labels (2, 5 between decades) and exponents."""
    eps = allocate(T, LANDMARKS, epsilon=EPSILON, scheme="uniform")
    g = brute_guarantee(eps, LANDMARKS)
    for fig in (loss_figure(eps, g, epsilon=EPSILON, log_y=True),
                comparison_figure(_comparison_table())):
        y = fig.layout.yaxis
        assert y.type == "log"
        assert y.dtick == 1  # one tick per decade (log units)
        assert y.tickformat == ",~r" and y.exponentformat == "none"
        assert y.minor.ticks == "" and y.minor.showgrid is False
    lin = comparison_figure(_comparison_table(), log_y=False).layout.yaxis
    assert lin.type == "linear" and lin.tickformat == ",~r"


@pytest.mark.parametrize("n, max_points", [(10_000, 400), (5_001, 1_000)])
def test_error_chart_says_it_is_thinned_and_the_claim_holds(n, max_points):
    rng = np.random.default_rng(n)
    err = rng.gamma(2.0, 80.0, n)
    fig = error_figure(err, np.ones(n, bool), max_points=max_points)
    k = math.ceil(n / (max_points // 2))
    notes = [a.text for a in fig.layout.annotations]
    assert notes == [f"Thinned for display: each stretch of {k:,} points shows its min and max "
                     f"({n:,} points in all)"]
    line = trace(fig, "error")
    x, y = np.asarray(line.x), np.asarray(line.y)
    for b in range(0, n, k):  # the claim, checked stretch by stretch against the raw series
        shown = set(y[(x >= b) & (x < b + k)].tolist())
        assert {err[b:b + k].min(), err[b:b + k].max()} <= shown
        assert shown <= {err[b:b + k].min(), err[b:b + k].max(), err[0], err[-1]}
    assert not error_figure(err[:300], np.ones(300, bool), max_points=max_points).layout.annotations
    assert not error_figure(err, np.ones(n, bool), max_points=None).layout.annotations


def test_trajectory_colours_are_the_maps_and_legends_name_them():
    from lmdk_core import maps
    from lmdk_core.figures import COLOUR_NAMES

    traj = pd.DataFrame({"lat": 39.9 + np.arange(T) * 1e-4, "lon": 116.3 + np.arange(T) * 1e-4})
    rel = pd.DataFrame({"lat": traj.lat + 1e-3, "lon": traj.lon})
    fig = trajectory_figure(traj, rel, LANDMARKS, places=[Place("H", 39.9, 116.3, 100)])
    drawn = {
        "true path": (trace(fig, "true path").line.color, maps.TRUE_COLOUR),
        "released": (trace(fig, "released").marker.color, maps.RELEASE_COLOUR),
        "landmark timestamp": (trace(fig, "landmark timestamp").marker.color,
                               maps.LANDMARK_COLOUR),
        "landmark place": (trace(fig, "landmark place").marker.color, maps.PLACE_COLOUR),
    }
    for prefix, (colour, on_map) in drawn.items():
        assert colour.upper() == on_map.upper(), prefix
        assert COLOUR_NAMES[colour.upper()] in trace(fig, prefix).name, prefix
    assert "hollow" in trace(fig, "released").name
    assert trace(fig, "released").marker.symbol == "circle-open"
    assert trace(fig, "released").mode == "markers"  # no line: the legend says circles


def test_loss_curves_are_drawn_as_the_page_describes_them():
    """Each drawn line's colour and dash (read from the figure) is the one LOSS_CURVES gives for
    its legend name, which is what the page's 'How to read the curves' text says."""
    from lmdk_core.figures import COLOUR_NAMES, LOSS_CURVES, curve_style

    eps = allocate(T, LANDMARKS, epsilon=EPSILON, scheme="uniform")
    g = brute_guarantee(eps, LANDMARKS)
    tl = {"bpl": g, "fpl": g, "tpl": g * 1.5, "pair": g * 1.2, "cap": 3.0}

    class Landmark:
        composed = g * 2
        composed_pair = g * 1.8

    fig = loss_figure(eps, g, epsilon=EPSILON, temporal=tl, landmark_loss=Landmark(),
                      pair_label="places 200 m apart")
    lines = [tr for tr in fig.data if tr.mode == "lines"]
    assert len(lines) == len(LOSS_CURVES)
    for tr in lines:
        # the longest matching prefix names the curve
        name, colour, dash = max((c for c in LOSS_CURVES if tr.name.startswith(c[0])),
                                 key=lambda c: len(c[0]))
        assert tr.line.color.upper() == colour.upper(), tr.name
        assert (tr.line.dash or None) in ({None, "solid"} if dash is None else {dash}), tr.name
        assert curve_style(name).startswith(COLOUR_NAMES[colour.upper()])
    with pytest.raises(ParameterError):
        curve_style("no such curve")


def test_every_axis_states_its_unit():
    eps = allocate(T, LANDMARKS, epsilon=EPSILON, scheme="uniform")
    g = brute_guarantee(eps, LANDMARKS)
    traj = pd.DataFrame({"lat": 39.9 + np.arange(T) * 1e-4, "lon": 116.3 + np.arange(T) * 1e-4})
    figs = [allocation_figure(eps, LANDMARKS, epsilon=EPSILON), error_figure(g, np.ones(T, bool)),
            loss_figure(eps, g, epsilon=EPSILON), loss_figure(eps, g, epsilon=EPSILON, log_y=True),
            comparison_figure(_comparison_table()), trajectory_figure(traj)]
    for fig in figs:
        for ax in ("xaxis", "yaxis", "xaxis2", "yaxis2"):
            axis = getattr(fig.layout, ax, None)
            text = axis.title.text if axis is not None and axis.title else None
            if text is None or text in ("scheme", "timestamp index"):  # categories, counts
                continue
            assert re.search(r"\((m|°[EN]|UTC|units of ε)[,)]", text), (ax, text)


def test_target_line_spans_the_times_on_every_plotly():
    """The dashed target-ε line ends at the first and last time as dates (plotly 5.18 wrote
    numpy datetime64 scalars as integer nanoseconds, i.e. a line in the far future)."""
    import json

    time = np.array(["2024-03-06T16:00:13", "2024-03-07T01:28:01"], dtype="datetime64[ns]")
    fig = loss_figure([0.5, 0.5], [1.0, 1.0], epsilon=1.0, time=time)
    (line,) = [t for t in json.loads(fig.to_json())["data"] if t["name"].startswith("target")]
    assert all(isinstance(v, str) for v in line["x"]), line["x"]  # dates, not numbers
    assert [pd.Timestamp(v) for v in line["x"]] == [pd.Timestamp(t) for t in time]
