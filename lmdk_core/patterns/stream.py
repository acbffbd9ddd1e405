"""Event streams of many data subjects: public ticks and typed events at those ticks.

The model (docs/pattern-level-dp.md §1) follows the seed notes: a data stream d_1, d_2, ... is
turned into an event stream by converting the data at each timestamp into events. A
:class:`EventStream` therefore holds

* **ticks** — the data timestamps of every user (``tick_uid``, ``tick_time``), sorted by user
  then time, strictly increasing per user. Ticks are *public*: pattern-level neighbours differ
  only in which events occur, never in when data was sampled;
* **events** — at most one event per (tick, type): ``tick`` (index into the ticks), ``etype``
  (index into ``types``) and an optional location ``lat``/``lon`` in degrees (NaN if none).
  Events are sorted by tick, then type.

Because event times are tick times, a released stream shares the ticks of the true stream and
the two can be compared event by event. Times are int64 nanoseconds since the Unix epoch (UTC).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ParameterError
from ..times import NS_PER_S, event_ns, ns_index, utc_timestamp

__all__ = ["NS_PER_S", "EventStream"]  # NS_PER_S: lmdk_core.times's, re-exported


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr = np.ascontiguousarray(arr)
    if arr.flags.writeable:
        arr = arr.copy() if arr.base is not None else arr
        arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class EventStream:
    """Typed events of many users at public ticks (read-only arrays; see the module docstring).

    Build one with :meth:`from_arrays` (validates and sorts) or the extractors in
    :mod:`lmdk_core.patterns.extract`; the constructor itself trusts its arguments.
    """

    tick_uid: np.ndarray  # int32 [n_ticks] user code (index into ``users``)
    tick_time: np.ndarray  # int64 [n_ticks] nanoseconds since the epoch
    tick: np.ndarray  # int64 [n_events] index into the ticks
    etype: np.ndarray  # int32 [n_events] index into ``types``
    lat: np.ndarray  # float64 [n_events], NaN when the event has no location
    lon: np.ndarray  # float64 [n_events]
    types: tuple[str, ...]
    users: tuple[str, ...]

    def __post_init__(self) -> None:
        for name in ("tick_uid", "tick_time", "tick", "etype", "lat", "lon"):
            object.__setattr__(self, name, _readonly(getattr(self, name)))

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_arrays(
        cls, *, tick_uid: Any, tick_time: Any, event_tick: Any, event_type: Any,
        types: Sequence[str], users: Sequence[str] | None = None,
        lat: Any = None, lon: Any = None,
    ) -> EventStream:
        """Validate, sort and deduplicate.

        ``tick_uid``/``tick_time``: one entry per tick (times as datetime64 or int64 ns; each
        user's times distinct). ``event_tick``: index of each event's tick; ``event_type``: index
        into ``types``. Duplicate (tick, type) events collapse to the first. Raises
        ParameterError on out-of-range indices, duplicate ticks or mismatched lengths.
        """
        uid = np.asarray(tick_uid)
        if uid.ndim != 1 or (uid.size and not np.issubdtype(uid.dtype, np.integer)):
            raise ParameterError("tick_uid must be a 1-D array of integer user codes")
        time = _as_ns(tick_time, "tick_time")
        if time.shape != uid.shape:
            raise ParameterError(
                f"length mismatch: tick_time has {time.size} entries, tick_uid {uid.size}")
        n_users = int(uid.max()) + 1 if uid.size else 0
        if uid.size and uid.min() < 0:
            raise ParameterError("tick_uid must be >= 0")
        users = tuple(str(u) for u in (users if users is not None else range(n_users)))
        if len(users) < n_users:
            raise ParameterError(f"users names {len(users)} user(s), tick_uid needs {n_users}")
        order = _order(uid, time)
        uid, time = uid[order].astype(np.int32), time[order]
        dup = (uid[1:] == uid[:-1]) & (time[1:] == time[:-1])
        if dup.any():
            i = int(np.flatnonzero(dup)[0]) + 1
            raise ParameterError(f"duplicate tick: user {users[uid[i]]!r} has two ticks at "
                                 f"{pd.Timestamp(int(time[i]))}")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        et = np.asarray(event_tick)
        ty = np.asarray(event_type)
        if et.ndim != 1 or ty.shape != et.shape:
            raise ParameterError("event_tick and event_type must be 1-D arrays of equal length")
        if et.size and (not np.issubdtype(et.dtype, np.integer)
                        or not np.issubdtype(ty.dtype, np.integer)):
            raise ParameterError("event_tick and event_type must hold integers")
        if et.size and (et.min() < 0 or et.max() >= uid.size):
            raise ParameterError(f"event_tick out of range [0, {uid.size})")
        if ty.size and (ty.min() < 0 or ty.max() >= len(types)):
            raise ParameterError(f"event_type out of range [0, {len(types)})")
        la = np.full(et.size, np.nan) if lat is None else np.asarray(lat, dtype=np.float64)
        lo = np.full(et.size, np.nan) if lon is None else np.asarray(lon, dtype=np.float64)
        if la.shape != et.shape or lo.shape != et.shape:
            raise ParameterError("lat/lon must have one entry per event")
        tick = rank[et].astype(np.int64) if et.size else et.astype(np.int64)
        ty = ty.astype(np.int32)
        eorder = _order(tick, ty)
        tick, ty, la, lo = tick[eorder], ty[eorder], la[eorder], lo[eorder]
        keep = np.ones(tick.size, bool)
        keep[1:] = (tick[1:] != tick[:-1]) | (ty[1:] != ty[:-1])
        return cls(uid, time, tick[keep], ty[keep], la[keep], lo[keep],
                   tuple(str(t) for t in types), users)

    def with_events(self, tick: np.ndarray, etype: np.ndarray, lat: np.ndarray,
                    lon: np.ndarray) -> EventStream:
        """Same ticks, types and users with other events (sorted and deduplicated here)."""
        order = _order(tick, etype)
        tick, etype, lat, lon = tick[order], etype[order], lat[order], lon[order]
        keep = np.ones(tick.size, bool)
        keep[1:] = (tick[1:] != tick[:-1]) | (etype[1:] != etype[:-1])
        return EventStream(self.tick_uid, self.tick_time, tick[keep].astype(np.int64),
                           etype[keep].astype(np.int32), lat[keep], lon[keep], self.types,
                           self.users)

    def coarsen(self, tick_s: float) -> EventStream:
        """Re-tick on a regular grid of ``tick_s`` seconds: one tick per (user, slot with data).

        A slot's time is its start; events move to their slot and collapse per (slot, type), so
        events of one slot become concurrent. Fewer ticks means fewer indicators for the PPMs
        (fewer synthetic events) at the cost of time resolution. The slots kept are those that
        hold a data tick, so the new ticks are as public as the old ones.
        """
        from ..validation import check_positive

        step = int(check_positive(tick_s, "tick_s") * NS_PER_S)
        slot = np.floor_divide(self.tick_time, step)
        # ticks are sorted by (user, time), so (user, slot) is sorted too: a new coarse tick
        # starts wherever it changes (linear, no sort)
        new = np.ones(slot.size, bool)
        new[1:] = (slot[1:] != slot[:-1]) | (self.tick_uid[1:] != self.tick_uid[:-1])
        inverse = np.cumsum(new) - 1
        first = np.flatnonzero(new)
        return EventStream.from_arrays(
            tick_uid=self.tick_uid[first], tick_time=slot[first] * step,
            event_tick=inverse[self.tick], event_type=self.etype, types=self.types,
            users=self.users, lat=self.lat, lon=self.lon)

    # ------------------------------------------------------------------ views

    def __len__(self) -> int:
        return int(self.tick.size)

    @property
    def n_ticks(self) -> int:
        return int(self.tick_time.size)

    @property
    def uid(self) -> np.ndarray:
        """User code of each event."""
        return self.tick_uid[self.tick]

    @property
    def time(self) -> np.ndarray:
        """Time of each event, int64 nanoseconds."""
        return self.tick_time[self.tick]

    def type_code(self, name: str) -> int:
        """Index of the event type ``name``; ParameterError naming the known types otherwise."""
        try:
            return self.types.index(name)
        except ValueError:
            known = ", ".join(self.types[:12]) + (" ..." if len(self.types) > 12 else "")
            raise ParameterError(f"unknown event type {name!r}; known types: {known}") from None

    def user_tick_ranges(self) -> np.ndarray:
        """``[start, stop)`` tick index range of each user, shape (n_users, 2)."""
        n = len(self.users)
        start = np.searchsorted(self.tick_uid, np.arange(n), side="left")
        stop = np.searchsorted(self.tick_uid, np.arange(n), side="right")
        return np.stack([start, stop], axis=1)

    def time_slice(self, start: Any = None, stop: Any = None) -> EventStream:
        """Ticks (and their events) with ``start <= time < stop`` (datetime-like or int ns)."""
        keep = np.ones(self.n_ticks, bool)
        if start is not None:
            keep &= self.tick_time >= _bound_ns(start, "start")
        if stop is not None:
            keep &= self.tick_time < _bound_ns(stop, "stop")
        new_index = np.cumsum(keep) - 1
        ekeep = keep[self.tick]
        return EventStream(self.tick_uid[keep], self.tick_time[keep],
                           new_index[self.tick[ekeep]].astype(np.int64), self.etype[ekeep],
                           self.lat[ekeep], self.lon[ekeep], self.types, self.users)

    def to_frame(self) -> pd.DataFrame:
        """One row per event: ``uid, time`` (UTC), ``type, lat, lon``."""
        return pd.DataFrame({
            "uid": np.asarray(self.users, dtype=object)[self.uid] if len(self) else [],
            "time": ns_index(self.time),
            "type": np.asarray(self.types, dtype=object)[self.etype] if len(self) else [],
            "lat": self.lat,
            "lon": self.lon,
        })


def _order(major: np.ndarray, minor: np.ndarray) -> np.ndarray:
    """Permutation sorting by (major, minor); the identity (no sort) when already sorted."""
    if major.size < 2:
        return np.arange(major.size)
    dm = np.diff(major)
    if np.all((dm > 0) | ((dm == 0) & (np.diff(minor) >= 0))):
        return np.arange(major.size)
    return np.lexsort((minor, major))


def _as_ns(values: Any, name: str) -> np.ndarray:
    """Tick times as int64 ns: datetimes (converted by :mod:`lmdk_core.times`) or int64 ns."""
    return event_ns(values, name)


def _bound_ns(value: Any, name: str) -> int:
    """One time bound as int64 ns: an int64 ns tick time as-is, else a date/time (naive = UTC)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    return int(utc_timestamp(value, name).value)
