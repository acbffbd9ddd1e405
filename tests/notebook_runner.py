"""Execute notebooks with nbclient (a python3 kernel each, or one kernel in turn, each notebook in a
fresh namespace); used by tests/test_notebook.py.

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


KERNEL_ARGS = [f"--IPKernelApp.exec_lines={SKIP_IRI_GRAMMAR}"]
"""Arguments of every kernel the notebook tests start."""

FRESH_NAMESPACE = """%reset -f
assert not [n for n in get_ipython().user_ns
            if not n.startswith("_") and n not in get_ipython().user_ns_hidden], "not fresh"
"""
"""Run before a notebook in a kernel that ran another: every name the last one defined is gone
(the assert fails otherwise), so the notebook sees only what it defines itself."""


def run(nb: Any, cwd: pathlib.Path, timeout: int = 300, km: Any = None) -> Any:
    """Execute ``nb`` in place in a new python3 kernel started in ``cwd`` and return it; or, given
    a started kernel manager ``km`` (see :func:`start_kernel`), in that kernel, in a fresh
    namespace (:data:`FRESH_NAMESPACE`, run first; ``nb`` gets no extra cell), restarting it when
    ``nb`` fails so that the next notebook starts from a working kernel."""
    sys.modules.setdefault("rfc3987_syntax", None)  # SKIP_IRI_GRAMMAR, in the test process
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    if km is not None:
        nb.cells.insert(0, nbformat.v4.new_code_cell(FRESH_NAMESPACE))
    client = nbclient.NotebookClient(
        nb, timeout=timeout, kernel_name="python3", km=km, extra_arguments=KERNEL_ARGS,
        resources={"metadata": {"path": str(cwd)}},
    )
    try:
        client.execute()
    except BaseException:
        if km is not None:  # a cell that failed or timed out may leave it busy or half-set
            km.restart_kernel(now=True)
        raise
    finally:
        if km is not None:
            nb.cells.pop(0)  # FRESH_NAMESPACE; an error in it raised CellExecutionError
            if client.kc is not None:
                client.kc.stop_channels()
    return nb


def start_kernel(cwd: pathlib.Path) -> Any:
    """A started python3 kernel manager (the notebook tests' arguments, working in ``cwd``) for
    :func:`run` to execute several notebooks in; shut it down with ``km.shutdown_kernel()``."""
    jupyter_client = pytest.importorskip("jupyter_client")
    km = jupyter_client.KernelManager(kernel_name="python3")
    km.start_kernel(extra_arguments=KERNEL_ARGS, cwd=str(cwd))
    return km


def read_stripped(path: pathlib.Path) -> Any:
    """The committed notebook at ``path``, checked to have its outputs stripped."""
    sys.modules.setdefault("rfc3987_syntax", None)  # SKIP_IRI_GRAMMAR, in the test process
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), (
        f"commit {path.name} with outputs stripped")
    return nb


def output_mimes(nb: Any) -> set[str]:
    """Every MIME type among the executed notebook's outputs."""
    return {k for c in nb.cells if c.cell_type == "code" for o in c.outputs
            for k in o.get("data", {})}
