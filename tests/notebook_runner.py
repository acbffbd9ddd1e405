"""Execute notebooks with nbclient, in turn in one python3 kernel, each notebook in a fresh
namespace; used by tests/test_notebook.py.

Kernels start without building jsonschema's IRI grammar (tests/iri_grammar.py: ~2 CPU-s a
kernel that displays a Plotly figure); the test process skips it from the start (conftest).
"""

from __future__ import annotations

import pathlib
from typing import Any

import iri_grammar
import pytest

KERNEL_ARGS = [f"--IPKernelApp.exec_lines={iri_grammar.SKIP}"]
"""Arguments of the kernel :func:`start_kernel` starts (and restarts)."""

FRESH_NAMESPACE = """%reset -f
assert not [n for n in get_ipython().user_ns
            if not n.startswith("_") and n not in get_ipython().user_ns_hidden], "not fresh"
"""
"""Run before a notebook in a kernel that ran another: every name the last one defined is gone
(the assert fails otherwise), so the notebook sees only what it defines itself."""


def run(nb: Any, cwd: pathlib.Path, km: Any, timeout: int = 300) -> Any:
    """Execute ``nb`` in place in the started kernel ``km`` (:func:`start_kernel`), in a fresh
    namespace (:data:`FRESH_NAMESPACE`, run first; ``nb`` gets no extra cell), and return it;
    the kernel is restarted when ``nb`` fails, so that the next notebook starts from a working
    one. ``cwd``: the folder the notebook's relative paths are read from."""
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    nb.cells.insert(0, nbformat.v4.new_code_cell(FRESH_NAMESPACE))
    client = nbclient.NotebookClient(
        nb, timeout=timeout, km=km, resources={"metadata": {"path": str(cwd)}},
    )
    try:
        client.execute()
    except BaseException:
        km.restart_kernel(now=True)  # a cell that failed or timed out may leave it busy or half-set
        raise
    finally:
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
