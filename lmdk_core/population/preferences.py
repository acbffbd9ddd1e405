"""Per-user privacy preferences ε_u: from a column or file, or drawn from a public mix of groups.

The *mix* (groups, shares, ranges) is public: a publisher announces it, and every data-independent
choice (the τ rules, the Minimum floor) may use it. The *drawn* ε_u of each user is private: it
enters the release only through that user's own sampling probability and is never published.

:data:`ICDE15_MIX` is the proportion of Jorgensen, Yu and Cormode (ICDE 2015): conservative 54 %,
moderate 37 %, liberal 9 %. The ranges are this project's choice (their paper's exact ranges were
not available to us): conservative ε ∈ [0.1, 0.5), moderate [0.5, 2), liberal 2.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ParameterError, SourceFormatError
from ..formatting import plain_percent
from ..mechanisms import as_rng

__all__ = [
    "ICDE15_MIX",
    "MIXES",
    "PreferenceMix",
    "PreferencesFormatError",
    "draw_preferences",
    "preferences_from_column",
    "read_preferences",
]


class PreferencesFormatError(SourceFormatError):
    """A preferences file cannot be read: ``<file> line N: <reason>``."""

    def __init__(self, reason: str, *, source: str | None = None, line: int | None = None):
        self.line = line
        super().__init__(reason, source=source, position=line, unit="line",
                         default_source="<preferences>")


@dataclass(frozen=True)
class PreferenceMix:
    """Public groups ``(name, share, eps_low, eps_high)``; ε is uniform on [low, high)
    (fixed when low == high). Shares must sum to 1."""

    groups: tuple[tuple[str, float, float, float], ...]

    def __post_init__(self) -> None:
        groups = tuple((str(g[0]), float(g[1]), float(g[2]), float(g[3])) for g in self.groups)
        if not groups:
            raise ParameterError("a preference mix needs at least one group")
        for name, share, lo, hi in groups:
            if not (math.isfinite(share) and 0 <= share <= 1):
                raise ParameterError(f"group {name!r}: share must lie in [0, 1], got {share}")
            if not (math.isfinite(lo) and math.isfinite(hi) and 0 < lo <= hi <= 50):
                raise ParameterError(
                    f"group {name!r}: need 0 < eps_low <= eps_high <= 50, got [{lo}, {hi}]"
                )
        total = sum(g[1] for g in groups)
        if abs(total - 1.0) > 1e-9:
            raise ParameterError(f"group shares must sum to 1, got {total}")
        object.__setattr__(self, "groups", groups)

    @property
    def floor(self) -> float:
        """The smallest ε any user of this mix can have (public)."""
        return min(g[2] for g in self.groups if g[1] > 0)

    def public_quantiles(self, n: int = 1001) -> np.ndarray:
        """``n`` quantiles of the mix's ε distribution (a public, data-free summary)."""
        qs = (np.arange(n) + 0.5) / n
        edges = np.cumsum([g[1] for g in self.groups])
        out = np.empty(n)
        lo_edge = 0.0
        for (_, share, lo, hi), edge in zip(self.groups, edges, strict=True):
            sel = (qs >= lo_edge) & (qs < edge) if share > 0 else np.zeros(n, bool)
            out[sel] = lo + (hi - lo) * (qs[sel] - lo_edge) / share if share > 0 else lo
            lo_edge = edge
        out[qs >= lo_edge] = self.groups[-1][3]
        return out

    def label(self) -> str:
        """The mix in plain words: the share of people in each group ('54 % conservative, …')."""
        return ", ".join(f"{plain_percent(share)} {group}" for group, share, _, _ in self.groups)


ICDE15_MIX = PreferenceMix((("conservative", 0.54, 0.1, 0.5), ("moderate", 0.37, 0.5, 2.0),
                            ("liberal", 0.09, 2.0, 2.0)))
MIXES = {
    "icde15": ICDE15_MIX,
    "liberal-heavy": PreferenceMix((("conservative", 0.09, 0.1, 0.5),
                                    ("moderate", 0.37, 0.5, 2.0), ("liberal", 0.54, 2.0, 2.0))),
    "even": PreferenceMix((("conservative", 1 / 3, 0.1, 0.5), ("moderate", 1 / 3, 0.5, 2.0),
                           ("liberal", 1 / 3, 2.0, 2.0))),
    "all-conservative": PreferenceMix((("conservative", 1.0, 0.1, 0.5),)),
}
"""Named public mixes (the evaluation's rows)."""


def draw_preferences(uids: Any, mix: PreferenceMix = ICDE15_MIX, *, rng: Any = None
                     ) -> pd.DataFrame:
    """Draw each user's group and ε_u from ``mix``: DataFrame uid (sorted), group, epsilon
    (private).

    ``rng=None`` draws from fresh OS entropy; pass a seed only for simulations.
    """
    ids = pd.Index(np.unique(np.asarray(list(uids), dtype=object).astype(str)))  # sorted:
    # the draw of each user does not depend on the order users arrive in
    gen = as_rng(rng)
    shares = np.array([g[1] for g in mix.groups])
    g = gen.choice(len(mix.groups), size=len(ids), p=shares / shares.sum())
    lo = np.array([m[2] for m in mix.groups])[g]
    hi = np.array([m[3] for m in mix.groups])[g]
    eps = lo + (hi - lo) * gen.random(len(ids))
    names = np.array([m[0] for m in mix.groups], dtype=object)[g]
    return pd.DataFrame({"uid": ids.to_numpy(), "group": names, "epsilon": eps})


def _check_eps_column(df: pd.DataFrame, source: str, first_line: int) -> pd.DataFrame:
    for col in ("uid", "epsilon"):
        if col not in df.columns:
            raise PreferencesFormatError(
                f"missing column {col!r} (columns found: {', '.join(map(str, df.columns))})",
                source=source, line=1)
    eps = pd.to_numeric(df["epsilon"], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(eps) | (eps <= 0) | (eps > 50)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise PreferencesFormatError(
            f"epsilon must be a finite number in (0, 50], got {df['epsilon'].iloc[i]!r}"
            + (f" ({int(bad.sum()) - 1} more bad rows)" if bad.sum() > 1 else ""),
            source=source, line=first_line + i)
    uid = df["uid"].astype(str)
    missing = df["uid"].isna().to_numpy() | (uid.str.strip() == "").to_numpy()
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise PreferencesFormatError("missing uid", source=source, line=first_line + i)
    dup = uid.duplicated().to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise PreferencesFormatError(f"uid {uid.iloc[i]!r} appears twice", source=source,
                                     line=first_line + i)
    out = pd.DataFrame({"uid": uid.to_numpy(), "epsilon": eps})
    if "group" in df.columns:
        out["group"] = df["group"].astype(str).to_numpy()
    return out


def read_preferences(source: Any) -> pd.DataFrame:
    """Read a CSV with columns ``uid, epsilon`` (optional ``group``); errors name file and line."""
    name = str(getattr(source, "name", source))
    try:
        df = pd.read_csv(source if not isinstance(source, bytes) else io.BytesIO(source),
                         dtype={"uid": str})
    except FileNotFoundError:
        raise PreferencesFormatError("file not found", source=name) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise PreferencesFormatError(f"not a readable CSV ({str(exc).splitlines()[0]})",
                                     source=name) from None
    return _check_eps_column(df, name, first_line=2)


def preferences_from_column(traj: pd.DataFrame, column: str = "epsilon") -> pd.DataFrame:
    """ε_u from a column of a trajectory frame (one value per user; all rows must agree)."""
    if column not in traj.columns:
        raise ParameterError(f"trajectory frame has no column {column!r}")
    g = traj.groupby("uid", observed=True, sort=True)[column]
    lo, hi = g.min(), g.max()
    differ = lo.index[(lo != hi).to_numpy()]
    if len(differ):
        raise ParameterError(f"user {differ[0]!r} has several values in column {column!r}")
    df = pd.DataFrame({"uid": lo.index.astype(str), "epsilon": lo.to_numpy()})
    return _check_eps_column(df, f"column {column!r}", first_line=1)
