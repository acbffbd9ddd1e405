"""jsonschema's IRI grammar, which the test suite's processes do not build.

Importing jsonschema builds rfc3987_syntax's IRI grammar with lark: ~2-3.5 CPU-s in every process
that imports it (python-jsonschema/jsonschema#1428). In the suite those are the test processes
(nbclient needs nbformat; Plotly's renderers import nbformat to read its version), the notebook
kernels and the JupyterLab server. Nothing they do validates an IRI: no lmdk code uses
jsonschema, and nbformat's schema and Jupyter server's event schemas use no ``iri`` format. With
``rfc3987_syntax`` marked absent, jsonschema's ``import rfc3987_syntax`` fails with the
ImportError it expects and it has no ``iri`` format checker, as when installed without its
format-nongpl extra. Users' own processes are untouched.
"""

from __future__ import annotations

import sys

SKIP = "__import__('sys').modules.setdefault('rfc3987_syntax', None)"
"""Python code that skips the grammar in a process it runs in first (``python -c``, a kernel's
``exec_lines``). An expression that binds no name: in a kernel it runs in the notebook's
namespace, which must stay as the notebook alone makes it."""


def skip_here() -> None:
    """:data:`SKIP` in this process (tests/conftest.py: every test process, at start)."""
    sys.modules.setdefault("rfc3987_syntax", None)
