"""Shared test configuration.

Hypothesis runs derandomised (a fixed seed per test) so the suite is deterministic on every
machine. Profiles:

* ``dev`` (default): 20 examples per property test, for a quick local loop;
* ``ci`` (selected when the ``CI`` environment variable is set, as CI services do): 50 examples.
  Runs are derandomised, so CI sees the same cases every time and more examples buy no new
  exploration across runs; the guarantee tests that need more set ``max_examples`` themselves
  (60-300) and are unaffected. Use ``explore`` to search wider;
* ``explore``: 1000 fresh random examples, saving failures to ``.hypothesis/``.

``HYPOTHESIS_PROFILE=<name>`` overrides the choice. Tests that set ``max_examples`` themselves keep
their own number in every profile.
"""

import functools
import gc
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, settings

_DETERMINISTIC = {
    "derandomize": True,
    "database": None,  # no replay of examples saved by earlier runs: every run sees the same cases
    "deadline": None,
    "print_blob": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
settings.register_profile("ci", max_examples=50, **_DETERMINISTIC)
settings.register_profile("dev", max_examples=20, **_DETERMINISTIC)
settings.register_profile("explore", deadline=None, max_examples=1000)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
settings.load_profile(PROFILE)

# Keep compiled test modules between runs even where PYTHONDONTWRITEBYTECODE is set (some
# sandboxes and containers set it). With it set, pytest cannot cache the test modules it rewrites
# for assertions, so every test process parses, rewrites and compiles all ~130 of them (7 MB)
# again on every run: a collection took 16.6 CPU-s instead of 7.8 CPU-s with the cache
# (bench/bench_test_collection.py), and `make test` collects once per worker. Only the pytest
# processes change: the subprocesses the tests start keep the environment as set. The caches
# are __pycache__ folders (gitignored).
sys.dont_write_bytecode = False


_WARMUP = "LMDK_TEST_NUMBA_WARMUP"
"""Environment variable naming the files tests/numba_warmup.py writes when it has finished."""
_WARMUP_DIR = pytest.StashKey[Path]()
_WARMUP_PROCS = pytest.StashKey[list[subprocess.Popen]]()


def pytest_configure(config):
    """Every test process skips jsonschema's IRI grammar (tests/iri_grammar.py). In a distributed
    run (``-n``), compile the numba kernels once, in two subprocesses
    started now, while the test processes start and collect (tests/numba_warmup.py says why);
    they wait for them before their first test (:func:`_numba_kernels_compiled`)."""
    import iri_grammar

    iri_grammar.skip_here()
    if hasattr(config, "workerinput") or config.getoption("dist", "no") == "no" or (
            os.environ.get(_WARMUP)):
        return
    folder = Path(tempfile.mkdtemp(prefix="lmdk-numba-warmup-"))
    config.stash[_WARMUP_DIR] = folder
    script = Path(__file__).with_name("numba_warmup.py")
    done, procs = [], config.stash.setdefault(_WARMUP_PROCS, [])
    for part in ("schemes", "rest"):
        done.append(str(folder / part))
        procs.append(subprocess.Popen([sys.executable, str(script), part, done[-1]],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    os.environ[_WARMUP] = os.pathsep.join(done)  # inherited by the test processes xdist starts


def pytest_unconfigure(config):
    """Reap the warm-up's processes (kept, not dropped: a dropped handle to a running process
    is a ResourceWarning, shown by ``python -X dev`` and by make test-min's run), stopping one
    still running (a run that ended before the tests waited for it), and remove its folder."""
    for proc in config.stash.get(_WARMUP_PROCS, []):
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    if (folder := config.stash.get(_WARMUP_DIR, None)) is not None:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def _numba_kernels_compiled():
    """Wait (at most 3 min) for the warm-up :func:`pytest_configure` started, if any."""
    deadline = time.monotonic() + 180
    for done in filter(None, os.environ.get(_WARMUP, "").split(os.pathsep)):
        while not os.path.exists(done) and time.monotonic() < deadline:
            time.sleep(0.05)
    yield


KERNELS_AT_IMPORT = pytest.StashKey[list[tuple[str, float]]]()
"""The kernels run while this process imported the test modules, with their CPU-s
(tests/numba_record.py; tests/test_layers.py: none)."""


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    """Record the kernels that importing the test modules runs (:data:`KERNELS_AT_IMPORT`).
    Collection does no test's work: a kernel run at import runs for ``--collect-only`` and for
    every selection that leaves its tests out, and on a fresh clone it is compiled before
    :func:`_numba_kernels_compiled` waits for the warm-up (tests/test_advice_speed.py's curve,
    ~12 CPU-s in each process; the whole suite's CPU did not change, as the warm-up then loaded
    what a process had compiled first)."""
    from numba_record import kernels_run

    with kernels_run() as seen:
        session.config.stash[KERNELS_AT_IMPORT] = seen
        return (yield)


# --------------------------------------------------------------------------- layers

LAYERS = ("unit", "app", "e2e")
"""The three test layers, each a marker (``pytest -m unit`` …, ``make test-unit`` …):

* ``e2e``: drives a program outside the test process: Chromium (the app in a real browser, the
  notebooks' figures through kaleido), JupyterLab, or a Jupyter kernel running a notebook;
* ``app``: the Streamlit pages under ``streamlit.testing.v1.AppTest`` (no browser);
* ``unit``: everything else (the library, the CLI, the docs and the packaging).

Every test file is in exactly one (tests/test_layers.py checks it, and that the lists below
match what each file uses)."""

E2E_FILES = frozenset({
    "test_browser.py", "test_browser_map.py",
    "test_charts_browser.py", "test_guide_browser.py", "test_isolation.py",
    "test_jupyter_browser.py", "test_jupyter_export.py", "test_map_front_end.py",
    "test_map_keyboard.py", "test_notebook.py", "test_pages_browser.py", "test_story_browser.py",
})
APP_FILES = frozenset({
    "test_app.py", "test_app_chart_cache.py", "test_app_pages.py", "test_app_smoothing.py",
    "test_apptest_runs.py", "test_attacks_page.py",
    "test_data_section.py", "test_guide.py", "test_hide_section.py", "test_loss_text.py",
    "test_map_section.py", "test_page_reuse.py", "test_pages_settings.py", "test_patterns_page.py",
    "test_place_names.py", "test_population_page.py", "test_population_temporal_page.py",
    "test_scheme_reserve.py", "test_story_app.py",
})


def layer_of(file_name: str) -> str:
    """The layer of the test file called ``file_name`` (a base name such as ``test_app.py``)."""
    return "e2e" if file_name in E2E_FILES else "app" if file_name in APP_FILES else "unit"


_MARK_WORDS = {"and", "or", "not", "True", "False", "None"}


def pytest_ignore_collect(collection_path, config):
    """With ``-m`` selecting layers (``make test-unit`` …), the test files of a layer it cannot
    select are not imported at all. Each test process imported every test file only to deselect
    most: ``-m app`` collected in 8.0 CPU-s, 4.1 without them. A file is skipped only when the
    expression is false for its layer under every value of the other markers it names (so
    ``-m "unit and not slow"`` skips the app and e2e files, never a unit file)."""
    expr = config.option.markexpr
    path = Path(collection_path)
    if not expr or path.parent != Path(__file__).parent or not path.name.startswith("test_"):
        return None
    try:  # pytest's own parser of -m (private: on another pytest, collect everything)
        from _pytest.mark.expression import Expression

        compiled = Expression.compile(expr)
    except (ImportError, AttributeError, SyntaxError):
        return None  # pytest reports a bad expression itself
    layer = layer_of(path.name)
    free = sorted(set(re.findall(r"[\w.+\-:/\\\[\]]+", expr)) - _MARK_WORDS - set(LAYERS))
    if len(free) > 8:
        return None
    unknown = []

    def has(marks: dict[str, bool], name: str, /, **kwargs: object) -> bool:
        if name in LAYERS:
            return name == layer
        if name not in marks:
            unknown.append(name)  # a name the scan above missed: no claim about it
        return marks.get(name, False)

    for values in itertools.product((False, True), repeat=len(free)):
        marks = dict(zip(free, values, strict=True))
        if compiled.evaluate(functools.partial(has, marks)) or unknown:
            return None
    return True


def pytest_collection_modifyitems(config, items):
    """Each test gets its file's layer marker (:data:`LAYERS`), and a skip when it is marked
    ``browser`` and Chromium is missing; then the longest modules first:
    those with browser tests, then those with slow tests, then
    the rest (a stable sort: files and the tests within a file keep their order). `make test`
    hands whole files to its workers in this order (--dist loadfile --no-loadscope-reorder), so
    the short files even out the workers' loads at the end; xdist's own order (most tests
    first) left the few-test browser and notebook files for last and one worker idle ~7 s."""
    from browser_driver import CHROMIUM

    no_browser = pytest.mark.skip(reason=f"{CHROMIUM} missing (run `make chromium`)")
    by_module: dict[object, int] = {}
    for item in items:
        item.add_marker(layer_of(item.path.name))
        if item.get_closest_marker("browser") and not os.path.exists(CHROMIUM):
            item.add_marker(no_browser)  # every browser test, one rule (was a copy per file)
        w = 0 if item.get_closest_marker("browser") else 1 if item.get_closest_marker("slow") else 2
        by_module[item.module] = min(by_module.get(item.module, 2), w)
    items.sort(key=lambda item: by_module[item.module])


@pytest.fixture(scope="session", autouse=True)
def _component_manifests_scanned_once():
    """Every AppTest builds a Streamlit runtime, and each runtime scans the metadata of every
    installed distribution for component manifests: 0.34 s of a 0.43 s first run with the test
    extras (~160 distributions), some 70 times a suite. Installed packages do not change during
    a run, so the scan runs once per process (what the app's own server does too)."""
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # the core-only environment of make test-min's subset
        yield
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(manifest_scanner, "scan_component_manifests",
                   functools.cache(manifest_scanner.scan_component_manifests))
        yield


def await_script_run(runner, timeout: float = 3, *, polled) -> None:
    """What Streamlit's ``local_script_runner.require_widgets_deltas`` (``polled``) does,
    without its polling: wait (``timeout`` seconds at most) for an AppTest run's script thread
    to finish, which it does after the run's last message; on timeout stop it and raise the
    same ``RuntimeError``. (Without a script thread to join, in a Streamlit that names it
    otherwise, it calls ``polled``.) Streamlit's version wakes every 1 ms to look, and each wake
    takes the GIL from the script thread. Alternated runs on 2 cores (2026-11-27): ``-m app``
    49.6-56.4 CPU-s against 54.6-60.9 with the polling; the whole suite 135.6, 143.4 and
    159.1 s (241-287 CPU-s) against 150.2, 164.4 and 188.1 s (270-345 CPU-s), the host's speed
    drifting meanwhile. tests/test_apptest_runs.py checks a run's both ends."""
    thread = getattr(runner, "_script_thread", None)
    if thread is None:
        return polled(runner, timeout)
    thread.join(timeout)
    if runner.script_stopped() or not thread.is_alive():
        return
    runner.request_stop()
    runner.join()
    raise RuntimeError(f"AppTest script run timed out after {timeout}(s)")


@pytest.fixture(scope="session", autouse=True)
def _apptest_runs_as_the_server_does(request):
    """Two changes to AppTest, in processes with app tests only (the others never import it):

    * AppTest gives every run a new ScriptCache, so each run read, rewrote ("magic") and
      compiled the page scripts again: 2.8 ms for dashboard/app.py and 8-10 ms for the Patterns
      or Population page, on every run of every app test. The app's own server keeps one cache
      for all sessions; so do the tests (a script's path names its text: AppTest.from_string
      writes each text to a file named by its hash).
    * A run's end is awaited by :func:`await_script_run` (it says why), not polled."""
    if not any(item.path.name in APP_FILES for item in request.session.items):
        yield
        return
    try:
        from streamlit.runtime.scriptrunner.script_cache import ScriptCache
        from streamlit.testing.v1 import app_test, local_script_runner
    except ImportError:  # the core-only environment of make test-min's subset
        yield
        return
    shared = ScriptCache()
    with pytest.MonkeyPatch.context() as mp:
        for module in (app_test, local_script_runner):  # pages, and the main script
            mp.setattr(module, "ScriptCache", lambda: shared)
        mp.setattr(local_script_runner, "require_widgets_deltas", functools.partial(
            await_script_run, polled=local_script_runner.require_widgets_deltas))
        yield


GC_THRESHOLD2 = 100
"""Young-generation collections between two full ones while the tests run (CPython: 10)."""


@pytest.fixture(scope="session", autouse=True)
def _fewer_full_collections():
    """The tests leave a large heap (Streamlit's messages and sessions, Plotly figures, frames,
    numba's and pandas' modules), so the cyclic collector's full passes were costly: ``-m app``
    in one process made 22 of them, 5.2 of its 6.9 CPU-s of collection out of 77; ``-m unit``
    on 2 workers 20, 4.5 CPU-s. So, from the first test on: what the imports and the collection
    left is frozen (never scanned again: it lives as long as the process), and full passes are
    10x rarer. ``-m app``: 3 full passes, 3.0 CPU-s in all, peak memory 618 -> 748 MB;
    ``-m unit``: 4.5 -> 2.4 CPU-s (measured with gc.callbacks and /usr/bin/time)."""
    before = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(before[0], before[1], max(before[2], GC_THRESHOLD2))
    try:
        yield
    finally:
        gc.set_threshold(*before)


@pytest.fixture(scope="session")
def _sample_once() -> pd.DataFrame:
    import lmdk_core

    return lmdk_core.load_sample()


@pytest.fixture
def sample(_sample_once: pd.DataFrame) -> pd.DataFrame:
    """The bundled sample (``load_sample()``), parsed once per session; each test gets a copy."""
    return _sample_once.copy()


@pytest.fixture
def fast_read_threshold(monkeypatch) -> int:
    """The readers' fast paths (the streaming Arrow reader for a file on disk, pandas' pyarrow
    engine for the in-memory fallback) from 64 KiB on instead of 1 MiB: the same code parses a
    0.2 MB file as a 1.5 MB one (one block either way), at a tenth of the CPU. Returns the
    threshold (bytes)."""
    from lmdk_core.readers import csv as stream_csv
    from lmdk_core.readers import text

    threshold = 1 << 16
    monkeypatch.setattr(stream_csv, "STREAM_MIN_BYTES", threshold)
    monkeypatch.setattr(text, "_PYARROW_MIN_BYTES", threshold)
    return threshold


# --------------------------------------------------------------------------- app layer


@pytest.fixture(scope="session")
def home(_sample_once: pd.DataFrame) -> tuple[float, float]:
    """Centre of alice's labelled home points in the sample (the sample's ground truth)."""
    s = _sample_once
    h = s[(s.uid == s.uid.iloc[0]) & (s.place == "home")]
    return float(h.lat.median()), float(h.lon.median())


@pytest.fixture
def fake_map(monkeypatch):
    """The map component replaced by apptest_helpers.FakeMap (what the page draws, and clicks)."""
    from apptest_helpers import FakeMap

    import dashboard.map_section as map_section

    fake = FakeMap()
    monkeypatch.setattr(map_section.map_element, "show", fake)
    return fake


@pytest.fixture
def app(fake_map):
    """The dashboard's first page after its first run, with no tile server (``?tiles=none``)."""
    from apptest_helpers import offline_page, run

    return run(offline_page())


@pytest.fixture
def app_home(fake_map, home):
    """``app`` with alice's home marked (apptest_helpers.marked_at_home): one run, for the
    tests about what follows a click on it, not the click itself."""
    from apptest_helpers import marked_at_home, offline_page

    return marked_at_home(offline_page(), home)


@pytest.fixture(scope="module")
def first_page():
    """(AppTest, FakeMap): the dashboard after its first run (``?tiles=none``), one per module,
    for the tests that only read it (they never click, set a widget or run it: a test that
    does takes ``app``)."""
    from apptest_helpers import FakeMap, offline_page, run

    import dashboard.map_section as map_section

    with pytest.MonkeyPatch.context() as mp:
        fake = FakeMap()
        mp.setattr(map_section.map_element, "show", fake)
        yield run(offline_page()), fake


# --------------------------------------------------------------------------- e2e layer


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """``streamlit run dashboard/app.py`` on a free loopback port, one per test process (each
    xdist worker), shared by the browser test modules: each test opens its own page, which is
    its own session with its own state; yields the base URL. (One per module cost each module
    a server start and a cold first page, ~1.6 s slower than a warm one.)"""
    from browser_driver import free_port, start_server, stop_server

    log = tmp_path_factory.mktemp("streamlit") / "server.log"
    proc = start_server(port := free_port(), log)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_server(proc)


@pytest.fixture(scope="session")
def pw():
    """Playwright's sync API, one per test process: it runs its own event loop, so a second one
    cannot start while the first lives; tests that need a browser of their own launch it here."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(pw):
    """Debian's headless Chromium under Playwright (browser_driver.CHROMIUM), one per test
    process (each xdist worker), shared by the browser test modules: each test opens its own
    page, which is its own browsing context (no cookies or storage shared). One per module cost
    each module a browser start and a cold first page."""
    from browser_driver import launch

    b = launch(pw)
    yield b
    b.close()
