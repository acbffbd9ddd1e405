"""Data: bundled sample or uploaded files, user and time range, trajectory summary (sidebar)."""

from __future__ import annotations

import datetime as dt
import warnings
from typing import Any

import pandas as pd
import streamlit as st

from lmdk_core import sample
from lmdk_core import trajectory as tr
from lmdk_core.errors import LmdkError, LmdkWarning, TrajectoryFormatError
from lmdk_core.readers import read_trajectories
from lmdk_core.readers.source import stem

from . import compute, state
from .formatting import fmt_duration, plain_text

MAX_UPLOAD_MB = 200  # keep in step with server.maxUploadSize in .streamlit/config.toml
UPLOAD_KEY = "upload"
UPLOAD_ERROR_KEY = "upload_error"
"""Why the last upload could not be read: shown under the uploader in the sidebar (an error
above the map pushed it down, and the next map click took it away again: the page jumped)."""


def _load_sample() -> None:
    state.set_data(compute.sample_frame(), f"bundled sample ({sample.sample_path().name})",
                   files=[])


def uploader_key() -> str:
    """The uploader's widget key. It changes after a file could not be read, which empties the
    uploader: a bad file left in it would otherwise be read again with every later file."""
    version = st.session_state.get("upload_version", 0)
    return UPLOAD_KEY if version == 0 else f"{UPLOAD_KEY}_{version}"


def describe_files(names: list[str], *, shown: int = 3) -> str:
    """What was loaded, short enough for one line: the names of a few files, a count of many."""
    if len(names) <= shown:
        return ", ".join(names)
    return f"{len(names):,} files ({', '.join(names[:2])}, …)"


_STAGE_WORDS = {
    "reading": "{done} of {total} MB read",
    "parsing": "parsing {total} MB of JSON",
    "records": "{done} of {total} records",
    "segments": "{done} of {total} timeline segments",
    "signals": "{done} of {total} raw signals",
    "times": "times of {total} points",
}
_BYTE_STAGES = {"reading", "parsing"}


def progress_text(name: str, stage: str, done: int, total: int, *, index: int = 0,
                  count: int = 1) -> str:
    """What the upload progress bar says: the file (and which of how many), then the reader's
    stage in words with its counts (MB for bytes)."""
    which = f" ({index + 1:,} of {count:,})" if count > 1 else ""
    if stage in _BYTE_STAGES:
        d, t = f"{done / 2**20:,.1f}", f"{total / 2**20:,.1f}"
    else:
        d, t = f"{done:,}", f"{total:,}"
    words = _STAGE_WORDS.get(stage, stage + " {done} of {total}").format(done=d, total=t)
    return f"Reading {name}{which}: {words}"


class UploadProgress:
    """The sidebar's progress bar while uploaded files are read: file i of n, the reader's
    stage and counts (``read_trajectories(progress=...)``). Redrawn only when the text or the
    whole percent changes."""

    def __init__(self, count: int) -> None:
        self.count, self.index, self.name = count, 0, ""
        self._shown: tuple[int, str] | None = None
        self.bar = st.sidebar.progress(0.0, text=f"Reading {count:,} file"
                                       f"{'s' * (count > 1)}…")

    def file(self, index: int, name: str) -> None:
        self.index, self.name = index, name
        self(stage="reading", done=0, total=0)

    def __call__(self, stage: str, done: int, total: int) -> None:
        part = min(done / total, 1.0) if total else 0.0
        fraction = (self.index + part) / self.count
        text = progress_text(self.name, stage, done, total, index=self.index, count=self.count)
        if stage == "reading" and not total:
            text = f"Reading {self.name}…"
        key = (int(fraction * 100), text)
        if key != self._shown:
            self._shown = key
            self.bar.progress(fraction, text=plain_text(text))

    def close(self) -> None:
        self.bar.empty()


def _read(files: list[Any]) -> tuple[list[pd.DataFrame], list[str], dict[str, str], list[str]]:
    """Read each file on its own: the frames and names of the readable ones, a message per
    unreadable file (by name), and the library's repair warnings. A progress bar in the
    sidebar shows the file and the reader's progress."""
    frames: list[pd.DataFrame] = []
    names: list[str] = []
    failed: dict[str, str] = {}
    bar = UploadProgress(len(files))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LmdkWarning)
        for i, f in enumerate(files):
            f.seek(0)
            bar.file(i, f.name)
            try:
                frame = read_trajectories(f, progress=bar)
                if frame.empty:
                    raise TrajectoryFormatError("no points left after reading", source=f.name)
            except LmdkError as err:
                failed[f.name] = str(err) if f.name in str(err) else f"{f.name}: {err}"
                continue
            frames.append(frame)
            names.append(f.name)
    bar.close()
    _one_location_history(frames, names)
    repairs = [str(w.message) for w in caught if issubclass(w.category, LmdkWarning)]
    return frames, names, failed, repairs


LOCATION_HISTORY_UID = "location history"
"""The person of Google location-history files uploaded together (Records.json, Timeline.json,
Semantic Location History…): one Takeout is one person."""


def _one_location_history(frames: list[pd.DataFrame], names: list[str]) -> None:
    """Files of one upload that are Google location history (.json, person named after the file
    by the reader) are one person: give them one uid (in place). Other files keep theirs."""
    json_files = [i for i, n in enumerate(names) if n.lower().removesuffix(".gz").endswith(".json")
                  and set(frames[i]["uid"].unique()) <= {stem(n)}]
    if len(json_files) < 2:
        return
    for i in json_files:
        frames[i] = frames[i].assign(uid=LOCATION_HISTORY_UID)


def _on_upload() -> None:
    """Read the uploaded files. Readable files are loaded even when others are not; a file that
    cannot be read is reported once and taken out of the uploader (which is emptied), so it does
    not block the next upload. With no readable file the previous data stays. Places and
    settings are kept either way."""
    files = st.session_state.get(uploader_key()) or []
    if not isinstance(files, list):
        files = [files]
    if not files:
        return
    frames, loaded, failed, repairs = _read(files)
    if failed:
        state.empty_uploader()
    first = next(iter(failed.values()), "")
    if not frames:
        state.put(UPLOAD_ERROR_KEY, first if len(failed) == 1 else
                  f"None of the {len(failed)} files could be read; first: {first}")
        return
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if len(frames) > 1:  # the package's one (uid, time) sort, stable
        df = df.take(tr.time_order(df)[0]).reset_index(drop=True)
        # one person's fixes in two files (Records.json and Timeline.json): each once
        df = df.drop_duplicates(["uid", "time"], ignore_index=True)
    # repairs that dropped or skipped data (duplicate timestamps, unreadable files in a zip) are
    # shown on the page, not only in the server log
    skipped = [f"Skipped {len(failed)} of {len(files)} files that could not be read; "
               f"first: {first}"] if failed else []
    state.set_data(df, describe_files(loaded), files=loaded, warnings=skipped + repairs)
    state.put(UPLOAD_ERROR_KEY, None)
    # a later upload replaces this one rather than being read together with it
    state.empty_uploader()


def _on_source_change() -> None:
    state.put(UPLOAD_ERROR_KEY, None)
    if st.session_state.source == "Bundled sample":
        _load_sample()


def render() -> pd.DataFrame | None:
    """Draw the data controls; return the selected user's trajectory in the chosen time range."""
    if st.session_state.df is None:
        _load_sample()
    st.header("1 · Data")
    st.radio(
        "Trajectory source",
        ["Bundled sample", "Upload files"],
        key="source",
        on_change=_on_source_change,
        help="The bundled sample is synthetic (4 people over 5 days in Beijing, no real person). "
        "Uploaded files stay in this browser session only; nothing is sent anywhere else.",
    )
    if st.session_state.source == "Upload files":
        st.file_uploader(
            f"Trajectory files (CSV/TSV, GeoLife .plt, T-Drive .txt, GPX, Parquet, Google "
            f"location history .json, also .gz, or a .zip of these; ≤ {MAX_UPLOAD_MB} MB each)",
            accept_multiple_files=True,
            key=uploader_key(),
            on_change=_on_upload,
            help="Any format lmdk_core.read_trajectories understands. A file that cannot be read "
            "shows why (file, line, reason); the data and landmark places you had stay.",
        )
        if state.get(UPLOAD_ERROR_KEY):  # here, not above the map: nothing else moves
            st.error(plain_text(state.get(UPLOAD_ERROR_KEY)), icon="⚠️")
    df = st.session_state.df
    st.caption(f"Loaded: {plain_text(st.session_state.data_name)} — {len(df):,} points")
    names = st.session_state.get("data_files") or []
    if len(names) > 3:  # a GeoLife tree is ~100 files: a count, and the names on request
        with st.expander(f"{len(names):,} files loaded", expanded=False):
            st.text("\n".join(names))
    for message in st.session_state.get("load_warnings") or []:
        st.warning(plain_text(message), icon="⚠️")

    token = st.session_state.data_token
    data = (token, id(df))  # the loaded data: a new load makes a new token (state.set_data)
    user_list = _selection(data, "users", lambda: tr.users(df))
    uid = st.selectbox(
        "Person (uid)",
        user_list,
        key=f"uid_{token}",
        help="Trajectories are protected one person at a time: landmarks are that person's places.",
    )
    t0, t1 = _selection((data, uid), "person", lambda: _ends(tr.select_user(df, uid)))
    if t1 > t0:
        start, end = st.slider(
            "Time range (UTC)",
            min_value=t0,
            max_value=t1,
            value=(t0, t1),
            step=dt.timedelta(minutes=10),
            format="YYYY-MM-DD HH:mm",
            key=f"range_{st.session_state.data_token}_{uid}",
            help="Only points in this range are released and analysed. Shorter ranges are faster.",
        )
        traj = _selection((data, uid, start, end), "range", lambda: tr.time_slice(
            tr.select_user(df, uid), pd.Timestamp(start), pd.Timestamp(end)))
    else:
        traj = _selection((data, uid), "range", lambda: tr.select_user(df, uid))
    if len(traj) == 0:
        st.warning("No points in this time range; widen it.")
        return None
    s = compute.summary(compute.traj_key(token, traj), traj)
    st.markdown(
        f"**{s['n_points']:,} points** over **{fmt_duration(s['duration_s'])}**, "
        f"one every **{fmt_duration(s['median_interval_s'])}** (median)",
        help="Summary of the selection: number of timestamps, time from first to last point, "
        "median sampling interval.",
    )
    return traj


SELECTION_KEY = "data_selection"


def _selection(ck: Any, part: str, make: Any) -> Any:
    """``make()`` kept in this session while ``ck`` stays the same (:func:`state.kept_latest`,
    one per ``part``): the person list, the person's first and last time and the selection's
    points are worked out when the data, person or range change, not on every rerun (a map
    click changes none of them). Only the selection's frame is kept (not the person's whole
    trace beside it); the page never mutates it (every change makes a new frame)."""
    return state.kept_latest(f"{SELECTION_KEY}_{part}", ck, make)


def _ends(one: pd.DataFrame) -> tuple[dt.datetime, dt.datetime]:
    """The first and last time of one person's points."""
    return one["time"].iloc[0].to_pydatetime(), one["time"].iloc[-1].to_pydatetime()
