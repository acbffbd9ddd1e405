"""notebooks/population.ipynb runs from top to bottom at its small settings (nbclient)."""

from __future__ import annotations

import pathlib

import pytest

NOTEBOOK = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "population.ipynb"


@pytest.mark.slow
def test_population_notebook_executes_without_errors():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        "commit the notebook with outputs stripped"
    )
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute()
    mimes = {k for c in nb.cells if c.cell_type == "code" for o in c.outputs
             for k in o.get("data", {})}
    assert "application/vnd.plotly.v1+json" in mimes
    # the error table ranks the personalised release above Minimum and user-level
    table = nb.cells[5].outputs[0]["data"]["text/plain"]
    assert "personalised" in table and "user_level" in table
