"""Landmark masks on a long trace: lmdk_core.landmarks.place_masks (latitude band, then haversine
on the band) against measuring every point (the haversine test on all points × places, what
landmark_mask did before), in the same run, with the masks compared.

The trace is bench_page's synthetic random walk (1 M fixes 5 s apart around Beijing); places
are long stays of it (lmdk_core.stays.suggest_places), as a user's clicks would be.

Usage: python bench/bench_landmarks.py [--points 1000000] [--places 2] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from lmdk_core.geo import haversine_m  # noqa: E402
from lmdk_core.landmarks import place_masks  # noqa: E402


def every_point(lat: np.ndarray, lon: np.ndarray, places: list[tuple[float, float, float]]
                ) -> np.ndarray:
    """Baseline: the haversine distance of every point to every place."""
    plat, plon, rad = (np.array(c, dtype=float) for c in zip(*places, strict=True))
    return (haversine_m(lat[None, :], lon[None, :], plat[:, None], plon[:, None])
            <= rad[:, None])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--places", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    from bench_dashboard_core import timed  # median of repeats after one warm-up call
    from bench_page import walk

    from lmdk_core.stays import suggest_places

    traj = walk(args.points)
    stays = suggest_places(traj.head(200_000), top=args.places)
    places = [(float(r.lat), float(r.lon), float(r.suggested_radius_m))
              for r in stays.itertuples()]
    lat, lon = traj["lat"].to_numpy(), traj["lon"].to_numpy()
    t_new, new = timed(lambda: place_masks((lat, lon), places), args.repeat)
    t_old, old = timed(lambda: every_point(lat, lon, places), args.repeat)
    assert np.array_equal(new, old), "the band changed the masks"
    print(f"{args.points:,} points, {len(places)} places "
          f"(radii {', '.join(f'{p[2]:.0f}' for p in places)} m), "
          f"{int(np.asarray(new).sum()):,} landmark hits; median of {args.repeat} after a warm-up")
    print(f"every point measured   {t_old * 1000:8.1f} ms")
    print(f"latitude band first    {t_new * 1000:8.1f} ms   {t_old / t_new:5.1f}x faster")


if __name__ == "__main__":
    main()
