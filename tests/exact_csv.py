"""``read_csv_exact``: read a CSV whose floats come back as the very doubles written, on pandas
2.2 and 3 alike, without the ``float_precision`` deprecation warning of pandas 3.

pandas 3 parses floats exactly by default and deprecates ``float_precision`` (Pandas4Warning);
pandas 2's default parser can be one ulp off, so there ``float_precision="round_trip"`` is
passed."""

from __future__ import annotations

from typing import Any

import pandas as pd

_PANDAS_MAJOR = int(pd.__version__.split(".")[0])


def read_csv_exact(source: Any, **kwargs: Any) -> pd.DataFrame:
    """``pd.read_csv(source, **kwargs)`` with floats read back to the same doubles."""
    if _PANDAS_MAJOR < 3:
        kwargs.setdefault("float_precision", "round_trip")
    return pd.read_csv(source, **kwargs)
