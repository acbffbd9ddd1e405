"""Execute notebooks with nbclient, each in a fresh python3 kernel; shared by the notebook tests.

Both the test process (nbclient needs nbformat) and every kernel that displays a Plotly figure
(Plotly's notebook renderer imports nbformat only to read its version) import jsonschema, whose
import builds rfc3987_syntax's IRI grammar with lark: ~2 CPU-s a process, most of what a small
notebook costs (python-jsonschema/jsonschema#1428). Nothing here validates IRIs, so both skip it
(:data:`SKIP_IRI_GRAMMAR`): jsonschema then has no ``iri`` format checker, as when installed
without its format-nongpl extra; nbformat's own schema uses no such format.
"""

from __future__ import annotations

import pathlib
import sys
from typing import Any

import pytest

SKIP_IRI_GRAMMAR = "__import__('sys').modules.setdefault('rfc3987_syntax', None)"
"""Run before jsonschema is imported: its ``import rfc3987_syntax`` then fails (ImportError,
which jsonschema expects) instead of building the grammar. An expression that binds no name: in a
kernel it runs in the notebook's namespace, which must stay as the notebook alone makes it."""


def run(nb: Any, cwd: pathlib.Path, timeout: int = 300) -> Any:
    """Execute ``nb`` in place in a new python3 kernel started in ``cwd``; return it."""
    sys.modules.setdefault("rfc3987_syntax", None)  # SKIP_IRI_GRAMMAR, in the test process
    nbclient = pytest.importorskip("nbclient")
    nbclient.NotebookClient(
        nb, timeout=timeout, kernel_name="python3",
        extra_arguments=[f"--IPKernelApp.exec_lines={SKIP_IRI_GRAMMAR}"],
        resources={"metadata": {"path": str(cwd)}},
    ).execute()
    return nb


def read_stripped(path: pathlib.Path) -> Any:
    """The committed notebook at ``path``, checked to have its outputs stripped."""
    sys.modules.setdefault("rfc3987_syntax", None)  # SKIP_IRI_GRAMMAR, in the test process
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), (
        f"commit {path.name} with outputs stripped")
    return nb


def execute_stripped(path: pathlib.Path, timeout: int = 300) -> Any:
    """Read ``path``, check its outputs are stripped, run it in its folder; the executed nb."""
    return run(read_stripped(path), path.parent, timeout)


def output_mimes(nb: Any) -> set[str]:
    """Every MIME type among the executed notebook's outputs."""
    return {k for c in nb.cells if c.cell_type == "code" for o in c.outputs
            for k in o.get("data", {})}
