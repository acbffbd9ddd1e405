"""The exploration notebook runs from top to bottom without errors (executed with nbclient)."""

from __future__ import annotations

import pathlib

import nbclient
import nbformat
import pytest

NOTEBOOK = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "explore.ipynb"


@pytest.mark.slow
def test_explore_notebook_executes_without_errors():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        "commit the notebook with outputs stripped"
    )
    client = nbclient.NotebookClient(
        nb, timeout=180, kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute()  # raises CellExecutionError naming the failing cell
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.get("output_type") == "error"]
    assert not errors
    # the figures rendered as Plotly output
    mimes = {k for c in nb.cells if c.cell_type == "code" for o in c.outputs
             for k in o.get("data", {})}
    assert "application/vnd.plotly.v1+json" in mimes
