"""A real Dask cluster on this machine: a ``dask scheduler`` and two ``dask worker`` processes.

``lmdk population --scheduler`` (and ``$LMDK_DASK_SCHEDULER``) gives exactly the in-memory
release for the same seed; a worker killed in the middle of a release changes nothing (its
partitions are recomputed with the same keyed coins); Ctrl-C leaves no output. Marked
``cluster`` (deselect with ``-m "not cluster"``)."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
from interrupt import run_until_ctrl_c

if importlib.util.find_spec("distributed") is None:  # not imported here: every test process
    # collects this file, and only the one that runs it needs distributed (0.4 CPU-s to import)
    pytest.skip("could not import 'distributed'", allow_module_level=True)

from lmdk_core.cli import _scheduler, build_parser, main
from lmdk_core.errors import LmdkError
from lmdk_core.population import (
    ICDE15_MIX,
    Grid,
    draw_preferences,
    generate_population,
    release_population,
    write_partitioned,
)

pytestmark = pytest.mark.cluster
ROOT = pathlib.Path(__file__).resolve().parents[1]
DASK = pathlib.Path(sys.executable).with_name("dask")


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["DASK_DISTRIBUTED__WORKER__DAEMON"] = "False"
    # diagnostics only, none of which the tests read: the worker's statistical profiler (a
    # thread sampling every 10 ms), the event-loop tick watch (20 ms) and the system monitor
    # (500 ms) cost 0.07 CPU-s per second of the cluster's life, idle; 0.02 with these
    env["DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED"] = "False"
    env["DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL"] = "1s"
    env["DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL"] = "5s"
    return env


def scheduler_address(path: pathlib.Path, timeout_s: float = 30.0) -> str:
    """The address in the file ``dask scheduler --scheduler-file`` writes, once the file is
    whole. It exists before its text is in it: reading it as soon as it existed found it empty
    (JSONDecodeError) in a run with ``-n 3``, and can on any loaded machine."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return json.loads(path.read_text())["address"]
        except (OSError, ValueError, KeyError):  # not there yet, or not all written
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_the_scheduler_file_is_read_once_it_is_whole(tmp_path):
    """The race above, made certain: the file exists, empty, and is written 0.2 s later."""
    import threading

    path = tmp_path / "scheduler.json"
    path.write_text("")
    later = threading.Timer(0.2, path.write_text, ['{"address": "tcp://127.0.0.1:1"}'])
    later.start()
    try:
        assert scheduler_address(path, timeout_s=10) == "tcp://127.0.0.1:1"
    finally:
        later.join()
    path.write_text("")
    with pytest.raises(ValueError):  # never written: the error, after the time allowed
        scheduler_address(path, timeout_s=0.1)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """(address, client, worker processes, start_worker(name) -> process): started here,
    stopped by their own pids (also the workers a test starts)."""
    from distributed import Client

    d = tmp_path_factory.mktemp("cluster")
    sched_file = d / "scheduler.json"
    common = dict(cwd=str(d), env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs = [subprocess.Popen([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0",
                               "--no-dashboard", "--scheduler-file", str(sched_file)], **common)]

    def start_worker(name: str) -> subprocess.Popen:
        procs.append(subprocess.Popen(
            [str(DASK), "worker", "--scheduler-file", str(sched_file), "--nthreads", "1",
             "--no-nanny", "--no-dashboard", "--memory-limit", "1GiB", "--name", name,
             "--preload", "lmdk_core.population.dask_engine"],  # imports while we wait
            **common))
        return procs[-1]

    try:
        workers = [start_worker(f"w{i}") for i in range(2)]
        address = scheduler_address(sched_file)
        client = Client(address, timeout="30s", set_as_default=False)
        client.wait_for_workers(2, timeout=60)
        yield address, client, workers, start_worker
        client.close()
    finally:
        for p in reversed(procs):  # nothing to keep: stop at once
            if p.poll() is None:
                p.kill()
            p.wait(timeout=30)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    traj, places = generate_population(80, points_per_user=100, days=2, rng=8)
    d = tmp_path_factory.mktemp("pop")
    pq = write_partitioned(traj, d / "pq", n_files=4, row_group_rows=500)
    places = places[places["name"] == "other"]
    places.to_csv(d / "places.csv", index=False)
    return traj, places, pq, d


def _cli(args: list[str]) -> pd.DataFrame:
    assert main(args) == 0
    return pd.read_csv(pathlib.Path(args[args.index("--out") + 1]) / "counts.csv")


def test_cli_on_the_cluster_equals_memory(data, cluster, tmp_path, monkeypatch):  # data first:
    # the cluster idles less
    address, _, _, _ = cluster
    _, _, pq, d = data
    base = ["population", f"file://{pq}", "--places", str(d / "places.csv"), "--start",
            "2008-02-02", "--end", "2008-02-04", "--cell-m", "5000", "--seed", "3",
            "--partition-rows", "1500", "--quiet"]
    mem = _cli([*base, "--engine", "memory", "--out", str(tmp_path / "m")])
    on = _cli([*base, "--scheduler", address, "--out", str(tmp_path / "c")])
    pd.testing.assert_frame_equal(mem, on)
    monkeypatch.setenv("LMDK_DASK_SCHEDULER", address)  # the variable alone picks the cluster
    assert _scheduler(build_parser().parse_args([*base, "--out", "o"])) == ("dask", address)
    assert _scheduler(build_parser().parse_args([*base, "--engine", "memory", "--out", "o"])) \
        == ("memory", None)  # an explicit --engine memory wins over the variable
    users = pd.read_csv(tmp_path / "c" / "PRIVATE-users.csv")
    assert len(users) == 80
    assert main([*base, "--engine", "memory", "--scheduler", address,
                 "--out", str(tmp_path / "x")]) == 1  # contradictory flags: a clear error


def test_a_partition_cancelled_on_the_cluster_stops_the_release_clearly(cluster, data):
    """Someone cancels the release's partitions on the cluster (another client, a dashboard):
    an LmdkError saying so, not Dask's own exception, and nothing returned."""
    from distributed import Future

    _, client, _, _ = cluster
    traj, places, pq, _ = data
    prefs = draw_preferences(traj["uid"].astype(str).unique(), ICDE15_MIX, rng=1)
    grid = Grid.covering(start="2008-02-02", end="2008-02-04", cell_m=5000, bin_s=3600)
    cancelled = []

    def cancel_the_rest(stage: str, done: int, total: int) -> None:
        if stage == "partitions" and done == 1 and not cancelled:
            keys = client.run_on_scheduler(lambda dask_scheduler: [
                k for k, ts in dask_scheduler.tasks.items()
                if str(k).startswith("lmdk-partitions-") and ts.state != "memory"])
            cancelled.extend(keys)
            client.cancel([Future(k, client) for k in keys], force=True)

    with pytest.raises(LmdkError, match=r"cancelled a partition.*nothing was released"):
        release_population(f"file://{pq}", prefs, engine="dask", scheduler=client,
                           progress=cancel_the_rest, grid=grid, places=places, mix=ICDE15_MIX,
                           rng=21, partition_rows=600)
    assert cancelled


def test_killing_the_workers_mid_release_changes_nothing(cluster, data):
    """Runs last of the cluster's tests: it leaves one worker. Once the first partition is in,
    a new worker joins and both first workers are SIGKILLed, with most partitions still to
    run: every copy of what they held (the per-user tables and any results) is gone, as when
    the one worker holding a key dies (Dask's active memory manager keeps a single copy of a
    key that no task on another worker needs: this test failed now and then, with the
    partitions "cancelled", when those tables were scattered data, which cannot be recomputed).
    The new worker computes everything again, with the same keyed coins: the same release."""
    _, client, workers, start_worker = cluster
    traj, places, pq, _ = data
    prefs = draw_preferences(traj["uid"].astype(str).unique(), ICDE15_MIX, rng=1)
    grid = Grid.covering(start="2008-02-02", end="2008-02-04", cell_m=5000, bin_s=3600)
    kw = dict(grid=grid, places=places, mix=ICDE15_MIX, rng=21, partition_rows=600)
    ref = release_population(traj, prefs, **kw)  # undisturbed, in memory
    killed = []

    def kill_the_workers(stage: str, done: int, total: int) -> None:
        if stage == "partitions" and done == 1 and not killed:
            assert total > 4  # the kill happens with most partitions still to do
            start_worker("w2")
            client.wait_for_workers(3, timeout=60)
            for w in workers:
                w.send_signal(signal.SIGKILL)
                w.wait(timeout=10)
            killed.append(done)

    got = release_population(f"file://{pq}", prefs, engine="dask", scheduler=client,
                             progress=kill_the_workers, **kw)
    assert killed and all(w.poll() is not None for w in workers)
    assert [w["name"] for w in client.scheduler_info()["workers"].values()] == ["w2"]
    assert np.array_equal(ref.counts, got.counts)  # the same noisy counts, exactly
    assert np.array_equal(ref.private.kept_counts, got.private.kept_counts)
    pd.testing.assert_frame_equal(ref.private.users, got.private.users)


def test_ctrl_c_leaves_no_output(tmp_path, capsys, monkeypatch):
    """A real Ctrl-C (SIGINT under Python's default handler, as in a terminal: pytest-xdist
    workers ignore SIGINT) raised from the CLI's own progress call once the first partition is
    done, with the rest still to run: exit code 130, "lmdk: interrupted", no output and no
    ``.pop.partial*`` left. In this process, as test_cli_stream's Ctrl-C test: the memory engine
    calls progress in the main thread, where the interrupt surfaces from that call whichever
    process sends the signal; a separate interpreter (~1.5 CPU-s of imports) tested nothing
    more."""
    from lmdk_core import cli

    out = tmp_path / "pop"
    seen: list[tuple[int, int]] = []
    shown = cli.Progress.__call__

    def interrupt_after_first_partition(self, stage, done, total):
        shown(self, stage, done, total)
        if stage == "partitions" and done == 1 and not seen:
            seen.append((done, total))
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(cli.Progress, "__call__", interrupt_after_first_partition)
    # 40 users x 100 points in partitions of 1,000 rows: interrupted with 3 to go
    code = run_until_ctrl_c(main, ["population", "--generate", "40", "--points-per-user", "100",
                                   "--days", "2", "--partition-rows", "1000", "--cell-m",
                                   "5000", "--seed", "1", "--out", str(out)])
    rest = capsys.readouterr().err
    assert code == 130, rest
    assert seen and seen[0][0] < seen[0][1], seen  # mid-release: partitions still to run
    assert "interrupted" in rest
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".pop.partial")]
