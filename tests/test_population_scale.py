"""The partitioned engines (issue 26): the release does not depend on how the users are cut into
partitions, on the row order, on the id type or on where the Parquet lives; the row-group
splitting keeps every user in one partition; a naive split is caught."""

from __future__ import annotations

import fsspec
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmdk_core.errors import ParameterError
from lmdk_core.population import (
    ICDE15_MIX,
    Grid,
    draw_preferences,
    generate_population,
    release_population,
    write_partitioned,
)
from lmdk_core.population.core import Totals, places_by_user, process_partition
from lmdk_core.population.dask_engine import distinct_users
from lmdk_core.population.generator import write_population
from lmdk_core.population.partitions import ParquetUnit, frame_units, parquet_units, read_unit


@pytest.fixture(scope="module")
def pop():
    traj, places = generate_population(30, points_per_user=60, days=2, rng=4)
    places = places[places["name"] != "work"]
    prefs = draw_preferences(traj["uid"].astype(str).unique(), ICDE15_MIX, rng=3)
    grid = Grid.covering(start="2008-02-02", end="2008-02-04", cell_m=3000, bin_s=3 * 3600)
    return traj, places, prefs, grid


def _same(a, b) -> None:
    assert np.array_equal(a.counts, b.counts)
    assert np.array_equal(a.private.true_counts, b.private.true_counts)
    assert np.array_equal(a.private.kept_counts, b.private.kept_counts)
    pd.testing.assert_frame_equal(a.private.users, b.private.users)
    assert (a.private.n_points, a.private.n_outside) == (b.private.n_points, b.private.n_outside)


def _release_kw(pop, method: str) -> dict:
    _, places, _, grid = pop
    return dict(grid=grid, places=places, mix=ICDE15_MIX, rng=11, method=method)


@pytest.fixture(scope="module")
def whole(pop):
    """The one-partition release for each method, made once (the examples below only read it:
    it depends on the method alone, not on the drawn partitions, order or id type)."""
    traj, _, prefs, _ = pop
    return {m: release_population(traj, prefs, partition_rows=10**9, **_release_kw(pop, m))
            for m in ("personalised", "threshold")}


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.integers(1, 2500), shuffle=st.integers(0, 2**31), ids=st.sampled_from(
    ["category", "str", "object"]), method=st.sampled_from(["personalised", "threshold"]))
def test_release_is_the_same_whatever_the_partitions_and_row_order(pop, whole, rows, shuffle,
                                                                   ids, method):
    traj, _, prefs, _ = pop
    t = traj.sample(frac=1.0, random_state=shuffle % 2**32)  # rows in any order
    t = t.assign(uid=t["uid"].astype(ids if ids != "str" else str))
    _same(whole[method], release_population(t, prefs, partition_rows=rows,
                                            **_release_kw(pop, method)))


@settings(max_examples=30, deadline=None)
@given(n_users=st.integers(1, 12), rows=st.integers(1, 40), seed=st.integers(0, 10**6))
def test_frame_units_cover_every_row_once_and_keep_users_whole(n_users, rows, seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 15, n_users)
    uid = np.repeat([f"u{i}" for i in range(n_users)], sizes)
    frame = pd.DataFrame({"uid": uid, "time": np.arange(uid.size), "lat": 0.0, "lon": 0.0,
                          "row": np.arange(uid.size)}).sample(frac=1.0, random_state=seed)
    units = frame_units(frame, rows)
    got = np.sort(np.concatenate([u["row"].to_numpy() for u in units]))
    assert np.array_equal(got, np.arange(uid.size))  # every row exactly once
    owners: dict[str, int] = {}
    for i, u in enumerate(units):
        for user in set(u["uid"]):
            assert owners.setdefault(user, i) == i  # a user in one unit only
        assert len(u) <= rows or u["uid"].nunique() == 1  # bounded, or one big user


def _cut_file(traj: pd.DataFrame, path, row_group: int) -> None:
    """One Parquet file sorted by (uid, time) whose row groups cut users in the middle."""
    frame = traj.assign(uid=traj["uid"].astype(str))
    frame.to_parquet(path, index=False, row_group_size=row_group)


def test_row_groups_that_share_a_user_stay_in_one_unit(pop, tmp_path):
    traj, places, prefs, grid = pop
    f = tmp_path / "one.parquet"
    _cut_file(traj, f, row_group=45)  # 60 points per user: every user straddles two groups
    units = parquet_units(str(f), max_rows=1)  # the smallest units the statistics allow
    assert len(units) > 1
    seen: dict[str, int] = {}
    for i, u in enumerate(units):
        for user in set(read_unit(u)["uid"].astype(str)):
            assert seen.setdefault(user, i) == i
    assert sum(u.n_rows for u in units) == len(traj)
    kw = dict(grid=grid, places=places, mix=ICDE15_MIX, rng=5)
    _same(release_population(traj, prefs, **kw),
          release_population(str(f), prefs, partition_rows=1, **kw))


def test_a_naive_row_group_split_is_refused(pop, tmp_path):
    """The broken variant: one unit per row group would count a straddling user twice; the
    running sum refuses it instead of releasing."""
    traj, _, prefs, grid = pop
    f = tmp_path / "one.parquet"
    _cut_file(traj, f, row_group=45)
    naive = [ParquetUnit(f"file://{f}", (i,), 45) for i in range(3)]
    totals = Totals(grid.n_bins * grid.n_cells)
    eps = pd.Series(prefs["epsilon"].to_numpy(), index=prefs["uid"].astype(str))
    with pytest.raises(ParameterError, match="appears in two partitions"):
        for u in naive:
            totals.add(process_partition(read_unit(u), grid=grid, epsilon_of=eps, places=None,
                                         tau=1.0, master_key=b"k" * 32))


@pytest.mark.parametrize("engine", ["memory", "dask"])
def test_parquet_at_local_file_and_memory_urls_gives_the_in_memory_release(pop, tmp_path,
                                                                          engine):
    if engine == "dask":
        pytest.importorskip("dask")
    traj, places, prefs, grid = pop
    kw = dict(grid=grid, places=places, mix=ICDE15_MIX, rng=7)
    ref = release_population(traj, prefs, **kw)
    d = write_partitioned(traj, tmp_path / "pq", n_files=3, row_group_rows=100)
    fs = fsspec.filesystem("memory")
    for p in sorted(d.glob("*.parquet")):
        fs.pipe(f"/h6test/{p.name}", p.read_bytes())
    try:
        for url in (str(d), f"file://{d}", "memory://h6test"):
            got = release_population(url, prefs, engine=engine, partition_rows=150, **kw)
            _same(ref, got)
            assert got.engine == engine
        ids = distinct_users("memory://h6test", max_rows=150)
        assert list(ids) == sorted(traj["uid"].astype(str).unique())
    finally:
        fs.rm("/h6test", recursive=True)


def test_bad_locations_raise_the_package_error(pop, tmp_path):
    _, _, prefs, grid = pop
    with pytest.raises(ParameterError, match="no such file"):
        release_population(str(tmp_path / "nope"), prefs, grid=grid, tau=1.0, rng=1)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ParameterError, match=r"no \.parquet files"):
        release_population(str(tmp_path / "empty"), prefs, grid=grid, tau=1.0, rng=1)
    pd.DataFrame({"uid": ["a"], "lat": [0.0]}).to_parquet(tmp_path / "x.parquet")
    with pytest.raises(ParameterError, match="missing column"):
        release_population(str(tmp_path / "x.parquet"), prefs, grid=grid, tau=1.0, rng=1)
    with pytest.raises(ParameterError, match="partition_rows"):
        release_population(str(tmp_path / "x.parquet"), prefs, grid=grid, tau=1.0, rng=1,
                           partition_rows=0)
    with pytest.raises(ParameterError, match="needs engine='dask'"):
        release_population(str(tmp_path / "x.parquet"), prefs, grid=grid, tau=1.0, rng=1,
                           scheduler="tcp://127.0.0.1:1")


def test_written_population_is_the_generated_one(tmp_path):
    traj, places = generate_population(25, points_per_user=30, days=1, rng=2)
    got_places = write_population(tmp_path, 25, points_per_user=30, days=1, rng=2)
    pd.testing.assert_frame_equal(places, got_places)
    back = pd.read_parquet(tmp_path)
    assert np.array_equal(back["uid"].to_numpy(dtype=str), traj["uid"].to_numpy(dtype=str))
    for c in ("time", "lat", "lon"):
        assert np.array_equal(back[c].to_numpy(), traj[c].to_numpy())
    assert len(places_by_user(places)) == 25


_CELL = st.one_of(st.floats(-200, 200), st.sampled_from([0.0, -0.0, 90.0, -90.0, 180.0, -180.0,
                                                          90.5, float("nan"), float("inf")]))


@settings(max_examples=25, deadline=None)
@given(rows=st.lists(st.tuples(_CELL, _CELL, st.one_of(_CELL, st.floats(0, 1e4))), min_size=1,
                     max_size=6),
       kind=st.sampled_from(["float", "int", "object", "bool"]))
def test_place_rows_are_the_place_validators_rows_or_its_error(rows, kind):
    """The vectorised check of a places table accepts, fixes and refuses exactly what the
    package's one place validator (lmdk_core.places.as_places, row by row) does."""
    from lmdk_core.landmarks import _places
    from lmdk_core.population.core import _place_rows

    table = pd.DataFrame(rows, columns=["lat", "lon", "radius_m"])
    if kind == "int":
        table = table.fillna(0).clip(-1e6, 1e6).round().astype(np.int64)
    elif kind == "object":
        table = table.astype(object)
    elif kind == "bool":
        table["radius_m"] = table["radius_m"] > 0
    try:
        want = np.column_stack(_places(table))
    except ParameterError as exc:
        with pytest.raises(ParameterError) as got:
            _place_rows(table)
        assert str(got.value) == str(exc)
    else:
        assert np.array_equal(_place_rows(table), want)


def test_own_place_mask_reads_only_the_partitions_users_from_a_larger_index(pop):
    """A partition's landmarks are the same whether the places index holds its users only or a
    whole population with more places per user (the padding width follows the partition)."""
    from lmdk_core.population.core import own_place_mask

    traj, places, _, _ = pop
    uids = np.array(sorted(traj["uid"].astype(str).unique()), dtype=object)
    code = pd.Index(uids).get_indexer(traj["uid"].astype(str))
    lat, lon = traj["lat"].to_numpy(), traj["lon"].to_numpy()
    far = pd.DataFrame({"uid": [f"other{i // 9}" for i in range(90)], "lat": 0.0, "lon": 0.0,
                        "radius_m": 1e7})  # users not in the partition: 9 places each
    big = places_by_user(pd.concat([places[["uid", "lat", "lon", "radius_m"]], far]))
    want = own_place_mask(code, lat, lon, uids, places)
    assert want.any() and not want.all()
    assert np.array_equal(own_place_mask(code, lat, lon, uids, big), want)
    none = places_by_user(far)  # no place of any partition user: no landmark
    assert not own_place_mask(code, lat, lon, uids, none).any()



def test_own_place_mask_in_blocks_is_the_same_mask(pop, monkeypatch):
    """own_place_mask tests points in blocks (bounded temporaries): blocks of 7 points (users
    cut across blocks, a last partial block) give the mask of one block holding every point."""
    from lmdk_core.population import core

    traj, places, _, _ = pop
    uids = np.array(sorted(traj["uid"].astype(str).unique()), dtype=object)
    code = pd.Index(uids).get_indexer(traj["uid"].astype(str))
    lat, lon = traj["lat"].to_numpy(), traj["lon"].to_numpy()
    assert code.size % 7 and code.size < core._BLOCK
    want = core.own_place_mask(code, lat, lon, uids, places)
    monkeypatch.setattr(core, "_BLOCK", 7)
    assert want.any() and np.array_equal(core.own_place_mask(code, lat, lon, uids, places), want)

def test_place_index_holds_each_users_rows_and_pickles_as_arrays(pop):
    """places_by_user: each user's rows of the table, in table order; a pickled copy is the same
    index and is a few buffers (a Dask broadcast is one message, not one per user)."""
    import pickle

    _, places, _, _ = pop
    index = places_by_user(places)
    table = places.assign(uid=places["uid"].astype(str))
    assert sorted(index) == sorted(table["uid"].unique())
    for uid, own in table.groupby("uid"):
        assert np.array_equal(index[uid], own[["lat", "lon", "radius_m"]].to_numpy())
    assert "nobody" not in index and index.get("nobody") is None
    start, count = index.spans(np.array(["nobody", *sorted(index)], dtype=object))
    assert count[0] == 0 and np.array_equal(count[1:], [len(index[u]) for u in sorted(index)])
    assert np.array_equal(index.rows[start[1:]], [index[u][0] for u in sorted(index)])
    blob = pickle.dumps(index, protocol=5)
    back = pickle.loads(blob)
    assert all(np.array_equal(back[u], index[u]) for u in index)
    assert places_by_user(back) is back and len(places_by_user(None)) == 0
    frames = pytest.importorskip("distributed.protocol").serialize(index)[1]
    assert len(frames) <= 8 < len(index)  # not one frame per user
    legacy = places_by_user({u: index[u] for u in index})  # an older dict index
    assert all(np.array_equal(legacy[u], index[u]) for u in index)
