"""Real population releases and the population's ProPer ledger (lmdk_core.population.session):
each user is charged their own loss at once, users who cannot afford a release are left out of it
and pay nothing, nobody is ever overdrawn, the same settings return the same draw, and the public
file holds the released counts only. Also: the release's coins and noise come from ChaCha20."""

from __future__ import annotations

import hashlib
import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmdk_core.errors import ParameterError
from lmdk_core.population import (
    ICDE15_MIX,
    Grid,
    Ledger,
    PopulationSession,
    draw_preferences,
    generate_population,
    release_losses,
    release_population,
)
from lmdk_core.population.core import keyed_source, release_loss, user_coins
from lmdk_core.session import BudgetExceededError


@pytest.fixture(scope="module")
def pop():
    traj, places = generate_population(60, points_per_user=80, days=2, rng=1)
    grid = Grid.covering(start="2008-02-02", end="2008-02-04", cell_m=2000)
    prefs = draw_preferences(traj["uid"].cat.categories, ICDE15_MIX, rng=0)
    return traj, places[places["name"] == "other"], prefs, grid


def _kw(pop, **changes):
    _, places, _, grid = pop
    return {"grid": grid, "places": places, "scheme": "skip", "method": "personalised",
            "tau": "mean", "mix": ICDE15_MIX} | changes


# ----------------------------------------------------------------------------- the ledger


@settings(max_examples=80)
@given(budgets=st.lists(st.floats(0.05, 3.0), min_size=1, max_size=10),
       releases=st.lists(st.lists(st.floats(0.0, 2.0), min_size=10, max_size=10),
                         max_size=8))
def test_proper_never_overdraws_a_user(budgets, releases):
    """charge_costs: included users pay exactly their cost, excluded ones nothing, and a user
    is excluded only when the cost would pass their budget; 0 <= spent <= budget always."""
    led = Ledger(pd.DataFrame({"uid": [f"u{i}" for i in range(len(budgets))],
                               "epsilon": budgets}), max_displays=0)
    total = 0.0
    for costs in releases:
        c = np.array(costs[: len(budgets)])
        before = led.spent.copy()
        assert np.array_equal(led.affordable(c), before + c <= led.budget)
        ch = led.charge_costs(c)
        assert np.array_equal(led.spent[ch.included], before[ch.included] + c[ch.included])
        assert np.array_equal(led.spent[~ch.included], before[~ch.included])
        assert np.all(before[~ch.included] + c[~ch.included] > led.budget[~ch.included])
        assert np.all(led.spent >= 0) and np.all(led.spent <= led.budget)
        total += float(ch.cost.sum())
        assert led.spent.sum() == pytest.approx(total, rel=1e-9, abs=1e-12)
        led.check()


def test_charge_costs_refuses_bad_costs():
    led = Ledger(pd.DataFrame({"uid": ["a", "b"], "epsilon": [1.0, 1.0]}), max_displays=0)
    for bad in ([-0.1, 0.0], [np.nan, 0.0], [0.1]):
        with pytest.raises(ParameterError):
            led.charge_costs(bad)
    ch = led.charge_costs(pd.Series({"b": 0.4}))  # a Series: missing users cost nothing
    assert list(led.spent) == [0.0, 0.4] and ch.included.all()


# ----------------------------------------------------------------------------- losses


@settings(max_examples=60)
@given(data=st.data())
def test_release_loss_is_the_landmark_guarantee_of_the_per_bin_losses(data):
    """max_t Σ_{i ∈ L ∪ {t}} ℓ_i, checked by brute force over t; at most ε_u for a
    landmark-private scheme up to rounding."""
    n_users = data.draw(st.integers(1, 4))
    n_bins = data.draw(st.integers(1, 8))
    eps = np.array(data.draw(st.lists(st.floats(0.0, 3.0), min_size=n_users * n_bins,
                                      max_size=n_users * n_bins))).reshape(n_users, n_bins)
    lm = np.array(data.draw(st.lists(st.booleans(), min_size=n_users * n_bins,
                                     max_size=n_users * n_bins))).reshape(n_users, n_bins)
    tau = data.draw(st.floats(0.05, 2.0))
    mode = data.draw(st.sampled_from(["sample", "threshold"]))
    got = release_loss(eps, lm, tau=tau, mode=mode, epsilon=np.full(n_users, 1e9))
    ell = np.minimum(eps, tau) if mode == "sample" else np.where(eps >= tau, tau, 0.0)
    want = [max(ell[u][lm[u] | (np.arange(n_bins) == t)].sum() for t in range(n_bins))
            for u in range(n_users)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("scheme", ["skip", "uniform", "user"])
def test_release_losses_are_what_the_release_spends_and_at_most_each_budget(pop, scheme):
    traj, _, prefs, _ = pop
    kw = _kw(pop, scheme=scheme)
    losses = release_losses(traj, prefs, **kw).set_index("uid")
    rel = release_population(traj, prefs, rng=3, **kw)
    users = rel.private.users.set_index("uid")
    np.testing.assert_array_equal(users["loss"].to_numpy(), losses.loc[users.index, "loss"])
    assert (losses["loss"] <= losses["epsilon"]).all() and (losses["loss"] > 0).all()
    if scheme == "skip":  # ε_u at ordinary hours, nothing at landmarks: min(ε_u, τ)
        np.testing.assert_allclose(losses["loss"], np.minimum(losses["epsilon"], rel.tau))


# ----------------------------------------------------------------------------- real draws


def test_a_real_draw_charges_each_user_their_loss_and_is_never_redrawn(pop):
    traj, _, prefs, _ = pop
    s = PopulationSession()
    plan = s.plan("pop", traj, prefs, key="k1", **_kw(pop))
    assert plan.fits and plan.n_included == plan.n_users == len(prefs)
    d = s.draw("pop", traj, prefs, key="k1", **_kw(pop))
    assert d.is_real and d.n_excluded == 0
    led = s.ledger("pop", prefs)
    losses = release_losses(traj, prefs, **_kw(pop)).set_index("uid")["loss"]
    np.testing.assert_allclose(led.spent, losses.reindex(led.uids).to_numpy())
    assert s.draw("pop", traj, prefs, key="k1", **_kw(pop)) is d
    assert len(led.history) == 1 and s.plan("pop", traj, prefs, key="k1").existing
    summary = s.summary("pop", prefs)
    assert summary.draws == 1 and summary.n_excluded_last == 0
    assert summary.largest_spend == pytest.approx(led.spent.max())
    assert summary.n_spent == int((led.spent >= led.budget * (1 - 1e-9)).sum()) > 0
    led.check()


def test_users_who_cannot_afford_are_left_out_and_a_release_nobody_affords_is_refused(pop):
    traj, _, prefs, _ = pop
    flat = prefs.assign(epsilon=0.5)
    s = PopulationSession()
    kw = _kw(pop, tau=1.0, mix=None)
    first = s.draw("flat", traj, flat, key="skip", **kw)  # skip, τ = 1: everyone pays 0.5
    led = s.ledger("flat", flat)
    assert first.n_excluded == 0 and np.allclose(led.spent, 0.5)
    plan = s.plan("flat", traj, flat, key="uniform", **dict(kw, scheme="uniform"))
    assert not plan.fits and plan.n_excluded == plan.n_users
    with pytest.raises(BudgetExceededError, match="none of the 60 users can afford"):
        s.draw("flat", traj, flat, key="uniform", **dict(kw, scheme="uniform"))
    assert len(led.history) == 1 and s.drawn("uniform") is None
    # half the people have more: only they are in a second release, and only they pay
    rich = prefs.assign(epsilon=np.where(np.arange(len(prefs)) % 2 == 0, 0.5, 1.2))
    s.draw("rich", traj, rich, key="a", **dict(kw, tau=0.4))  # everyone pays min(ε_u, τ) = 0.4
    second = s.draw("rich", traj, rich, key="b", **dict(kw, tau=0.6))  # 0.5 or 0.6
    led = s.ledger("rich", rich)
    assert second.n_excluded == len(rich) // 2
    kept = set(second.release.private.users["uid"])
    assert kept == set(rich["uid"][rich["epsilon"] > 1])
    assert np.all(led.spent <= led.budget)
    np.testing.assert_allclose(led.spent, np.where(rich["epsilon"] > 1, 0.4 + 0.6, 0.4),
                               atol=1e-5)  # τ is snapped down to a multiple of 2^-20
    led.check()


def test_the_ledger_keeps_its_people_and_a_real_draw_takes_no_seed(pop):
    traj, _, prefs, _ = pop
    s = PopulationSession()
    s.ledger("pop", prefs)
    with pytest.raises(ParameterError, match="differ"):
        s.ledger("pop", prefs.assign(epsilon=prefs["epsilon"] * 2))
    assert s.ledger("pop", prefs.sample(frac=1.0, random_state=1)) is s.ledger("pop", prefs)
    with pytest.raises(ParameterError, match="no rng"):
        s.draw("pop", traj, prefs, key="x", rng=1, **_kw(pop))


def test_public_csv_holds_the_released_counts_only(pop):
    traj, _, prefs, grid = pop
    s = PopulationSession()
    d = s.draw("pop", traj, prefs, key="k", **_kw(pop))
    text = d.public_csv()
    frame = pd.read_csv(io.StringIO(text))
    assert list(frame.columns) == ["time", "row", "col", "lat", "lon", "count"]
    assert len(frame) == grid.n_bins * grid.n_cells  # every cell, not only the occupied ones
    np.testing.assert_array_equal(frame["count"].to_numpy(), d.release.counts.reshape(-1))
    for word in ("seed", "epsilon", "uid", "true"):
        assert word not in text
    assert frame["time"].iloc[0] == "2008-02-02T00:00:00Z"


# ----------------------------------------------------------------------------- randomness


def test_coins_and_noise_come_from_chacha20_keyed_by_the_master_key():
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

    key = bytes(range(32))
    derived = hashlib.blake2b(key + b"\x00coin\x00u7", digest_size=32).digest()
    stream = Cipher(algorithms.ChaCha20(derived, bytes(16)), mode=None).encryptor()
    words = np.frombuffer(stream.update(bytes(8 * 5)), dtype=np.uint64)
    np.testing.assert_array_equal(user_coins(key, "u7", 5), (words >> np.uint64(11)))
    src = keyed_source(key, b"noise")
    assert src.is_secure
    assert not np.array_equal(src.words(4), keyed_source(key, b"other").words(4))
    np.testing.assert_array_equal(keyed_source(key, b"noise").words(4),
                                  keyed_source(key, b"noise").words(4))


# ---------------------------------------------- issue 27: what the Population page shows and reads

from lmdk_core.errors import TrajectoryFormatError  # noqa: E402
from lmdk_core.population import (  # noqa: E402
    people_ids,
    read_population,
    with_own_budgets,
)


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 6), points=st.integers(2, 30), seed=st.integers(0, 10_000),
       tau=st.sampled_from([0.05, 0.3, 2.0]))
def test_people_counted_per_hour_are_clipped_released_values(n, points, seed, tau):
    """released_bin_totals(clamp_to=n): every hour in [0, n], equal to the released counts'
    own per-hour sum (computed independently from the public CSV) clipped to [0, n], and blind
    to the true counts (they may be anything: the result does not change)."""
    gen = np.random.default_rng(seed)
    traj = pd.DataFrame({
        "uid": np.repeat([f"p{i}" for i in range(n)], points),
        "time": pd.Timestamp("2008-02-02", tz="UTC")
        + pd.to_timedelta(np.sort(gen.integers(0, 86_400, n * points)), unit="s"),
        "lat": 39.9 + 0.05 * gen.random(n * points),
        "lon": 116.4 + 0.05 * gen.random(n * points)})
    grid = Grid.covering(start="2008-02-02", end="2008-02-03", cell_m=5000)
    prefs = draw_preferences(people_ids(traj), ICDE15_MIX, rng=seed)
    rel = release_population(traj, prefs, grid=grid, tau=tau, rng=seed)
    shown = rel.released_bin_totals(clamp_to=n)
    assert shown.min() >= 0 and shown.max() <= n
    assert (rel.private.true_counts.sum(axis=(1, 2)) <= n).all()  # why n bounds the truth
    public = pd.read_csv(io.StringIO(rel.public_csv()))
    per_hour = public.groupby("time", sort=True)["count"].sum().to_numpy()
    np.testing.assert_array_equal(shown, [min(max(int(v), 0), n) for v in per_hour])
    forged = type(rel)(rel.counts, rel.grid, rel.method, rel.scheme, rel.tau, rel.rule,
                       rel.engine, rel.private.__class__(
                           rel.private.true_counts * 0 + 99, rel.private.kept_counts,
                           rel.private.users, 0, 0))
    np.testing.assert_array_equal(forged.released_bin_totals(clamp_to=n), shown)


def test_clamping_to_the_true_count_would_be_caught():
    """A broken variant that clips to the true number present (private) differs from the
    public clip on a release where noise pushes an hour above the truth."""
    traj, places = generate_population(3, points_per_user=20, days=1, rng=2)
    grid = Grid.covering(start="2008-02-02", end="2008-02-03", cell_m=5000)
    prefs = draw_preferences(people_ids(traj), ICDE15_MIX, rng=2)
    rel = release_population(traj, prefs, grid=grid, places=places, tau=0.05, rng=2)
    totals = rel.released_bin_totals()
    broken = np.clip(totals, 0, rel.private.true_counts.sum(axis=(1, 2)))
    assert not np.array_equal(broken, rel.released_bin_totals(clamp_to=3))
    with pytest.raises(ParameterError):
        rel.released_bin_totals(clamp_to=-1)


@settings(max_examples=20, deadline=None)
@given(chosen=st.dictionaries(st.sampled_from([f"p{i}" for i in range(8)]),
                              st.floats(0.01, 50.0), max_size=8))
def test_own_budgets_replace_exactly_the_chosen_people(chosen):
    base = pd.DataFrame({"uid": [f"p{i}" for i in range(8)], "group": "moderate",
                         "epsilon": np.linspace(0.5, 2.0, 8)})
    out = with_own_budgets(base, chosen)
    got = dict(zip(out["uid"], out["epsilon"], strict=True))
    for i, row in base.iterrows():
        assert got[row["uid"]] == chosen.get(row["uid"], row["epsilon"])
        assert out.loc[i, "group"] == ("own choice" if row["uid"] in chosen else "moderate")
    assert base["epsilon"].tolist() == list(np.linspace(0.5, 2.0, 8))  # not changed in place


def test_own_budgets_refuse_strangers_and_bad_budgets():
    base = pd.DataFrame({"uid": ["ana", "bo"], "epsilon": [1.0, 1.0]})
    with pytest.raises(ParameterError, match=r"'u00000': not a person of this population.*"
                                             r"'ana'"):
        with_own_budgets(base, {"u00000": 1.0})
    for bad in (0.0, -1.0, float("nan"), 51.0):
        with pytest.raises(ParameterError, match="a budget must be a number"):
            with_own_budgets(base, {"bo": bad})


def test_read_population_reads_uploads_and_refuses_empty_ones(tmp_path):
    csv = (b"uid,time,lat,lon\nana,2008-02-02T01:00:00Z,39.9,116.4\n"
           b"bo,2008-02-02T02:00:00Z,39.91,116.41\n")
    up = io.BytesIO(csv)
    up.name = "mine.csv"
    frame = read_population(up)
    assert list(people_ids(frame)) == ["ana", "bo"] and len(frame) == 2
    frame.to_parquet(tmp_path / "mine.parquet")
    again = read_population(tmp_path / "mine.parquet")
    assert list(people_ids(again)) == ["ana", "bo"]
    empty = io.BytesIO(b"uid,time,lat,lon\n")
    empty.name = "empty.csv"
    with pytest.raises(TrajectoryFormatError, match=r"empty\.csv"):
        read_population(empty)


def test_read_population_passes_the_readers_progress_on():
    """An uploaded location history (in memory) tells its stages to ``progress`` — what the
    page's bar shows while a big file is read."""
    import json

    locs = [{"latitudeE7": 399_000_000 + i, "longitudeE7": 1_163_000_000 + i,
             "timestamp": f"2024-01-01T00:{i // 60:02d}:{i % 60:02d}Z"} for i in range(30)]
    up = io.BytesIO(json.dumps({"locations": locs}).encode())
    up.name = "Records.json"
    calls: list[tuple[str, int, int]] = []
    frame = read_population(up, progress=lambda *a: calls.append(a))
    assert len(frame) == 30
    assert "records" in {c[0] for c in calls} and calls[-1][1] <= calls[-1][2]
