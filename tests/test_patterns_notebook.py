"""notebooks/patterns.ipynb runs top to bottom at its small parameter settings (nbclient)."""

from __future__ import annotations

import pathlib

import pytest
from notebook_runner import execute_stripped, output_mimes

NOTEBOOK = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "patterns.ipynb"


@pytest.mark.slow
def test_patterns_notebook_executes_without_errors():
    nb = execute_stripped(NOTEBOOK)
    assert "parameters" in nb.cells[1].metadata.get("tags", [])
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.get("output_type") == "error"]
    assert not errors
    assert "application/vnd.plotly.v1+json" in output_mimes(nb)
