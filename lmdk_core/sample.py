"""The bundled synthetic sample: four invented users in Beijing over five days (CC0).

The file ships inside the package (``lmdk_core/data/sample_trajectories.csv``, so it is in every
wheel); its documented source is ``data/`` at the repository root: ``data/README.md`` describes
it and ``data/generate_sample.py`` regenerates it byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from .errors import LmdkError

__all__ = ["load_sample", "load_sample_context", "sample_path"]

SAMPLE_NAME = "sample_trajectories.csv"
CONTEXT_NAME = "sample_context.geojson"


def sample_path() -> Path:
    """Absolute path of the packaged sample CSV; raises LmdkError if it is not there."""
    path = Path(__file__).resolve().parent / "data" / SAMPLE_NAME
    if not path.is_file():
        raise LmdkError(
            f"bundled sample not found at {path}: the lmdk installation is incomplete; "
            "reinstall it, or regenerate the file with `python data/generate_sample.py` "
            "in a source checkout"
        )
    return path


def load_sample_context() -> dict[str, Any]:
    """Offline map context of the sample's area (schematic ring roads and the sample's places).

    A GeoJSON FeatureCollection built by ``data/generate_context.py`` and shipped in the package
    next to the sample; draw it with
    :func:`lmdk_core.maps.context_layer` or ``base_map(..., context=...)``.
    """
    path = sample_path().with_name(CONTEXT_NAME)
    if not path.is_file():
        raise LmdkError(f"sample map context not found at {path}: regenerate it with "
                        "`python data/generate_context.py`")
    return json.loads(path.read_text(encoding="utf-8"))


def load_sample() -> pd.DataFrame:
    """The sample as a trajectory frame: ``uid, time`` (UTC), ``lat, lon`` and ``place`` labels."""
    from .readers import read_trajectories  # imported lazily: the readers load on first use

    return read_trajectories(sample_path())
