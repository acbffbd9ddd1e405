# Two commands: `make run` (dashboard on the bundled sample) and `make test` (whole suite).
# Both create .venv on first use and reinstall only when pyproject.toml changes.
# Also: `make test-fast` (no slow or browser tests), `make lint` (ruff + mypy), `make test-min`
# (the fast unit tests and the app layer against the oldest declared dependency versions, in
# .venv-min).
# Layers (pytest markers tests/conftest.py gives every test file, one each; tests/test_layers.py
# checks): `make test-unit` (-m unit: library, CLI, docs, packaging), `make test-app` (-m app: the
# pages under Streamlit's AppTest) and `make test-e2e` (-m e2e: headless Chromium, JupyterLab,
# notebook kernels) each run alone; `make test` runs all three (what CI runs).
# `make test` and `make test-fast` run on every core (pytest-xdist). Files stay whole on one
# worker (--dist loadfile): some modules share one page (AppTest or Chromium) between their
# tests. tests/conftest.py puts the browser and slow files first and --no-loadscope-reorder
# keeps that order (xdist's own puts the files with most tests first, which left the few-test
# browser and notebook files for last and one worker idle at the end); it also compiles the numba
# kernels once before the workers' first test (tests/numba_warmup.py). Timing (pytest's figure,
# 2 cores): 95-109 s idle two sessions before issue 29 (1,345 tests); 320-346 s (1,597 tests)
# when issue 29 was taken up; after its test changes (one page load per dashboard page for axe +
# modebar, one resized page for the three map sizes, one AppTest first run per module for the
# read-only tests, no fixed sleeps, Ctrl-C tests that no longer wait out a SIGINT the xdist
# worker ignores) 189 s for 1,832 tests in a clean worktree on an idle machine (250 CPU-s in all
# processes, /usr/bin/time user+sys, servers and browsers included) and 202 s from a fresh clone
# with `CI=true make test`. -n 3 took 192 s (276 CPU-s): no gain, so -n auto stays. Later
# (1,905 tests, the machine ~1.4x slower than at its fastest): 302 s in a clean worktree,
# 383 CPU-s; the browser's rendering (~7 CPU-s a page load, 1-2 a rerun) is most of it.
# 2026-11-26 (1,902 tests; charts below the fold drawn only when in view, one notebook kernel,
# fewer AppTest runs per test): 222 s in a clean worktree, 411 CPU-s in all processes (a cpuacct
# cgroup); from a fresh clone (numba's cache empty) 242 s. Later that day (1,905 tests; second
# pass over every layer): 181-193 s in a clean worktree, 332-352 CPU-s; a fresh worktree (numba's
# cache empty) 219 s, 407 CPU-s; a fresh clone 236 s. 2026-11-26 evening (third pass: fewer page
# runs per AppTest, one dashboard load fewer, a frozen heap for the collector): 159-204 s and
# 290-339 CPU-s in a clean worktree, against 167-203 s and 304-373 CPU-s for the tree before,
# run alternately (the host's speed alone moves a run by 25 %); a fresh clone 192 s, 353 CPU-s.
# 2026-11-26 night (1,910 tests; a hung kaleido export and two flakes fixed): 154-169 s and
# 277-307 CPU-s in a clean worktree, alternated with the tree before (160-163 s, 294-298 CPU-s,
# and one run hung as CI's did); eight fresh clones in a row all passed, 197-216 s when
# nothing else ran (298 and 351 s beside a helper's work). Later that night (1,912 tests):
# 157 s in a clean worktree (numba's cache warm); fresh clones alternated with the tree before:
# 200-207 s and 366-376 CPU-s against 198-202 s and 366-370 CPU-s (the same). Of a warm run's
# ~280 CPU-s, Chromium takes ~90 (Streamlit's own rendering: ~3.5 CPU-s a page load, ~0.4 a
# rerun that changes nothing), the dashboard servers ~19, Jupyter ~13; a fresh clone adds ~50 of
# numba compilation (tests/numba_warmup.py). 2026-11-27, nothing else running (1,913 tests):
# 122-131 s in a clean worktree (207-227 CPU-s), 136-146 s (238-250) in a slower hour of the
# host, old and new trees alike; from an empty numba cache 139-141 s and 244-248
# CPU-s, against 144-145 s and 255-257 for the tree before, alternated (the exp coin compiled
# once, the warm-up's halves balanced: bench/bench_compile.py, 30.5 -> 21.1 CPU-s); a fresh clone
# 147 s (198 s with the venv and the install). The end-to-end files keep ~1 core busy each (the
# first ~60 s of a run use ~150 % of 2 cores); neither -n 3 (128 and 135 s against 128 and 134)
# nor spreading them among the unit files (130 and 135 s against 125 and 131) was faster. With
# the kernels compiled while pip installs the test extras (below): a fresh clone 139 s, 191 s
# in all (install 56 s, the kernels compiled within it). Later (1,917 tests; AppTest's runs
# awaited instead of polled every 1 ms, tests/conftest.py): 135.6, 143.4 and 159.1 s (241-287
# CPU-s) against 150.2, 164.4 and 188.1 s (270-345) for the tree before, alternated, in an hour
# when the host moved the tree before from 270 to 345 CPU-s. Then a fresh clone 149.0 s (206.2 s
# in all) and, right after, the used checkout 147.9 s (258 CPU-s): a slow hour of the host.
# 2026-11-27, later (1,925 tests, after issue 29's audit mends): 141.5-155.9 s and 252-280 CPU-s
# in a used checkout, the processes using 89 % of the 2 cores over a run (82 % while the
# browser files run, 98 % after); the suite is bound by CPU.
# `make test-serial` runs it in one process.
PYTHON ?= python3
PORT ?= 8501
VENV := .venv
PY := $(VENV)/bin/python
RUN_STAMP := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test
MIN_VENV := .venv-min
FAST := -m "not slow and not browser"

.PHONY: run test test-serial test-fast test-unit test-app test-e2e test-min lint bench chromium clean

$(PY):
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "lmdk needs Python >= 3.11"'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# $(call install_compiling,EXTRA,SEP): the core first; then, while pip installs the extra, numba
# compiles lmdk's kernels (tests/numba_warmup.py's two halves, ~21 CPU-s on an empty cache), so
# that neither the app's first page nor the suite's first tests compile them. SEP `&` runs the
# halves side by side, `;` one after the other. From a fresh clone (2026-11-27): `make run`'s
# install took 42.8 s with `&` (49.3 with `;`, 39.3 without) and its first page 4.4 s instead
# of 16.6; `make test`'s 52-57 s with `;` (~50 without) and 76 s in one try with `&`, where the
# halves and pip's longer install shared the 2 cores. Best effort: whatever is not compiled
# here (an error, a package pip replaced meanwhile) is compiled where it is first used, as
# without this (the suite's own warm-up, tests/conftest.py, is then a ~1 s run).
define install_compiling
$(PY) -m pip install --quiet -e .
{ { for part in schemes rest; do $(PY) tests/numba_warmup.py $$part /dev/null $(2) done; \
    wait; } >/dev/null 2>&1 & \
  $(PY) -m pip install --quiet -e '.[$(1)]'; status=$$?; wait; exit $$status; }
endef

$(RUN_STAMP): pyproject.toml | $(PY)
	$(call install_compiling,app,&)
	touch $@

$(TEST_STAMP): pyproject.toml | $(PY)
	$(call install_compiling,test,;)
	touch $@ $(RUN_STAMP)

run: $(RUN_STAMP)
	@echo "lmdk dashboard: http://127.0.0.1:$(PORT)  (Ctrl+C to stop)"
	$(PY) -m streamlit run dashboard/app.py --server.port $(PORT)

# Browser tests drive Debian's chromium-headless-shell (what Playwright runs headless: the same
# engine without the desktop browser; Playwright cannot download a browser here). A machine with
# only the full chromium runs them on that (tests/browser_driver.py picks).
chromium:
	@if ! command -v chromium-headless-shell >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian's chromium-headless-shell for the browser tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      chromium-headless-shell >/dev/null; \
	  elif ! command -v chromium >/dev/null 2>&1; then \
	    echo "chromium missing and not root: browser tests will be skipped"; \
	  fi; \
	fi

PARALLEL := -n auto --dist loadfile --no-loadscope-reorder

test: $(TEST_STAMP) chromium
	$(PY) -m pytest $(PARALLEL)

test-serial: $(TEST_STAMP) chromium
	$(PY) -m pytest

test-fast: $(TEST_STAMP)
	$(PY) -m pytest $(FAST) $(PARALLEL) -q

# The three layers (tests/conftest.py assigns each file one; tests/test_layers.py checks it), each
# runnable alone: together they are exactly `make test`.
test-unit: $(TEST_STAMP)
	$(PY) -m pytest -m unit $(PARALLEL) -q

test-app: $(TEST_STAMP)
	$(PY) -m pytest -m app $(PARALLEL) -q

test-e2e: $(TEST_STAMP) chromium
	$(PY) -m pytest -m e2e $(PARALLEL) -q

lint: $(TEST_STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

# The declared floors, tested: a fresh venv with exactly constraints/minimum.txt, the fast unit
# layer (the library, CLI and packaging) and the app layer (every page under AppTest) on every
# core. The core's pandas floor is 2.2.2 (pandas 2 and 3 are both supported: see
# lmdk_core/times.py), so this runs them on pandas 2.2.2 with numpy 2.0.2, plotly 5.18 and
# streamlit 1.67 (the app layer there: 175 passed in 36 s, 2026-11-27). Other selections:
# make test-min MIN_TESTS='-m "unit and not slow"'.
# Not the lint: the floor's ruff sorts imports differently from the current one (make lint).
# numba's cache goes to .venv-min: the floor's numba rewrote the index files .venv's numba
# reads (beside lmdk_core's sources), so the next make test compiled every kernel again.
MIN_TESTS ?= -m "(unit and not slow and not browser) or app"
test-min:
	rm -rf $(MIN_VENV)
	$(PYTHON) -m venv $(MIN_VENV)
	$(MIN_VENV)/bin/python -m pip install --quiet -c constraints/minimum.txt -e '.[test]'
	$(MIN_VENV)/bin/python -m pip list --format=freeze | grep -iE '^(numpy|pandas|pyarrow|numba|streamlit|plotly)=='
	NUMBA_CACHE_DIR=$(MIN_VENV)/numba-cache $(MIN_VENV)/bin/python -m pytest $(MIN_TESTS) \
	  $(PARALLEL) -q -p no:cacheprovider --ignore=tests/test_lint.py

bench: $(TEST_STAMP)
	for f in bench/bench_*.py; do $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) $(MIN_VENV) .pytest_cache .hypothesis .mypy_cache .ruff_cache

# JupyterLab on the project's environment with the explorer and the research notebooks.
# Loopback only; no news feed, update check or extension-manager request leaves the machine.
NB_PORT ?= 8888
JUPYTER_STAMP := $(VENV)/.installed-jupyter

$(JUPYTER_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[jupyter]'
	touch $@ $(RUN_STAMP)

.PHONY: notebook
notebook: $(JUPYTER_STAMP)
	$(PY) -m jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.port=$(NB_PORT) \
	  --ServerApp.root_dir=notebooks --LabApp.news_url=None \
	  --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate \
	  --LabApp.extension_manager=readonly $$([ "$$(id -u)" = 0 ] && echo --allow-root)
