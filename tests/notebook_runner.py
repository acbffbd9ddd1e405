"""Execute a committed notebook (outputs must be stripped) with nbclient; shared by the tests."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest


def execute_stripped(path: pathlib.Path, timeout: int = 300) -> Any:
    """Read ``path``, check its outputs are stripped, run it in its folder; the executed nb."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        "commit the notebook with outputs stripped"
    )
    nbclient.NotebookClient(
        nb, timeout=timeout, kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    return nb


def output_mimes(nb: Any) -> set[str]:
    """Every MIME type among the executed notebook's outputs."""
    return {k for c in nb.cells if c.cell_type == "code" for o in c.outputs
            for k in o.get("data", {})}
