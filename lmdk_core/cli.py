"""The ``lmdk`` command line for publishers.

* ``lmdk release TRACE --places P.geojson --epsilon 1 --scheme skip --out DIR`` — one person's
  trace → ``DIR/lmdk_public_release_skip_eps1.csv`` and ``….geojson`` (PUBLIC: time and released
  position, one row per timestamp that carries a release) and
  ``DIR/lmdk_PRIVATE_analysis_skip_eps1_DO_NOT_SHARE.json`` (budgets, landmarks, guarantee: keep
  it private); names from :func:`lmdk_core.export.export_file_name`.
* ``lmdk population DATA --out DIR`` — a population release (``DATA``: a trajectory file or
  directory, a Parquet directory partitioned by user, or ``--generate N`` synthetic users) →
  ``DIR/counts.csv`` and ``DIR/release.json`` (PUBLIC) and ``DIR/PRIVATE-users.csv``. Each
  person u gets their own budget ε_u, for u's data in a bin added, removed or moved to another
  cell (:data:`POPULATION_GUARANTEE`; docs/personalised-dp.md §3).
* ``lmdk attack TRACE --places P.geojson --epsilon 1`` — prints what an attacker learns from
  the public file (lmdk_core.attacks): per place, the distance of its guesses and its visit
  precision/recall over seeded simulated releases, read as they are and after smoothing them
  (free post-processing), against the raw trace and a data-free baseline. Nothing is released
  or written.
* ``lmdk app`` — starts the dashboard (``streamlit run`` on the installed ``lmdk_dashboard``
  package's ``app.py``; ``--dry-run`` prints the command instead; needs the ``app`` extra).
* ``lmdk evaluate`` — prints the error table: personalised vs Minimum vs Threshold vs
  user-level, per preference mix (synthetic population, simulation seeds).

Exit codes: 0 success, 1 bad input or failed run (message ``lmdk: error: ...`` on stderr),
2 bad command line, 130 interrupted (Ctrl-C). Warnings read ``lmdk: warning: ...``. Progress
(reading, the work, writing) is shown on a terminal, or anywhere with ``--progress`` (never with
``--quiet``). The output directory and the side files (``--places``, ``--preferences``) are
checked before any data is read; an unknown ``--user`` is answered with the file's users;
places that cover none of the points, and a release that holds no position, are warned about.
Outputs are written into a temporary directory next to ``--out`` and renamed into place only
when complete, so a failure or Ctrl-C leaves no partial output. ``lmdk release`` reads,
releases and writes in a stream: the input is parsed column-wise and the three files are
encoded a chunk of rows at a time (lmdk_core.export).
Without ``--seed`` every release draws fresh OS randomness; ``--seed`` is for simulations and
is never written to any output.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pathlib
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ._version import __version__
from .errors import LmdkError, ParameterError
from .export import DEFAULT_CHUNK_ROWS

SCHEME_HELP = "event, user, uniform, skip, adaptive, reserve, bd or ba (default skip)"
"""Help of ``--scheme`` (typed: importing lmdk_core.schemes would load numba on every CLI start;
tests/test_cli.py checks it names exactly lmdk_core.SCHEMES)."""

__all__ = ["main"]


class Progress:
    """Progress on stderr: a redrawn bar on a terminal, a line per stage otherwise."""

    def __init__(self, enabled: bool, stream: Any = None):
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last: tuple[str, int] | None = None
        self.t0 = time.perf_counter()

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        pct = int(100 * done / total) if total else 100
        if self.tty:
            bar = "#" * (pct // 5)
            self.stream.write(f"\r{stage:<10} [{bar:<20}] {pct:3d}% ({done:,}/{total:,})")
            if done >= total:
                self.stream.write("\n")
        elif self._last is None or self._last[0] != stage or pct >= self._last[1] + 25 \
                or done >= total:
            self.stream.write(f"{stage}: {done}/{total} ({pct}%) "
                              f"{time.perf_counter() - self.t0:.1f}s\n")
            self._last = (stage, pct)
        self.stream.flush()

    def note(self, text: str) -> None:
        if self.enabled:
            self.stream.write(text + "\n")
            self.stream.flush()


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def _check_output(out: pathlib.Path) -> None:
    """Refuse an output that exists and is not an empty directory, or whose nearest existing
    parent is not a writable directory (checked before any work)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ParameterError(f"{out}: output exists and is not an empty directory")
    parent = out.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ParameterError(f"{out}: cannot create the output ({parent} is not a directory)")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ParameterError(f"{out}: cannot create the output ({parent} is not writable)")


def _atomic_output(out: pathlib.Path, write: Callable[[pathlib.Path], None]) -> None:
    """Run ``write(tmp_dir)`` and move the complete directory to ``out`` (never partial: on an
    error or Ctrl-C the temporary directory is removed, with Ctrl-C held off while it is)."""
    _check_output(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        write(tmp)
        if out.exists():
            out.rmdir()
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            main_thread = threading.current_thread() is threading.main_thread()
            held = signal.signal(signal.SIGINT, signal.SIG_IGN) if main_thread else None
            try:
                shutil.rmtree(tmp, ignore_errors=True)
            finally:
                if main_thread:
                    signal.signal(signal.SIGINT, held)


def _show_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
                  line: str | None = None) -> None:
    """Warnings as ``lmdk: warning: <message>`` (no source path or Python class name)."""
    (file or sys.stderr).write(f"lmdk: warning: {message}\n")


def _listing(names: Sequence[Any], limit: int = 10) -> str:
    shown = ", ".join(repr(str(n)) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _seed(args: argparse.Namespace) -> int | None:
    return args.seed


# ----------------------------------------------------------------------------- release


def _free_arrow_memory() -> None:
    """Return memory Arrow's allocator keeps after parsing (the release runs next)."""
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        return
    pa.default_memory_pool().release_unused()


def _check_file(path: str, option: str) -> pathlib.Path:
    """``path`` given to ``option`` as an existing regular file (else a clear ParameterError)."""
    p = pathlib.Path(path)
    if not p.is_file():
        raise ParameterError(f"{option} {path}: no such file" if not p.exists()
                             else f"{option} {path}: not a file")
    return p


def _release_places(path: str | None) -> tuple[list, Any]:
    """(places, frame) of a ``--places`` GeoJSON file; a missing file is a clear error."""
    import lmdk_core as lm

    if not path:
        return [], None
    places = lm.places_from_geojson(_check_file(path, "--places").read_bytes(), source=str(path))
    return places, (lm.places_to_frame(places) if places else None)


def _pick_user(args: argparse.Namespace, ids: Sequence[Any]) -> Any:
    """The ``--user`` of a trajectory file, or its only user; otherwise an error listing them."""
    if args.user is None:
        if len(ids) != 1:
            raise ParameterError(f"{args.input} holds {len(ids)} users; pick one with --user "
                                 f"(users: {_listing(ids)})")
        return ids[0]
    if args.user not in ids:
        raise ParameterError(f"{args.input}: no user {args.user!r}; its users: {_listing(ids)}")
    return args.user


def _warn_uncovered(n_places: int, path: str, mask: Any, n_points: int, uid: Any) -> None:
    """A plain warning when the places of ``path`` make no timestamp a landmark."""
    if n_places and not np.any(mask):
        warnings.warn(f"the {n_places} place(s) in {path} cover none of the {n_points:,} points "
                      f"of user {uid!r}: no timestamp is a landmark, so the release protects "
                      "none", stacklevel=1)


def _cmd_release(args: argparse.Namespace, progress: Progress) -> None:
    import lmdk_core as lm
    from lmdk_core import export
    from lmdk_core.validation import check_epsilon, check_positive

    check_epsilon(args.epsilon)  # refuse bad parameters before reading any data
    check_positive(args.radius_m, "radius_m")
    if args.scheme not in lm.SCHEMES:
        raise ParameterError(f"unknown scheme {args.scheme!r}; valid schemes: "
                             f"{', '.join(lm.SCHEMES)}")
    out = pathlib.Path(args.out)
    _check_output(out)
    places, place_frame = _release_places(args.places)
    progress.note(f"reading {args.input}")
    traj = lm.read_trajectories(args.input, progress=progress)
    uid = _pick_user(args, lm.users(traj))
    one = lm.select_user(traj, uid)[["time", "lat", "lon"]]  # what the release reads
    del traj
    _free_arrow_memory()
    mask = lm.landmark_mask(one, place_frame) if places else None
    _warn_uncovered(len(places), args.places, mask, len(one), uid)
    progress("release", 0, 1)
    rel = lm.release_locations(one, mask, epsilon=args.epsilon, scheme=args.scheme,
                               radius_m=args.radius_m, rng=_seed(args))
    progress("release", 1, 1)
    if len(one) and not export.released_rows(rel).any():
        warnings.warn(f"the {args.scheme} release of user {uid!r} holds no position (every "
                      "point is a landmark, and the scheme releases nothing before its first "
                      "non-landmark point): the public files have a header and no row",
                      stacklevel=1)
    guarantee = lm.landmark_guarantee(rel.budget, rel.landmarks)
    metrics = {"mae_m": lm.mae_metres(one, rel)}
    del one

    names = _release_file_names(rel, args.epsilon)

    def write(d: pathlib.Path) -> None:
        # public files hold only time and the released location (lmdk_core.export)
        with open(d / names["csv"], "wb") as csv, open(d / names["geojson"], "wb") as geo:
            export.write_release_files(rel, csv=csv, geojson=geo, chunk_rows=args.chunk_rows,
                                       progress=progress)
        report = export.privacy_report(
            release=rel, epsilon=args.epsilon, guarantee=guarantee, places=places,
            settings={"input": str(args.input), "user": uid, "scheme": args.scheme,
                      "radius_m": args.radius_m},
            metrics=metrics, as_arrays=True)
        with open(d / names["report"], "wb") as fh:
            export.write_report_json(report, fh, chunk_rows=args.chunk_rows)
        progress("report", 1, 1)

    _atomic_output(out, write)
    progress.note(f"wrote {out / names['csv']}, {names['geojson']} (public) and "
                  f"{names['report']} (private)")


def _release_file_names(rel: Any, epsilon: float) -> dict[str, str]:
    """The three files of ``lmdk release``, named by allocation and ε (as the app names them)."""
    from lmdk_core import export

    alloc = export.allocation_name(rel)
    return {"csv": export.export_file_name("public", alloc, "csv", epsilon=epsilon),
            "geojson": export.export_file_name("public", alloc, "geojson", epsilon=epsilon),
            "report": export.export_file_name("analysis", alloc, "json", epsilon=epsilon)}


# ----------------------------------------------------------------------------- population

POPULATION_GUARANTEE = (
    "Counts per grid cell x time bin for many people, each person u with their own budget "
    "ε_u (--preferences, else drawn from --mix) and their own landmark places. Whatever u's "
    "data in one time bin — counted or not, in one cell or another — it changes the "
    "probability of any release by a factor of at most e^(ε_u,t), u's own budget for that "
    "bin; over u's landmark bins and any one more bin, by at most e^(ε_u) (schemes skip, "
    "uniform and user; event is the non-landmark baseline). Every count carries exact discrete "
    "Laplace noise of scale 2/τ (a record moved to another cell changes two counts). Without "
    "--seed every release draws fresh OS randomness."
)


def _parse_bbox(text: str) -> tuple[float, float, float, float]:
    try:
        vals = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise ParameterError(f"--bbox must be lat_min,lat_max,lon_min,lon_max, got {text!r}") \
            from None
    if len(vals) != 4:
        raise ParameterError(f"--bbox must be 4 numbers, got {text!r}")
    return vals[0], vals[1], vals[2], vals[3]


def _tau(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


def _load_population(args: argparse.Namespace, progress: Progress
                     ) -> tuple[Any, pd.DataFrame | None]:
    from lmdk_core import population as P

    if args.generate:
        progress.note(f"generating {args.generate} synthetic users")
        traj, places = P.generate_population(args.generate, points_per_user=args.points_per_user,
                                             days=args.days, rng=args.data_seed)
        return traj, places
    if args.input is None:
        raise ParameterError("give an input file/directory or --generate N")
    if _is_parquet_source(args.input):  # read partition by partition by either engine
        return args.input, None
    path = pathlib.Path(args.input)
    progress.note(f"reading {path}")
    return P.read_population(path, progress=progress), None  # the Population page's reader


def _is_parquet_source(text: str) -> bool:
    """A URL (``s3://``, ``file://``, ``memory://`` …), a Parquet file or a directory of them."""
    if "://" in text:
        return True
    path = pathlib.Path(text)
    return path.suffix == ".parquet" or (path.is_dir() and any(path.glob("*.parquet")))


def _scheduler(args: argparse.Namespace) -> tuple[str, str | None]:
    """(engine, Dask scheduler address): --scheduler, else $LMDK_DASK_SCHEDULER unless
    --engine memory; a scheduler implies engine dask."""
    from lmdk_core.population.dask_engine import SCHEDULER_ENV

    if args.scheduler and args.engine == "memory":
        raise ParameterError("--scheduler needs --engine dask")
    address = args.scheduler or (os.environ.get(SCHEDULER_ENV) or None
                                 if args.engine != "memory" else None)
    return args.engine or ("dask" if address else "memory"), address


def _read_places(path: str) -> pd.DataFrame:
    """uid, lat, lon, radius_m[, name] per row; problems name the file."""
    from lmdk_core.population.core import places_by_user

    try:
        df = pd.read_csv(_check_file(path, "--places"), dtype={"uid": str})
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ParameterError(f"{path}: not a readable CSV ({str(exc).splitlines()[0]})") \
            from None
    try:
        places_by_user(df)
    except ParameterError as exc:
        raise ParameterError(f"{path}: {exc}") from None
    return df


def _cmd_population(args: argparse.Namespace, progress: Progress) -> None:
    engine, scheduler = _scheduler(args)
    if scheduler is None:
        _population(args, progress, engine, None)
        return
    from lmdk_core.population.dask_engine import open_client

    client = open_client(scheduler)  # one connection for the whole command
    try:
        _population(args, progress, engine, client)
    finally:
        client.close()


def _population(args: argparse.Namespace, progress: Progress, engine: str,
                scheduler: Any) -> None:
    from lmdk_core import population as P

    out = pathlib.Path(args.out)
    _check_output(out)  # the output and the side files first, before any data is read
    imported = _read_places(args.places) if args.places else None
    prefs = (P.read_preferences(_check_file(args.preferences, "--preferences"))
             if args.preferences else None)
    data, gen_places = _load_population(args, progress)
    if gen_places is not None and args.landmark_kinds:  # synthetic places: pick the kinds
        gen_places = gen_places[gen_places["name"].isin(args.landmark_kinds.split(","))]
    places = imported if imported is not None else gen_places  # imported: all used
    if args.suggest_places:
        if isinstance(data, str):
            raise ParameterError("--suggest-places needs the trajectories in memory "
                                 "(not a Parquet directory or URL)")
        progress.note("suggesting each user's places from their own stays")
        places = P.suggest_user_places(data, top=args.suggest_places)
    mix = P.MIXES[args.mix]
    if prefs is None:
        from lmdk_core.population.dask_engine import distinct_users

        uids = distinct_users(data, scheduler=scheduler, max_rows=args.partition_rows)
        prefs = P.draw_preferences(uids, mix, rng=None if args.seed is None else args.seed + 1)
    if args.generate:  # synthetic data: its time window is public by construction
        start = args.start or "2008-02-02"
        end = args.end or pd.Timestamp(start) + pd.Timedelta(days=args.days)
    elif not (args.start and args.end):
        # the grid must not be read off the data (the first/last times are private)
        raise ParameterError("give the public time window with --start and --end")
    else:
        start, end = args.start, args.end
    grid = P.Grid.covering(bbox=_parse_bbox(args.bbox), cell_m=args.cell_m, start=start,
                           end=end, bin_s=args.bin_s)
    public_mix = mix if not args.preferences else None
    progress.note(f"grid {grid.n_rows}x{grid.n_cols} cells x {grid.n_bins} bins; "
                  f"method {args.method}, engine {engine}"
                  + (f" on the Dask cluster at {scheduler.scheduler.address}"
                     if scheduler is not None else ""))
    rel = P.release_population(
        data, prefs, grid=grid, places=places, scheme=args.scheme, method=args.method,
        tau=_tau(args.tau), mix=public_mix, epsilon_floor=args.epsilon_floor,
        engine=engine, rng=args.seed, progress=progress, scheduler=scheduler,
        partition_rows=args.partition_rows)
    users = rel.private.users
    if places is not None and len(places) and not (users["landmark_bins"] > 0).any():
        warnings.warn(f"the {len(places):,} place(s) cover none of the points of the "
                      f"{len(users):,} users: no time bin is a landmark, so the release "
                      "protects none", stacklevel=1)

    def write(d: pathlib.Path) -> None:
        b, r, c = np.indices(grid.shape).reshape(3, -1)
        lat_c, lon_c = grid.cell_centres()
        starts = lm_iso(grid.bin_starts())
        progress("write", 0, 3)
        pd.DataFrame({"bin_start": starts[b], "row": r, "col": c, "lat": lat_c[r],
                      "lon": lon_c[c], "count": rel.counts.ravel()}).to_csv(
            d / "counts.csv", index=False, lineterminator="\n")
        progress("write", 1, 3)
        meta = rel.public_metadata() | {"simulation": args.seed is not None,
                                        "released_bin_totals":
                                            rel.released_bin_totals().tolist()}
        (d / "release.json").write_text(json.dumps(meta, indent=1))
        progress("write", 2, 3)
        private = users.copy()
        private.insert(0, "PRIVATE", "do not publish")
        private.to_csv(d / "PRIVATE-users.csv", index=False, lineterminator="\n")
        progress("write", 3, 3)

    _atomic_output(out, write)
    progress.note(f"wrote {args.out}/counts.csv, release.json (public) and PRIVATE-users.csv "
                  "(private)")


def lm_iso(times: Any) -> np.ndarray:
    from .export import iso_utc

    return iso_utc(times)


# ----------------------------------------------------------------------------- evaluate


def _cmd_evaluate(args: argparse.Namespace, progress: Progress) -> None:
    from lmdk_core.population.evaluate import error_table, format_table

    table = error_table(n_users=args.users, points_per_user=args.points_per_user,
                        mixes=args.mixes.split(","), scheme=args.scheme, cell_m=args.cell_m,
                        repeats=args.repeats, rng=args.seed or 0, progress=progress)
    sys.stdout.write(format_table(table) + "\n\n")
    from lmdk_core.population.evaluate import ledger_dropout

    drop = ledger_dropout(n_users=min(args.users, 300), points_per_user=args.points_per_user,
                          rng=args.seed or 0)
    sys.stdout.write("Ledger drop-out over daily queries (excluded_true and counted_total are "
                     "private, shown for evaluation only)\n" + drop.to_string(index=False) + "\n")


# ----------------------------------------------------------------------------- attack


def _cmd_attack(args: argparse.Namespace, progress: Progress) -> None:
    """What an attacker learns from the public file: the table of lmdk_core.attacks over
    seeded simulated releases (nothing is released or written)."""
    import lmdk_core as lm
    from lmdk_core import attacks

    rs = lm.ReleaseSettings(epsilon=args.epsilon, scheme=args.scheme, radius_m=args.radius_m)
    places, place_frame = _release_places(args.places)  # before the data is read
    progress.note(f"reading {args.input}")
    traj = lm.read_trajectories(args.input, progress=progress)
    uid = _pick_user(args, lm.users(traj))
    one = lm.select_user(traj, uid)
    del traj
    _warn_uncovered(len(places), args.places,
                    lm.landmark_mask(one, place_frame) if places else None, len(one), uid)
    progress("attack", 0, 1)
    rep = attacks.attack_report(one, places, settings=rs,
                                rng=args.seed, draws=args.draws, utc_offset_h=args.utc_offset_h)
    progress("attack", 1, 1)
    table = rep.table()  # a place the attack never says yes to: NaN precision, no warning
    sentences = attacks.place_sentences(rep) + attacks.guarantee_sentences(rep)
    metres = [c for c in table.columns if c.endswith("_m")]
    table[metres] = table[metres].round(0)
    shares = [c for c in table.columns if "precision" in c or "recall" in c]
    table[shares] = table[shares].round(2)
    near = rep.distances()
    near[list(attacks.DISTANCE_COLUMNS)] = near[list(attacks.DISTANCE_COLUMNS)].round(0)
    sys.stdout.write(f"Attacks on {rep.draws} simulated releases (seed {args.seed}; never a real "
                     f"release): ε = {args.epsilon:g}, r = {args.radius_m:g} m, scheme "
                     f"{args.scheme}\n")
    sys.stdout.write("Median distance (m) from each place to the attacker's nearest guess; "
                     "'shown': the attacker the sentences below use\n")
    sys.stdout.write(near.to_string(index=False) + "\n\n")
    sys.stdout.write("Every figure, one column per place (release_*: reading the file as it is; "
                     "smoothed_*: after smoothing it)\n")
    sys.stdout.write(table.set_index("place").T.to_string() + "\n\n")
    for text in sentences:
        sys.stdout.write(text.replace("**", "") + "\n")


APP_PACKAGE = "lmdk_dashboard"
"""The installed name of the Streamlit app (the repository's ``dashboard/``, see pyproject.toml)."""


def app_path() -> pathlib.Path:
    """The dashboard's entry script: ``app.py`` of the installed :data:`APP_PACKAGE` (in an
    editable install, the repository's ``dashboard/app.py``), found without importing it."""
    spec = importlib.util.find_spec(APP_PACKAGE)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        script = pathlib.Path(folder) / "app.py"
        if script.is_file():
            return script
    raise LmdkError(f"the dashboard package {APP_PACKAGE} is not installed (pip install lmdk)")


def _cmd_app(args: argparse.Namespace, progress: Progress) -> None:
    cmd = [sys.executable, "-m", "streamlit", "run", str(app_path()),
           "--server.port", str(args.port)]
    if args.dry_run:
        sys.stdout.write(shlex.join(cmd) + "\n")
        return
    if importlib.util.find_spec("streamlit") is None:
        from ._optional import missing_extra

        raise missing_extra("streamlit", "app", "lmdk app")
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":  # become streamlit: signals (Ctrl-C, kill) reach it, no orphan
        os.execv(sys.executable, cmd)
    code = subprocess.call(cmd)  # elsewhere: wait for it; Ctrl-C reaches it too
    if code:
        raise LmdkError(f"streamlit exited with code {code}")


# ----------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--quiet", action="store_true", default=argparse.SUPPRESS,
                        help="no progress output")
    common.add_argument("--progress", action="store_true", default=argparse.SUPPRESS,
                        help="show progress even when stderr is not a terminal")
    p = argparse.ArgumentParser(prog="lmdk", description="Landmark privacy for publishers.",
                                parents=[common])
    p.add_argument("--version", action="version", version=f"lmdk {__version__}",
                   help="print the installed lmdk version and exit")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("release", help="release one person's trace", parents=[common])
    r.add_argument("input", help="trajectory file (CSV, GPX, GeoLife, T-Drive, Parquet)")
    r.add_argument("--places", help="landmark places (GeoJSON, as exported by the app)")
    r.add_argument("--user", help="user id when the file holds several people")
    r.add_argument("--epsilon", type=float, required=True, help="total budget ε > 0")
    r.add_argument("--scheme", default="skip", help=SCHEME_HELP)
    r.add_argument("--radius-m", type=float, default=200.0, help="protection radius (metres)")
    r.add_argument("--out", required=True,
                   help="output directory (must not exist or be empty); it receives "
                        "lmdk_public_release_<scheme>_eps<ε>.csv and .geojson (public) and "
                        "lmdk_PRIVATE_analysis_<scheme>_eps<ε>_DO_NOT_SHARE.json")
    r.add_argument("--seed", type=int, help="simulation only: reproducible noise (never saved)")
    r.add_argument("--chunk-rows", type=_positive_int, default=DEFAULT_CHUNK_ROWS,
                   help="rows encoded at once while writing: memory vs speed, same bytes "
                        f"(default {DEFAULT_CHUNK_ROWS})")

    q = sub.add_parser("population", help="release counts per cell x time bin for many people",
                       description=POPULATION_GUARANTEE, parents=[common])
    q.add_argument("input", nargs="?", help="trajectories: a file or directory, or Parquet "
                                           "partitioned by user (file, directory or fsspec URL "
                                           "such as s3://bucket/points/)")
    q.add_argument("--generate", type=int, help="use N synthetic users instead of a file")
    q.add_argument("--points-per-user", type=int, default=200,
                   help="with --generate: location fixes per synthetic user (default 200)")
    q.add_argument("--days", type=int, default=7,
                   help="with --generate: days the synthetic data spans (default 7)")
    q.add_argument("--data-seed", type=int, default=0, help="seed of the synthetic data")
    q.add_argument("--preferences",
                   help="CSV uid,epsilon: each person's own budget ε_u (else drawn from --mix)")
    q.add_argument("--mix", default="icde15", choices=["icde15", "liberal-heavy", "even",
                                                       "all-conservative"],
                   help="public mix of personal budgets the ε_u are drawn from when no "
                        "--preferences are given (default icde15: 54/37/9 %% conservative/"
                        "moderate/liberal)")
    q.add_argument("--places", help="CSV uid,lat,lon,radius_m[,name] of landmark places")
    q.add_argument("--suggest-places", type=int, metavar="K",
                   help="landmarks = each user's K longest stays (instead of --places)")
    q.add_argument("--landmark-kinds", default="other",
                   help="with --generate: synthetic place kinds used as landmarks "
                        "(home,work,other; default: other)")
    q.add_argument("--scheme", default="skip", choices=["event", "user", "uniform", "skip"],
                   help="how each person's ε_u is spread over their time bins (default skip)")
    q.add_argument("--method", default="personalised",
                   choices=["personalised", "threshold", "minimum", "user_level"],
                   help="personalised (Sample mechanism, the default) or a baseline: threshold "
                        "(drop those below τ), minimum (everyone at the floor), user_level")
    q.add_argument("--tau", default="mean",
                   help="threshold τ in budget units (noise scale 2/τ): a number, or a rule on "
                        "the public mix: mean, median, quantile:q, min_error")
    q.add_argument("--epsilon-floor", type=float, help="public minimum ε (Minimum, user-level)")
    q.add_argument("--cell-m", type=float, default=500.0,
                   help="side of the public grid's cells in metres (default 500)")
    q.add_argument("--bin-s", type=int, default=3600,
                   help="length of a time bin in seconds (default 3600)")
    q.add_argument("--bbox", default="39.70,40.15,116.10,116.70",
                   help="public box lat_min,lat_max,lon_min,lon_max")
    q.add_argument("--start", help="public start time (UTC)")
    q.add_argument("--end", help="public end time (UTC)")
    q.add_argument("--engine", choices=["memory", "dask"],
                   help="memory (default: partitions one at a time here) or dask (partitions on "
                        "a Dask cluster; the default when a scheduler is given)")
    q.add_argument("--scheduler", metavar="ADDRESS",
                   help="Dask scheduler address, e.g. tcp://host:8786 (default: "
                        "$LMDK_DASK_SCHEDULER; without one, engine dask uses threads here)")
    q.add_argument("--partition-rows", type=int, default=1_000_000,
                   help="points per partition of whole users (memory per partition; default "
                        "1000000)")
    q.add_argument("--out", required=True,
                   help="output directory (must not exist or be empty)")
    q.add_argument("--seed", type=int, help="simulation only: reproducible noise (never saved)")

    a = sub.add_parser("attack", help="print what an attacker learns from simulated releases",
                       parents=[common])
    a.add_argument("input", help="trajectory file (CSV, GPX, GeoLife, T-Drive, Parquet)")
    a.add_argument("--places", required=True,
                   help="the places to attack (GeoJSON, as exported by the app)")
    a.add_argument("--user", help="user id when the file holds several people")
    a.add_argument("--epsilon", type=float, required=True, help="total budget ε > 0")
    a.add_argument("--scheme", default="skip", help=SCHEME_HELP)
    a.add_argument("--radius-m", type=float, default=200.0, help="protection radius (metres)")
    a.add_argument("--draws", type=int, default=20, help="simulated releases (default 20)")
    a.add_argument("--seed", type=int, default=0,
                   help="seed of the simulated releases (default 0; nothing is released)")
    a.add_argument("--utc-offset-h", type=float,
                   help="local time offset (hours) the attacker assumes (default: from the "
                        "released longitudes)")

    s = sub.add_parser("app", help="start the dashboard in the browser (needs lmdk[app])",
                       parents=[common])
    s.add_argument("--port", type=_positive_int, default=8501,
                   help="local port of the dashboard (default 8501)")
    s.add_argument("--dry-run", action="store_true",
                   help="print the streamlit command (with the installed app's path) and exit")

    e = sub.add_parser("evaluate", help="print the error table of the population methods",
                       parents=[common])
    e.add_argument("--users", type=int, default=1000,
                   help="synthetic users (default 1000)")
    e.add_argument("--points-per-user", type=int, default=200,
                   help="location fixes per synthetic user (default 200)")
    e.add_argument("--mixes", default="icde15,liberal-heavy,even,all-conservative",
                   help="comma-separated budget mixes to evaluate")
    e.add_argument("--scheme", default="skip", choices=["event", "user", "uniform", "skip"],
                   help="how each person's ε_u is spread over their time bins (default skip)")
    e.add_argument("--cell-m", type=float, default=1000.0,
                   help="side of the public grid's cells in metres (default 1000)")
    e.add_argument("--repeats", type=int, default=3,
                   help="simulated releases per method (default 3)")
    e.add_argument("--seed", type=int, default=0,
                   help="simulation seed of the evaluation (a simulation: nothing is released)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (see module docstring)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: 2 on bad usage, 0 for --help
        return int(exc.code or 0)
    shown = getattr(args, "progress", False) or bool(getattr(sys.stderr, "isatty", bool)())
    progress = Progress(shown and not getattr(args, "quiet", False))
    commands = {"release": _cmd_release, "population": _cmd_population,
                "evaluate": _cmd_evaluate, "attack": _cmd_attack, "app": _cmd_app}
    try:
        with warnings.catch_warnings():  # the filters stay Python's; only the format changes
            warnings.showwarning = _show_warning
            commands[args.command](args, progress)
    except LmdkError as exc:
        sys.stderr.write(f"lmdk: error: {exc}\n")
        return 1
    except (OSError, ValueError, KeyError) as exc:
        sys.stderr.write(f"lmdk: error: {type(exc).__name__}: {exc}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("lmdk: interrupted\n")
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
