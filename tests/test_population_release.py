"""Population release end to end: contribution bounding, methods and baselines, τ rules from
public inputs only, generator and preferences, errors, and the Dask engine == in memory."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from lmdk_core.errors import ParameterError
from lmdk_core.population import (
    ICDE15_MIX,
    METHODS,
    Grid,
    PreferencesFormatError,
    bounded_records,
    choose_tau,
    draw_preferences,
    generate_population,
    public_bin_budgets,
    read_preferences,
    release_population,
    write_partitioned,
)
from lmdk_core.population.tau import estimated_cell_mse


@pytest.fixture(scope="module")
def pop():
    traj, places = generate_population(60, points_per_user=80, days=2, rng=1)
    prefs = draw_preferences(traj["uid"].cat.categories, rng=2)
    grid = Grid.covering(start="2008-02-02", end="2008-02-04", cell_m=1000)
    return traj, places, prefs, grid


def test_generator_is_deterministic_and_in_the_box():
    a, pa = generate_population(20, points_per_user=50, rng=4)
    b, pb = generate_population(20, points_per_user=50, rng=4)
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(pa, pb)
    assert len(a) == 1000 and set(pa["name"]) == {"home", "work", "other"}
    assert a.groupby("uid", observed=True)["time"].apply(lambda t: t.is_monotonic_increasing).all()
    assert a["lat"].between(39.70, 40.15).all() and a["lon"].between(116.10, 116.70).all()


def test_preference_mix_shares_chi_square():
    prefs = draw_preferences([f"u{i}" for i in range(5000)], ICDE15_MIX, rng=7)
    obs = prefs["group"].value_counts().reindex(["conservative", "moderate", "liberal"])
    exp = np.array([0.54, 0.37, 0.09]) * 5000
    assert stats.chisquare(obs.to_numpy(), exp).pvalue > 1e-3
    cons = prefs.loc[prefs["group"] == "conservative", "epsilon"]
    assert cons.between(0.1, 0.5).all()
    assert stats.kstest(cons, stats.uniform(0.1, 0.4).cdf).pvalue > 1e-3


@settings(max_examples=8)
@given(rule=st.sampled_from(["first", "mode"]), seed=st.integers(0, 3))
def test_contribution_bounding_one_record_per_user_and_bin(pop, rule, seed):
    traj, places, prefs, grid = pop
    rec = bounded_records(traj, grid=grid, rule=rule)
    assert not rec.duplicated(["uid", "bin"]).any()
    rel = release_population(traj, prefs, grid=grid, places=places, bounding_rule=rule,
                             mix=ICDE15_MIX, rng=seed)
    true = rel.private.true_counts
    users_per_bin = rec.groupby("bin")["uid"].nunique().reindex(range(grid.n_bins), fill_value=0)
    assert np.array_equal(true.sum(axis=(1, 2)), users_per_bin.to_numpy())
    assert np.all(rel.private.kept_counts <= true)


@settings(max_examples=10)
@given(seed=st.integers(0, 2**32 - 1), unit=st.sampled_from(["s", "ms", "us", "ns"]),
       zone=st.sampled_from([None, "Asia/Shanghai"]))
def test_records_ignore_row_order_time_unit_and_zone(pop, seed, unit, zone):
    """Population records go through the package's one (uid, time) sort
    (trajectory.time_order): shuffled rows, any datetime unit and zone give the same records."""
    traj, _, _, grid = pop
    want = bounded_records(traj, grid=grid, rule="first")
    t = traj["time"].dt.as_unit(unit)
    t = t.dt.tz_localize("UTC") if t.dt.tz is None else t
    other = traj.assign(time=t if zone is None else t.dt.tz_convert(zone))
    other = other.sample(frac=1.0, random_state=np.random.default_rng(seed))
    got = bounded_records(other, grid=grid, rule="first")
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True),
                                  check_dtype=False, check_categorical=False)


def test_mode_rule_picks_the_most_visited_cell():
    start = pd.Timestamp("2020-01-01", tz="UTC")
    grid = Grid(bbox=(40.0, 40.05, 116.0, 116.05), cell_m=1000, start=start, bin_s=3600,
                n_bins=1)
    t = start + pd.to_timedelta([1, 2, 3], unit="min")
    df = pd.DataFrame({"uid": "a", "time": t, "lat": [40.001, 40.021, 40.021],
                       "lon": 116.001})
    first = bounded_records(df, grid=grid, rule="first")["cell"].item()
    mode = bounded_records(df, grid=grid, rule="mode")["cell"].item()
    assert first != mode and mode == grid.locate(t.as_unit("ns").asi8[1:2], [40.021],
                                                 [116.001])[1][0]


def test_methods_run_and_only_public_fields_are_public(pop):
    traj, places, prefs, grid = pop
    for method in METHODS:
        rel = release_population(traj, prefs, grid=grid, places=places, method=method,
                                 mix=ICDE15_MIX, rng=3)
        assert rel.counts.shape == grid.shape and rel.counts.dtype == np.int64
        meta = rel.public_metadata()
        text = repr(meta)
        assert "seed" not in text and "epsilon" not in text and "uid" not in text
    ul = release_population(traj, prefs, grid=grid, method="user_level", mix=ICDE15_MIX, rng=3)
    assert ul.scheme == "user" and ul.tau == pytest.approx(0.1 / grid.n_bins, rel=1e-3)


def test_same_seed_same_release_fresh_entropy_differs(pop):
    traj, places, prefs, grid = pop
    a = release_population(traj, prefs, grid=grid, places=places, mix=ICDE15_MIX, rng=5)
    b = release_population(traj, prefs, grid=grid, places=places, mix=ICDE15_MIX, rng=5)
    c = release_population(traj, prefs, grid=grid, places=places, mix=ICDE15_MIX)
    assert np.array_equal(a.counts, b.counts)
    assert not np.array_equal(a.counts, c.counts)


def test_tau_rules_use_public_inputs_only(pop):
    traj, _, prefs, grid = pop
    with pytest.raises(ParameterError, match="public"):
        release_population(traj, prefs, grid=grid, tau="mean")  # no mix: refuse
    b = public_bin_budgets(ICDE15_MIX.public_quantiles(), "skip", grid.n_bins)
    assert choose_tau("mean", b) == pytest.approx(b.mean(), abs=1e-6)
    assert choose_tau("quantile:0.5", b) == pytest.approx(np.median(b), abs=1e-6)
    t = choose_tau("min_error", b, cell_count=10)
    grid_t = np.geomspace(b.min(), b.max(), 200)
    assert estimated_cell_mse(t, b, 10) <= min(estimated_cell_mse(x, b, 10) for x in grid_t) + 1e-6
    with pytest.raises(ParameterError):
        choose_tau("quantile:7", b)


@pytest.mark.parametrize("bad", [
    dict(method="nope"), dict(scheme="adaptive"), dict(engine="spark"), dict(tau=-1.0),
    dict(bounding_rule="last"),
])
def test_bad_parameters_refused(pop, bad):
    traj, _, prefs, grid = pop
    kw = dict(grid=grid, mix=ICDE15_MIX, rng=1) | bad
    with pytest.raises(ParameterError):
        release_population(traj, prefs, **kw)


def test_missing_preference_named(pop):
    traj, _, prefs, grid = pop
    with pytest.raises(ParameterError, match="no privacy preference"):
        release_population(traj, prefs.iloc[1:], grid=grid, tau=1.0, rng=1)


def test_read_preferences_errors_name_file_and_line(tmp_path):
    p = tmp_path / "prefs.csv"
    p.write_text("uid,epsilon\na,0.5\nb,-1\n")
    with pytest.raises(PreferencesFormatError, match=r"prefs.csv line 3: epsilon"):
        read_preferences(p)
    p.write_text("uid,eps\na,0.5\n")
    with pytest.raises(PreferencesFormatError, match="missing column 'epsilon'"):
        read_preferences(p)
    p.write_text("uid,epsilon\na,0.5\na,1\n")
    with pytest.raises(PreferencesFormatError, match="line 3: uid 'a' appears twice"):
        read_preferences(p)


# ----------------------------------------------------------------------------- Dask engine


@pytest.mark.slow
def test_dask_equals_memory_on_a_local_cluster(pop, tmp_path):
    pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    traj, places, prefs, grid = pop
    kw = dict(grid=grid, places=places, mix=ICDE15_MIX, rng=9)
    mem = release_population(traj, prefs, **kw)
    path = write_partitioned(traj, tmp_path / "pq", n_files=4)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        dsk = release_population(str(path), prefs, engine="dask", **kw)
    assert np.array_equal(mem.counts, dsk.counts)
    assert np.array_equal(mem.private.true_counts, dsk.private.true_counts)
    thr = release_population(traj, prefs, engine="dask", dask_partitions=3, **kw)
    assert np.array_equal(mem.counts, thr.counts)


def test_dask_refuses_users_split_across_partitions(pop, tmp_path):
    pytest.importorskip("dask")
    traj, _, prefs, grid = pop
    d = tmp_path / "bad"
    d.mkdir()
    half = len(traj) // 2 + 7  # cuts one user's rows in two files
    traj.iloc[:half].assign(uid=lambda f: f["uid"].astype(str)).to_parquet(d / "a.parquet")
    traj.iloc[half:].assign(uid=lambda f: f["uid"].astype(str)).to_parquet(d / "b.parquet")
    with pytest.raises(ParameterError, match="appears in two partitions"):
        release_population(str(d), prefs, grid=grid, engine="dask", tau=1.0, rng=1)


@settings(max_examples=30)
@given(seed=st.integers(0, 10_000), radius=st.floats(1e-3, 3000))  # a place: radius > 0
def test_own_place_mask_equals_landmark_mask_per_user(seed, radius):
    """The vectorised landmark test gives exactly lmdk_core.landmark_mask per user."""
    import lmdk_core as lm
    from lmdk_core.population.core import own_place_mask

    traj, places = generate_population(6, points_per_user=40, days=1, rng=seed)
    rng = np.random.default_rng(seed)
    places = places.sample(frac=0.7, random_state=seed)
    places = places.assign(radius_m=rng.uniform(0, radius, len(places)))
    uids = np.array(sorted(traj["uid"].astype(str).unique()), dtype=object)
    code = pd.Index(uids).get_indexer(traj["uid"].astype(str))
    got = own_place_mask(code, traj["lat"].to_numpy(), traj["lon"].to_numpy(), uids, places)
    for i, uid in enumerate(uids):
        own = places[places["uid"] == uid]
        sel = code == i
        want = lm.landmark_mask(traj[sel], own) if len(own) else np.zeros(sel.sum(), bool)
        assert np.array_equal(got[sel], want)


@pytest.mark.slow
def test_readme_population_example_runs_as_printed():
    import pathlib
    import re

    text = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text("utf-8")
    section = text[text.index("## Population releases"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    assert ns["rel"].counts.shape == (168, 51, 52)
    assert ns["rel"].tau == pytest.approx(0.8045, abs=1e-3)


def test_suggested_places_are_each_users_own_home_and_work():
    from lmdk_core.geo import haversine_m
    from lmdk_core.population import suggest_user_places

    traj, places = generate_population(6, points_per_user=400, rng=3)
    sug = suggest_user_places(traj, top=2)
    assert set(sug["uid"]) == set(traj["uid"].astype(str))
    for uid, own in sug.groupby("uid"):
        truth = places[(places["uid"] == uid) & places["name"].isin(["home", "work"])]
        d = haversine_m(own["lat"].to_numpy()[:, None], own["lon"].to_numpy()[:, None],
                        truth["lat"].to_numpy()[None], truth["lon"].to_numpy()[None])
        assert (d.min(axis=1) < 100).all()  # every suggestion is one of the user's own places
