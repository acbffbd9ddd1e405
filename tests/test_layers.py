"""Every test file is in exactly one layer (unit, app, e2e: tests/conftest.py), and the layer
lists match what each file uses, so `make test-unit` / `test-app` / `test-e2e` each run alone and
together run everything `make test` runs."""

from __future__ import annotations

import re
from pathlib import Path

import conftest
import pytest

HERE = Path(__file__).resolve().parent
FILES = sorted(p.name for p in HERE.glob("test_*.py"))

E2E_SIGNS = re.compile(r"pytest\.mark\.browser|^from (notebook_runner|jupyter_driver) import|"
                       r"importorskip\(\"(nbclient|kaleido)\"\)", re.M)
"""What makes a file end-to-end: a browser test, a notebook kernel, Chromium through kaleido."""
APP_SIGNS = re.compile(r"^from (streamlit\.testing\.v1|apptest_helpers) import", re.M)
"""What makes a file an app test: it drives a page under AppTest."""


def detected_layer(source: str) -> str:
    return "e2e" if E2E_SIGNS.search(source) else "app" if APP_SIGNS.search(source) else "unit"


def test_the_layer_lists_name_only_existing_files_and_do_not_overlap():
    assert set(FILES) >= conftest.E2E_FILES | conftest.APP_FILES
    assert not conftest.E2E_FILES & conftest.APP_FILES


@pytest.mark.parametrize("name", FILES)
def test_each_file_is_in_the_layer_its_contents_call_for(name):
    """(A file is in exactly one layer: the lists are disjoint, the rest is ``unit``.)"""
    wanted = detected_layer((HERE / name).read_text(encoding="utf-8"))
    assert conftest.layer_of(name) == wanted, f"{name}: list it in conftest.py's {wanted} layer"


def test_the_detection_tells_the_layers_apart():
    """The checks above can fail: the detection sees each layer's sign."""
    assert detected_layer("pytestmark = [pytest.mark." + "browser]\n") == "e2e"
    assert detected_layer("from notebook_runner import execute_stripped\n") == "e2e"
    assert detected_layer("from streamlit.testing.v1 import AppTest\n") == "app"
    assert detected_layer("from apptest_helpers import run\n") == "app"
    assert detected_layer("import numpy as np\n") == "unit"


def test_every_collected_test_carries_exactly_one_layer_marker(request):
    for item in request.session.items:
        layers = [m.name for m in item.iter_markers() if m.name in conftest.LAYERS]
        assert len(layers) == 1, (item.nodeid, layers)
        assert layers[0] == conftest.layer_of(item.path.name)
