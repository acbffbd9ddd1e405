"""The ``lmdk`` command line: invoked through its entry point (main(argv) and ``-m``'s runpy)."""

from __future__ import annotations

import json
import pathlib
import runpy
import sys
import tomllib

import pandas as pd
import pytest

import lmdk_core as lm
from lmdk_core.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    one = lm.time_slice(lm.select_user(lm.load_sample(), "alice"), "2024-03-07", "2024-03-07 12:00")
    path = d / "alice.csv"
    one[["uid", "time", "lat", "lon"]].to_csv(path, index=False)
    places = d / "places.geojson"
    places.write_text(json.dumps(lm.places_to_geojson([lm.Place("Home", 39.9925, 116.3395,
                                                                100)])))
    both = d / "two.csv"
    two = lm.load_sample()
    two = two[two["uid"].isin(["alice", "bob"])].groupby("uid").head(50)
    two[["uid", "time", "lat", "lon"]].to_csv(both, index=False)
    return path, places, both


def _no_leftovers(parent: pathlib.Path) -> None:
    assert not [p for p in parent.iterdir() if ".partial-" in p.name]


def test_release_writes_public_and_private_outputs(trace, tmp_path, capsys):
    path, places, _ = trace
    out = tmp_path / "out"
    code = main(["release", str(path), "--places", str(places), "--epsilon", "1",
                 "--scheme", "skip", "--out", str(out), "--seed", "3"])
    assert code == 0, capsys.readouterr().err
    # named as the app names them: allocation and ε (issue 27), never a seed
    csv_name, geo_name, report_name = (
        "lmdk_public_release_skip_eps1.csv", "lmdk_public_release_skip_eps1.geojson",
        "lmdk_PRIVATE_analysis_skip_eps1_DO_NOT_SHARE.json")
    assert sorted(p.name for p in out.iterdir()) == sorted([csv_name, geo_name, report_name])
    text = (out / csv_name).read_text()
    assert text.startswith("# lmdk simulation")  # --seed: labelled a simulation, not private
    pub = pd.read_csv(out / csv_name, comment="#")
    assert list(pub.columns) == ["time", "lat", "lon"]  # released fields only
    assert len(pub) and not pub.isna().any().any()  # only rows that carry a release
    geo = json.loads((out / geo_name).read_text())
    assert all(set(f["properties"]) == {"time"} for f in geo["features"])
    assert [f["properties"]["time"] for f in geo["features"]] == pub["time"].tolist()
    private = (out / report_name).read_text()
    rep = json.loads(private)
    assert next(iter(rep)) == "PRIVATE" and rep["lmdk"]["simulation"] is True
    assert "seed" not in rep["configuration"]["params"] and '"seed"' not in private
    assert [p["name"] for p in rep["places"]] == ["Home"]
    assert max(rep["series"]["guarantee"]) <= 1.0 + 1e-9
    _no_leftovers(tmp_path)


@pytest.mark.parametrize("argv, message", [
    (["--epsilon", "-1"], "epsilon must be > 0"),
    (["--epsilon", "nan"], "epsilon must be finite"),
    (["--epsilon", "1", "--scheme", "bogus"], "unknown scheme"),
    (["--epsilon", "1", "--radius-m", "0"], "radius_m must be > 0"),
])
def test_release_bad_input_exit_1_and_no_output(trace, tmp_path, capsys, argv, message):
    path, _, _ = trace
    out = tmp_path / "out"
    assert main(["release", str(path), "--out", str(out), *argv]) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("lmdk: error:") and message in err
    assert not out.exists()
    _no_leftovers(tmp_path)


def test_release_errors_name_the_problem(trace, tmp_path, capsys):
    _, _, both = trace
    assert main(["release", str(both), "--epsilon", "1", "--out", str(tmp_path / "o")]) == 1
    assert "holds 2 users; pick one with --user" in capsys.readouterr().err
    bad = tmp_path / "bad.csv"
    bad.write_text("uid,time,lat,lon\na,2024-01-01T00:00:00,123.4,116\n")
    assert main(["release", str(bad), "--epsilon", "1", "--out", str(tmp_path / "o")]) == 1
    assert "bad.csv line 2: latitude 123.4" in capsys.readouterr().err
    assert main(["release", str(tmp_path / "missing.csv"), "--epsilon", "1",
                 "--out", str(tmp_path / "o")]) == 1
    assert not (tmp_path / "o").exists()


def test_existing_output_is_never_overwritten(trace, tmp_path, capsys):
    path, _, _ = trace
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert main(["release", str(path), "--epsilon", "1", "--out", str(out)]) == 1
    assert "not an empty directory" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_population_release_with_progress(tmp_path, capsys):
    out = tmp_path / "pop"
    code = main(["population", "--generate", "40", "--points-per-user", "50", "--days", "1",
                 "--cell-m", "2000", "--out", str(out), "--seed", "1", "--progress"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "partitions: 1/1 (100%)" in captured.err and "noise" in captured.err
    counts = pd.read_csv(out / "counts.csv")
    meta = json.loads((out / "release.json").read_text())
    g = meta["grid"]
    assert len(counts) == g["n_bins"] * g["n_rows"] * g["n_cols"]
    assert list(counts.columns) == ["bin_start", "row", "col", "lat", "lon", "count"]
    text = (out / "release.json").read_text()
    assert "seed" not in text and "epsilon" not in text and meta["simulation"] is True
    users = pd.read_csv(out / "PRIVATE-users.csv")
    assert (users["PRIVATE"] == "do not publish").all() and len(users) == 40


def test_population_help_states_the_guarantee(capsys):
    """`lmdk population --help` says what holds: each person's own budget, for a record counted
    or not and moved to another cell (docs/personalised-dp.md §3; docs/claims.md)."""
    from lmdk_core.cli import POPULATION_GUARANTEE

    assert main(["population", "--help"]) == 0
    shown = "".join(capsys.readouterr().out.split())  # argparse wraps the text: compare unwrapped
    assert "".join(POPULATION_GUARANTEE.split()) in shown
    for words in ("in one cell or another", "at most e^(ε_u,t)", "by at most e^(ε_u)",
                  "noise of scale 2/τ"):
        assert words in POPULATION_GUARANTEE


def test_population_bad_preferences_fail_cleanly(tmp_path, capsys):
    prefs = tmp_path / "prefs.csv"
    prefs.write_text("uid,epsilon\nu00000,0.5\nu00001,zero\n")
    out = tmp_path / "pop"
    code = main(["population", "--generate", "5", "--points-per-user", "20", "--days", "1",
                 "--preferences", str(prefs), "--tau", "1", "--out", str(out), "--quiet"])
    assert code == 1
    assert "prefs.csv line 3: epsilon must be a finite number" in capsys.readouterr().err
    assert not out.exists()
    _no_leftovers(tmp_path)


def test_population_rule_without_public_mix_is_refused(tmp_path, capsys):
    prefs = tmp_path / "prefs.csv"
    prefs.write_text("uid,epsilon\n" + "".join(f"u{i:05d},0.5\n" for i in range(5)))
    code = main(["population", "--generate", "5", "--points-per-user", "20", "--days", "1",
                 "--preferences", str(prefs), "--out", str(tmp_path / "o"), "--quiet"])
    assert code == 1 and "needs public information" in capsys.readouterr().err


def test_population_dask_engine_from_partitioned_parquet(tmp_path):
    pytest.importorskip("dask")
    from lmdk_core.population import generate_population, write_partitioned

    traj, _ = generate_population(12, points_per_user=30, days=1, rng=3)
    pq = write_partitioned(traj, tmp_path / "pq", n_files=3)
    args = ["population", str(pq), "--start", "2008-02-02", "--end", "2008-02-03",
            "--cell-m", "3000", "--tau", "1", "--seed", "5", "--quiet"]
    assert main([*args, "--engine", "dask", "--out", str(tmp_path / "a")]) == 0
    traj.assign(uid=traj["uid"].astype(str)).to_csv(tmp_path / "t.csv", index=False)
    args[1] = str(tmp_path / "t.csv")
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    a = pd.read_csv(tmp_path / "a" / "counts.csv")
    b = pd.read_csv(tmp_path / "b" / "counts.csv")
    pd.testing.assert_frame_equal(a, b)  # same seed, same data: same release on both engines


def test_entry_point_declared_and_module_runs(capsys, monkeypatch):
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["lmdk"] == "lmdk_core.cli:main"
    assert main(["--help"]) == 0 and "population" in capsys.readouterr().out
    # `python -m lmdk_core.cli` runs main and exits with its code (a usage error's 2, not the 0
    # a dropped return value would give): runpy.run_module as __main__ is what `-m` runs, here
    # without a second interpreter's imports (~1.5 CPU-s); SystemExit's code is the exit status
    with pytest.warns(RuntimeWarning, match="found in sys.modules"), \
            pytest.raises(SystemExit) as done:
        monkeypatch.setattr(sys, "argv", ["lmdk", "release"])
        runpy.run_module("lmdk_core.cli", run_name="__main__", alter_sys=True)
    assert done.value.code == 2 and "required" in capsys.readouterr().err


def test_population_needs_a_public_time_window_and_valid_places(tmp_path, capsys):
    from lmdk_core.population import generate_population

    traj, places = generate_population(5, points_per_user=20, days=1, rng=1)
    traj.assign(uid=traj["uid"].astype(str)).to_csv(tmp_path / "t.csv", index=False)
    out = tmp_path / "o"
    assert main(["population", str(tmp_path / "t.csv"), "--tau", "1", "--out", str(out),
                 "--quiet"]) == 1
    assert "--start and --end" in capsys.readouterr().err  # never read off the data
    places.loc[2, "radius_m"] = -5
    places.to_csv(tmp_path / "p.csv", index=False)
    assert main(["population", str(tmp_path / "t.csv"), "--start", "2008-02-02", "--end",
                 "2008-02-03", "--places", str(tmp_path / "p.csv"), "--tau", "1", "--out",
                 str(out), "--quiet"]) == 1
    assert "p.csv: places row 3: " in capsys.readouterr().err
    assert not out.exists()


def test_population_uses_every_imported_place(tmp_path):
    from lmdk_core.population import generate_population

    traj, places = generate_population(5, points_per_user=60, days=1, rng=2)
    traj.assign(uid=traj["uid"].astype(str)).to_csv(tmp_path / "t.csv", index=False)
    places.assign(name="Home").to_csv(tmp_path / "p.csv", index=False)  # any names
    out = tmp_path / "o"
    assert main(["population", str(tmp_path / "t.csv"), "--start", "2008-02-02", "--end",
                 "2008-02-03", "--places", str(tmp_path / "p.csv"), "--tau", "1", "--cell-m",
                 "3000", "--out", str(out), "--seed", "1", "--quiet"]) == 0
    users = pd.read_csv(out / "PRIVATE-users.csv")
    assert (users["landmark_bins"] > 0).all()  # imported places are never filtered by name


def test_every_option_has_help_and_there_is_a_version(capsys):
    """Issue 29 item 5: 16 CLI options had no help text, and there was no `lmdk --version`."""
    import argparse

    from lmdk_core import __version__
    from lmdk_core.cli import build_parser, main

    parser = build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = [f"{name} {', '.join(a.option_strings) or a.dest}"
               for name, sp in [("lmdk", parser), *subs.choices.items()]
               for a in sp._actions
               if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
               and not a.help]
    assert missing == []
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"lmdk {__version__}"


def test_scheme_help_names_every_scheme():
    """`--scheme`'s help lists exactly the schemes the release functions accept (it once
    omitted reserve)."""
    import re

    import lmdk_core as lm
    from lmdk_core.cli import SCHEME_HELP

    named = [w for w in re.findall(r"[a-z]+", SCHEME_HELP.split("(")[0]) if w != "or"]
    assert sorted(named) == sorted(lm.SCHEMES)


def test_release_help_names_the_files_it_writes(capsys):
    """`lmdk release --help` names the files as export_file_name writes them (issue 27)."""
    from lmdk_core.export import export_file_name

    assert main(["release", "--help"]) == 0
    shown = "".join(capsys.readouterr().out.split())  # argparse wraps the text: compare unwrapped
    for kind, ext in (("public", "csv"), ("analysis", "json")):
        name = export_file_name(kind, "skip", ext, epsilon=0.5)
        assert name.replace("skip", "<scheme>").replace("0.5", "<ε>") in shown
    assert ".geojson(public)" in shown
