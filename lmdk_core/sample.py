"""The bundled synthetic sample: four invented users in Beijing over five days (CC0).

The file lives in ``data/sample_trajectories.csv`` at the repository root (``lmdk_core/`` and
``data/`` are siblings); ``data/README.md`` documents it, ``data/generate_sample.py`` rebuilds it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .errors import LmdkError

__all__ = ["sample_path", "load_sample"]

SAMPLE_NAME = "sample_trajectories.csv"


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


def load_sample() -> pd.DataFrame:
    """The sample as a trajectory frame: ``uid, time`` (UTC), ``lat, lon`` and ``place`` labels."""
    from . import read_trajectories  # imported lazily: the readers package loads on first use

    return read_trajectories(sample_path())
