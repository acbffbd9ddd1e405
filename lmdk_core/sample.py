"""The bundled synthetic sample: four invented users in Beijing over five days (CC0).

The file lives in ``data/sample_trajectories.csv`` at the repository root (``lmdk_core/`` and
``data/`` are siblings); ``data/README.md`` documents it, ``data/generate_sample.py`` rebuilds it.
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
    """Absolute path of ``data/sample_trajectories.csv``; raises LmdkError if it is not there."""
    path = Path(__file__).resolve().parent.parent / "data" / SAMPLE_NAME
    if not path.is_file():
        raise LmdkError(
            f"bundled sample not found at {path}: it ships with the lmdk source tree (data/ "
            "next to lmdk_core/); install from a checkout with `pip install -e .`, or "
            "regenerate it with `python data/generate_sample.py`"
        )
    return path


def load_sample_context() -> dict[str, Any]:
    """Offline map context of the sample's area (schematic ring roads and the sample's places).

    A GeoJSON FeatureCollection built by ``data/generate_context.py``; draw it with
    :func:`lmdk_core.maps.context_layer` or ``base_map(..., context=...)``.
    """
    path = sample_path().with_name(CONTEXT_NAME)
    if not path.is_file():
        raise LmdkError(f"sample map context not found at {path}: regenerate it with "
                        "`python data/generate_context.py`")
    return json.loads(path.read_text(encoding="utf-8"))


def load_sample() -> pd.DataFrame:
    """The sample as a trajectory frame: ``uid, time`` (UTC), ``lat, lon`` and ``place`` labels."""
    from . import read_trajectories  # imported lazily: the readers package loads on first use

    return read_trajectories(sample_path())
