"""notebooks/population.ipynb runs from top to bottom at its small settings (nbclient)."""

from __future__ import annotations

import pathlib

import pytest
from notebook_runner import execute_stripped, output_mimes

NOTEBOOK = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "population.ipynb"


@pytest.mark.slow
def test_population_notebook_executes_without_errors():
    nb = execute_stripped(NOTEBOOK)
    assert "application/vnd.plotly.v1+json" in output_mimes(nb)
    # the error table ranks the personalised release above Minimum and user-level
    table = nb.cells[5].outputs[0]["data"]["text/plain"]
    assert "personalised" in table and "user_level" in table
