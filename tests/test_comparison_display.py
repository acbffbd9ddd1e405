"""comparison.display_frame: plain column names for both comparison tables, caller's formats."""

from __future__ import annotations

import pandas as pd

from lmdk_core.comparison import (
    COLUMN_LABELS,
    COMPARISON_COLUMNS,
    DUMMY_COMPARISON_COLUMNS,
    display_frame,
)


def test_every_column_has_a_plain_label():
    for col in (*COMPARISON_COLUMNS, *DUMMY_COMPARISON_COLUMNS):
        label = COLUMN_LABELS[col]
        assert label != col and "_" not in label


def test_display_frame_formats_renames_and_leaves_the_input_alone():
    table = pd.DataFrame({"scheme": ["skip"], "mae_m_mean": [1.441e6], "extra": [3]})
    out = display_frame(table, {"mae_m_mean": lambda v: f"{v / 1000:,.0f} km",
                                "absent": str})
    assert list(out.columns) == ["Scheme", "Mean error", "extra"]
    assert out["Mean error"].iloc[0] == "1,441 km"
    assert table["mae_m_mean"].iloc[0] == 1.441e6  # a new frame
    assert list(display_frame(table).columns) == ["Scheme", "Mean error", "extra"]
