"""Every test file is in exactly one layer (unit, app, e2e: tests/conftest.py), and the layer
lists match what each file uses, so `make test-unit` / `test-app` / `test-e2e` each run alone and
together run everything `make test` runs."""

from __future__ import annotations

import ast
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
    assert detected_layer("from notebook_runner import run\n") == "e2e"
    assert detected_layer("from streamlit.testing.v1 import AppTest\n") == "app"
    assert detected_layer("from apptest_helpers import run\n") == "app"
    assert detected_layer("import numpy as np\n") == "unit"


def test_every_collected_test_carries_exactly_one_layer_marker(request):
    for item in request.session.items:
        layers = [m.name for m in item.iter_markers() if m.name in conftest.LAYERS]
        assert len(layers) == 1, (item.nodeid, layers)
        assert layers[0] == conftest.layer_of(item.path.name)


def imported_test_modules(source: str) -> list[str]:
    """The test modules (``test_*``) that ``source`` imports."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("test_")]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("test_"):
            found.append(node.module)
    return found


def test_no_test_module_imports_another():
    """Shared fixtures live in conftest.py, shared helpers, data and strategies in the helper
    modules beside it (apptest_helpers, traces, release_inputs, correlation_exact, ...): a test
    file that imports another runs that file's module-level code and couples the two (and the
    layer of one to the other's)."""
    bad = {name: found for name in FILES
           if (found := imported_test_modules((HERE / name).read_text(encoding="utf-8")))}
    assert not bad, bad


def test_the_import_scan_sees_an_imported_test_module():
    assert imported_test_modules("from test_app import fake_map\nimport test_guide as g\n") == [
        "test_app", "test_guide"]
    assert imported_test_modules("from traces import WALK\nimport testing\n") == []


# --------------------------------------------------------------------------- no fixed sleeps

SLEEP_ALLOWED = {
    ("browser_driver.py", "elapse"):
        "for checks that something does *not* happen within a time: the wait is the check",
    ("test_correlation_cache.py", "local"):
        "pauses a thread inside the cache to force the interleaving under test",
}
"""(file, enclosing function) → why a sleep outside a polling loop is right there."""


def fixed_sleeps(source: str) -> list[tuple[str, int]]:
    """``time.sleep(…)`` and ``….wait_for_timeout(…)`` calls that are not the pause of a polling
    loop (a ``while`` around them that tests a condition), as (enclosing function, line)."""
    found: list[tuple[str, int]] = []
    if "sleep" not in source and "wait_for_timeout" not in source:
        return found  # neither name in the text, so in no call: no need to parse (most files)

    def visit(node: ast.AST, function: str, in_loop: bool) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            function, in_loop = node.name, False
        elif isinstance(node, ast.While):
            in_loop = True
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and (node.func.attr == "wait_for_timeout"
                   or (node.func.attr == "sleep" and isinstance(node.func.value, ast.Name)
                       and node.func.value.id == "time"))
              and not in_loop):
            found.append((function, node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child, function, in_loop)

    visit(ast.parse(source), "<module>", False)
    return found


def test_no_fixed_sleep_in_the_tests():
    """A fixed pause is either too short on a loaded machine (a flake) or wasted time on an idle
    one: tests wait for the condition they need (browser_driver.wait_idle, wait_still,
    wait_chart_change, wait_zoomed, Playwright's wait_for_function)."""
    bad = [(p.name, fn, line) for p in sorted(HERE.glob("*.py"))
           for fn, line in fixed_sleeps(p.read_text(encoding="utf-8"))
           if (p.name, fn) not in SLEEP_ALLOWED]
    assert not bad, bad


def test_the_sleep_scan_sees_a_fixed_sleep_but_not_a_poll():
    assert fixed_sleeps("import time\ndef f(page):\n    page.wait_for_timeout(400)\n") == [
        ("f", 3)]
    assert fixed_sleeps("def g():\n    time.sleep(0.5)\n") == [("g", 2)]
    assert fixed_sleeps("def h(done):\n    while not done():\n        time.sleep(0.05)\n") == []


def test_importing_the_test_modules_runs_no_kernel(request):
    """No test module runs a numba kernel when it is imported (conftest.pytest_collection says
    why): build such inputs in a fixture or a cached function, which runs with the tests."""
    assert request.config.stash[conftest.KERNELS_AT_IMPORT] == []


def test_the_kernel_record_sees_a_kernel_run():
    """Control for the test above: a kernel's first call is recorded, the next is not."""
    import numba

    @numba.njit
    def twice(x):
        return 2.0 * x

    from numba_record import kernels_run

    with kernels_run() as seen:
        assert twice(1.5) == 3.0
        assert twice(2.5) == 5.0
    assert [name.rsplit(".", 1)[-1] for name, _ in seen] == ["twice"]
    assert seen[0][1] > 0  # its compile's CPU time
