"""notebooks/patterns.ipynb runs top to bottom at its small parameter settings (nbclient)."""

from __future__ import annotations

import pathlib

import pytest

NOTEBOOK = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "patterns.ipynb"


@pytest.mark.slow
def test_patterns_notebook_executes_without_errors():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        "commit the notebook with outputs stripped"
    )
    assert "parameters" in nb.cells[1].metadata.get("tags", [])
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.get("output_type") == "error"]
    assert not errors
    mimes = {k for c in nb.cells if c.cell_type == "code" for o in c.outputs
             for k in o.get("data", {})}
    assert "application/vnd.plotly.v1+json" in mimes
