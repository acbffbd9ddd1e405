"""Generate ``lmdk_core/data/sample_context.geojson``: offline map context for the bundled sample.

Without base-map tiles (the private default: tiles tell a tile server where you look) a trace is
a line on a blank background. This file gives the map some bearings with no outside request:
Beijing's 2nd–5th ring roads, two axes and a dozen arterial streets near the sample's places as
*schematic* lines (rounded rectangles and straight segments through approximate published
extents, not survey data: good to a few hundred metres, drawn for orientation only) and the
named places of the sample generator (``generate_sample.PLACES``: homes, offices, hospitals,
parks — invented stays at real-looking locations).

Deterministic (no randomness); CC0 like the sample. Run from the repo root::

    .venv/bin/python data/generate_context.py   # writes lmdk_core/data/sample_context.geojson
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from generate_sample import ORIGIN, PLACES

OUTPUT = Path(__file__).resolve().parent.parent / "lmdk_core" / "data" / "sample_context.geojson"

# (name, south, west, north, east) in degrees: approximate extents of each ring road.
RINGS = (
    ("2nd Ring Road", 39.868, 116.357, 39.948, 116.435),
    ("3rd Ring Road", 39.856, 116.310, 39.967, 116.462),
    ("4th Ring Road", 39.835, 116.277, 39.984, 116.489),
    ("5th Ring Road", 39.783, 116.212, 40.021, 116.548),
)
AXES = (
    ("Chang'an Avenue", ((ORIGIN[0], 116.25), (ORIGIN[0], 116.55))),
    ("Central axis", ((39.85, ORIGIN[1]), (40.01, ORIGIN[1]))),
)
# Arterial streets near the sample's places, as straight segments ((lat, lon), (lat, lon)):
# approximate published alignments, schematic like the rings.
STREETS = (
    ("Zhongguancun Street", ((39.955, 116.3165), (40.000, 116.3165))),
    ("Xueyuan Road", ((39.962, 116.3530), (40.010, 116.3530))),
    ("Chengfu Road", ((39.9925, 116.300), (39.9925, 116.360))),
    ("Zhichun Road", ((39.9765, 116.310), (39.9765, 116.380))),
    ("Baishiqiao Road", ((39.930, 116.3260), (39.967, 116.3260))),
    ("Datun Road", ((40.0040, 116.380), (40.0040, 116.430))),
    ("Financial Street", ((39.910, 116.3570), (39.930, 116.3570))),
    ("Andingmen Outer Street", ((39.948, 116.4090), (39.985, 116.4090))),
    ("Gongti North Road", ((39.9335, 116.430), (39.9335, 116.462))),
    ("Chaoyang Road", ((39.9220, 116.462), (39.9220, 116.550))),
    ("Dongdaqiao Road", ((39.905, 116.4515), (39.940, 116.4515))),
    ("Guangshun Street", ((39.975, 116.4700), (40.010, 116.4700))),
)


def rounded_rectangle(south: float, west: float, north: float, east: float,
                      corner: float = 0.2, per_corner: int = 6) -> list[list[float]]:
    """Closed ring of [lon, lat] points: a rectangle whose corners are quarter ellipses."""
    ry, rx = corner * (north - south) / 2, corner * (east - west) / 2
    centres = ((east - rx, north - ry, 0.0), (west + rx, north - ry, 90.0),
               (west + rx, south + ry, 180.0), (east - rx, south + ry, 270.0))
    ring = []
    for cx, cy, start in centres:
        for a in np.radians(np.linspace(start, start + 90.0, per_corner)):
            ring.append([round(cx + rx * np.cos(a), 5), round(cy + ry * np.sin(a), 5)])
    ring.append(ring[0])
    return ring


def context() -> dict:
    """The GeoJSON FeatureCollection (roads, then places)."""
    features = []
    for name, s, w, n, e in RINGS:
        features.append({"type": "Feature",
                         "properties": {"kind": "road", "name": f"{name} (schematic)"},
                         "geometry": {"type": "LineString",
                                      "coordinates": rounded_rectangle(s, w, n, e)}})
    for name, ((lat0, lon0), (lat1, lon1)) in AXES + STREETS:
        features.append({"type": "Feature",
                         "properties": {"kind": "road", "name": f"{name} (schematic)"},
                         "geometry": {"type": "LineString",
                                      "coordinates": [[lon0, lat0], [lon1, lat1]]}})
    for key, (label, lat, lon) in PLACES.items():
        features.append({"type": "Feature",
                         "properties": {"kind": "place", "label": label,
                                        "name": key.replace("_", " ")},
                         "geometry": {"type": "Point", "coordinates": [lon, lat]}})
    return {"type": "FeatureCollection",
            "properties": {"source": "lmdk data/generate_context.py (schematic, CC0)"},
            "features": features}


def main() -> None:
    OUTPUT.write_text(json.dumps(context(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
