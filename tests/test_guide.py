"""The guide before releasing (issue 13): predicted error per scheme, a recommendation, target
accuracy → ε with a one-click button, meaningful defaults, plain words on the page."""

from __future__ import annotations

import re

import numpy as np
import pytest
from apptest_helpers import add_place_by_click, draw, kept, run, session

from dashboard.formatting import fmt_distance
from lmdk_core import advice
from lmdk_core.geo import haversine_m
from lmdk_core.landmarks import landmark_mask
from lmdk_core.schemes import SCHEMES


@pytest.fixture(scope="module")
def clinic(_sample_once):
    sample = _sample_once
    c = sample[(sample.uid == sample.uid.iloc[0]) & (sample.place == "clinic")]
    return float(c.lat.median()), float(c.lon.median())


def _guide_table(at):
    return next(d for d in at.dataframe if "Expected mean error" in d.value.columns).value


def _recommended(at) -> str:
    return next(s.value for s in at.success if s.value.startswith("Recommended"))


def _mean_error_m(at) -> float:
    """The release's mean error from the session (what the 'Mean error' metric shows)."""
    from lmdk_core.metrics import mae_metres

    rel = kept(at)[-1]
    df = at.session_state["df"]
    traj = df[df.uid == df.uid.iloc[0]].reset_index(drop=True)
    return mae_metres(traj, rel)


def test_defaults_give_a_meaningful_first_picture(app, fake_map, home, clinic):
    """Default scheme/ε/r: errors of hundreds of metres, before and after Home and Clinic."""
    assert app.selectbox(key="scheme").value == "skip"
    assert app.number_input(key="epsilon").value == 1.0
    assert app.number_input(key="radius_m").value == 200.0
    assert 100 <= _mean_error_m(app) <= 3000
    add_place_by_click(app, fake_map, *home)
    add_place_by_click(app, fake_map, *clinic)
    assert len(app.session_state["places"]) == 2
    err = _mean_error_m(app)
    assert 100 <= err <= 3000, err
    # released points sit near the trace: no off-map warning
    assert not [w for w in app.warning if "outside the map" in w.value]
    rel = kept(app)[-1]
    assert np.nanmax(np.abs(rel.lat)) < 41


def test_guide_table_and_recommendation(app_home, fake_map, clinic, sample):
    app = app_home  # alice's home marked as a click there leaves it (test_app.py)
    add_place_by_click(app, fake_map, *clinic)
    table = _guide_table(app)
    assert len(table) == len(SCHEMES)
    event = table[table["Scheme"].str.startswith("Event-level")].iloc[0]
    assert event["Protects your places?"] == "NO" and "NOT" in event["What it protects"]
    # the numbers match lmdk_core.advice on the same trace and places
    traj = sample[sample.uid == sample.uid.iloc[0]].reset_index(drop=True)
    mask = landmark_mask(traj, [(p["lat"], p["lon"], p["place_radius_m"])
                                for p in app.session_state["places"]])
    est = advice.estimate_errors(traj, mask, epsilon=1.0, radius_m=200.0, rng=0)
    best = advice.recommend(est)
    assert best is not None and best.landmark_private and best.scheme != "event"
    assert "★ recommended" in table["Scheme"].iloc[[e.scheme for e in est].index(best.scheme)]
    assert "Skip" in _recommended(app)
    # the trial releases are off until asked for (each click would repeat them): the table
    # shows the public formulas (Skip at the places: its lower bound, said so) and no number for
    # the schemes that have none; the recommendation (formulas only) is the same
    pred = advice.predict_errors(n=len(traj), n_landmarks=int(mask.sum()), epsilon=1.0,
                                 radius_m=200.0)
    shown = dict(zip(table["Scheme"].str.split(" ").str[0], table["Expected mean error"],
                     strict=True))
    how = dict(zip(table["Scheme"].str.split(" ").str[0], table["How we know"], strict=True))
    for p in pred:
        name = next(k for k in shown if k.lower().startswith(p.scheme[:4]))
        want = {"closed form": fmt_distance(p.mean_error), "simulate": "—",
                "lower bound": f"≥ {fmt_distance(p.mean_error)}"}[p.kind]
        assert shown[name] == want, (name, shown[name], p)
        assert "trial" not in how[name] or p.kind == "simulate", how[name]
    skip = next(p for p in pred if p.scheme == "skip")
    assert skip.kind == "lower bound"
    assert f"(at least {fmt_distance(skip.mean_error)} here)" in _recommended(app)
    assert not any(k[-2] for k in app.session_state["guide_estimates"])  # no trial was run
    captions = " ".join(c.value for c in app.caption)  # and none is spoken of
    assert "shows the smoothed ones" not in captions and "simulated rows" not in captions
    text = " ".join(c.value for c in app.caption)
    assert "for your eyes only" in text and "never exported" in text
    # the seeded trial runs never become the real release (which is what exports use): the
    # page shows a preview (a labelled simulation) until the real release is drawn
    assert kept(app)[-1].seeded
    draw(app)
    assert not session(app).draws()[-1].release.seeded


def test_use_recommended_scheme_button(app_home):
    app = app_home
    app.selectbox(key="scheme").set_value("uniform")
    run(app)
    next(b for b in app.button if b.key == "guide_use_scheme").click()
    run(app)
    assert app.selectbox(key="scheme").value == "skip"
    assert not [b for b in app.button if b.key == "guide_use_scheme"]


@pytest.mark.parametrize("scheme", ["event", "uniform"])
def test_target_accuracy_sets_epsilon(app_home, scheme):
    """Type a target, click 'Use ε = …': the sidebar ε changes and the predicted error of the
    scheme at that ε is within the target — and, where every moment is released fresh, so is
    the headline Mean error of the new preview."""
    app = app_home
    app.selectbox(key="scheme").set_value(scheme)
    app.number_input(key="radius_m").set_value(100.0)
    target = 300.0 if scheme == "event" else 20_000_000.0 / 4
    app.number_input(key="guide_target_m").set_value(target)
    run(app)
    before = app.number_input(key="epsilon").value
    next(b for b in app.button if b.key == "guide_use_epsilon").click()
    run(app)
    eps = app.number_input(key="epsilon").value
    assert eps != before and not app.error
    n = len(kept(app)[-1])
    k = int(np.asarray(kept(app)[-1].landmarks).sum())
    pred = {p.scheme: p for p in advice.predict_errors(n=n, n_landmarks=k, epsilon=eps,
                                                        radius_m=100.0)}[scheme]
    assert pred.mean_error <= target
    assert pred.mean_error >= 0.99 * target  # rounded up by at most 3 significant digits
    rel = kept(app)[-1]
    assert rel.epsilon == eps
    if scheme == "event":  # 11k fresh points: their mean is within a few % of the expectation
        assert 0.95 * target <= _mean_error_m(app) <= 1.05 * target


def test_skip_target_is_the_headline_with_its_floor(app_home):
    """Skip at your places repeats older points: below its floor the guide says no ε reaches
    the target and names the floor (the Mean error of a noise-free Skip release); above it,
    the ε for the headline Mean error, read from the trace, without a one-click button."""
    from lmdk_core.metrics import mae_metres
    from lmdk_core.release import release_locations

    app = app_home
    app.number_input(key="radius_m").set_value(100.0)
    app.number_input(key="guide_target_m").set_value(20.0)
    run(app)
    rel = kept(app)[-1]
    df = app.session_state["df"]
    traj = df[df.uid == df.uid.iloc[0]].reset_index(drop=True)
    noiseless = mae_metres(traj, release_locations(traj, rel.landmarks, epsilon=1e9,
                                                   scheme="skip", radius_m=100.0, rng=0,
                                                   noise="fast"))
    text = " ".join(m.value for m in app.markdown)
    assert "cannot bring the *Mean error* of section 4 down to 20 m" in text
    assert f"above **{fmt_distance(noiseless)}**" in text
    assert not [b for b in app.button if b.key == "guide_use_epsilon"]
    app.number_input(key="guide_target_m").set_value(400.0)
    run(app)
    text = " ".join(m.value for m in app.markdown)
    assert "reaches a *Mean error* (section 4) of about 400 m at **ε ≈" in text
    assert "Computed from your true trace" in " ".join(c.value for c in app.caption)
    assert not [b for b in app.button if b.key == "guide_use_epsilon"]


def test_unreachable_target_says_so_and_offers_the_interval(app_home):
    app = app_home
    app.selectbox(key="scheme").set_value("uniform")
    app.number_input(key="guide_target_m").set_value(500.0)
    run(app)
    assert not [b for b in app.button if b.key == "guide_use_epsilon"]
    text = " ".join(c.value for c in app.caption)
    assert "beyond the largest ε" in text
    assert "release one location every" in text or "No release interval" in text


def test_huge_noise_warns_instead_of_a_broken_map(app_home, home):
    app = app_home
    app.selectbox(key="scheme").set_value("user")
    run(app)
    warn = [w.value for w in app.warning if "outside the map" in w.value]
    assert warn, [w.value for w in app.warning]
    assert "km away" in warn[0] and "scatter over the globe" in warn[0]
    rel = kept(app)[-1]
    # the release clamps latitude and wraps longitude: valid coordinates, however far
    assert np.nanmax(np.abs(rel.lat)) <= 90 and np.nanmax(rel.lon) < 180
    assert np.nanmin(rel.lon) >= -180
    d = haversine_m(rel.lat[-1:], rel.lon[-1:], np.array([home[0]]), np.array([home[1]]))
    assert np.isfinite(d).all()


EXPONENT = re.compile(r"\d(?:\.\d+)?[eE][+-]?\d+")
RAW = re.compile(r"\b(?:s_min|mae_m_mean|mae_m_std|fresh_share_mean|max_guarantee|"
                 r"landmark_private|budget_spent|mae_real|mae_dummies)\b")


def _texts(at) -> list[str]:
    out = [m.value for m in at.markdown] + [c.value for c in at.caption]
    out += [f"{m.label} {m.value}" for m in at.metric]
    out += [e.value for e in (*at.success, *at.warning, *at.info)]
    for d in at.dataframe:
        out.append(" ".join(map(str, d.value.columns)))
        out += [str(v) for v in d.value.to_numpy().ravel()]
    return out


def test_plain_words_no_raw_names_no_exponents(app_home):
    app = app_home
    app.selectbox(key="scheme").set_value("adaptive")
    run(app)
    labels = [w.label for w in (*app.number_input, *app.checkbox)]
    assert not {"w", "s_min", "inc", "dec", "sample_landmarks"} & set(labels)
    assert "Lowest sampling rate (share of moments, 0–1)" in labels
    app.selectbox(key="scheme").set_value("bd")
    app.slider(key="compare_runs").set_value(1)
    run(app)
    assert "Window (moments)" in [w.label for w in app.number_input]
    next(b for b in app.button if b.label == "Run comparison").click()
    run(app)
    comp = next(d for d in app.dataframe if "Mean error" in d.value.columns).value
    assert "Budget spent (sum of ε per moment)" in comp.columns
    assert comp["Mean error"].str.endswith(("m", "km")).all()
    for text in _texts(app):
        assert not EXPONENT.search(text), text
        assert not RAW.search(text), text
    # the glossary sits next to the symbols
    captions = " ".join(c.value for c in app.caption)
    assert "Σε_t:" in captions and "G_t:" in captions and "ε:" in captions


def test_guide_estimate_is_fast_and_cached(app_home):
    """The quick simulation runs once per setting (session cache), not on every rerun."""
    app = app_home
    kept = app.session_state["guide_estimates"]
    n = len(kept)
    run(app)
    assert len(app.session_state["guide_estimates"]) == n


def test_guide_says_when_dummy_landmarks_add_error(app_home):
    app = app_home
    assert not [i for i in app.info if "Dummy landmarks are on" in i.value]
    app.toggle(key="hide_on").set_value(True)
    run(app)
    assert [i for i in app.info if "Dummy landmarks are on" in i.value]


def test_guide_table_follows_the_smoothing_toggle(app_home, sample):
    """With smoothing on (the default), the guide's errors are the smoothed trial runs' — the
    error the page and the download then show; with it off, the raw ones."""

    app = app_home

    def starred():
        table = _guide_table(app)
        return table[table["Scheme"].str.contains("★")]["Scheme"].tolist()

    before = starred()
    app.toggle(key="guide_trials").set_value(True)  # the trial releases, on request
    run(app)
    assert starred() == before  # the recommendation does not need them (formulas only)
    traj = sample[sample.uid == sample.uid.iloc[0]].reset_index(drop=True)
    mask = landmark_mask(traj, [(p["lat"], p["lon"], p["place_radius_m"])
                                for p in app.session_state["places"]])
    est = {e.scheme: e for e in advice.estimate_errors(traj, mask, epsilon=1.0, radius_m=200.0,
                                                        rng=0, smooth=True)}

    def skip_row():
        table = _guide_table(app)
        return table[table["Scheme"].str.startswith("Skip")].iloc[0]

    row = skip_row()
    assert row["Expected mean error"] == fmt_distance(est["skip"].smoothed)
    assert row["How we know"].endswith("smoothed")
    assert "the table above shows the smoothed ones" in " ".join(c.value for c in app.caption)
    app.toggle(key="smooth_release").set_value(False)
    run(app)
    row = skip_row()
    assert row["Expected mean error"] != fmt_distance(est["skip"].smoothed)
    assert not row["How we know"].endswith("smoothed")


def test_first_page_guide_on_the_sample_is_shared_and_nothing_private_is(fake_map, home,
                                                                          monkeypatch):
    """The guide of the bundled sample with no place marked is computed from public data and
    public settings only, so sessions share it (every first page load starts there); as soon as
    the session marks a place, or its data is not the sample, the guide is its own again."""
    from apptest_helpers import offline_page

    from dashboard import guide_section

    def page():
        at = offline_page()
        at.session_state["guide_trials"] = True  # the trial releases switched on
        return run(at)

    first = page()
    table = _guide_table(first)
    calls = []
    real = advice.estimate_errors
    monkeypatch.setattr(advice, "estimate_errors",
                        lambda *a, **k: calls.append(k) or real(*a, **k))
    second = page()  # another session, same public inputs: served from the shared cache
    assert calls == [] and _guide_table(second).equals(table)
    traj = second.session_state["df"]
    traj = traj[traj.uid == traj.uid.iloc[0]].reset_index(drop=True)
    fresh = real(traj, np.zeros(len(traj), bool), epsilon=1.0, radius_m=200.0,
                 rng=guide_section.SEED, smooth=True)
    shown = dict(zip(table["Scheme"], table["Expected mean error"], strict=True))
    for e in fresh:  # the shared numbers are what this session would compute itself
        name = next(k for k in shown if k.lower().startswith(e.scheme[:4]))
        assert shown[name] == fmt_distance(e.estimate), (name, e)
    add_place_by_click(second, fake_map, *home)  # a place: this session's own computation
    assert calls and calls[-1].get("reuse") is not None
    n = len(calls)
    second.session_state["df"] = traj.copy()  # as after an upload: not the sample, never shared
    second.session_state["data_token"] = "upload:copy.csv"
    second.session_state["places"] = []
    run(second)
    assert len(calls) > n
