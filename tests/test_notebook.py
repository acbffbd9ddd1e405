"""The notebooks run top to bottom at small settings (executed with nbclient) and show what they
claim: each gets small parameters injected after its ``parameters`` cell (as papermill does) and
a check cell appended that asserts on the notebook's own variables. The figures the conclusions
quote are printed and their claims asserted by the notebook's own last code cell, so a conclusion
the code no longer bears out fails here too. population.ipynb and patterns.ipynb run as committed
(their own settings are small)."""

from __future__ import annotations

import pathlib
import time

import pytest
from notebook_runner import output_mimes, read_stripped, run, start_kernel

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"

SMALL = {
    "explore.ipynb": """
INTERVAL_S = 600
RUNS = 2
FIGURE_FORMAT = "html"
FIGURE_DIR = {tmp!r}
""",
    "landmark_evaluation.ipynb": """
RUNS = 3
N = 200
EPSILONS = (1.0,)
SHARES = (0.0, 0.4, 1.0)
""",
    "temporal_loss.ipynb": """
N = 200
STRENGTHS = (0.0, 0.01, 1.0)
INTERVAL_S = 1800
""",
}

CHECKS = {
    "explore.ipynb": """
assert ex.places == places and len(ex.release) == len(traj)
assert ex.report()["settings"]["private"].startswith("PRIVATE")
assert "seed" not in json.dumps(report)
assert list(public.columns) == ["time", "lat", "lon"]
assert all(p.exists() and p.stat().st_size > 100_000 for p in saved)
""",
    "landmark_evaluation.ipynb": """
v = verdicts.set_index("claim")
assert v.loc["0 % = event level", "holds"].all()
assert v.loc["100 % = user level", "holds"].all()
assert v.loc["better than user level", "holds"].all()
assert len(runs) == RUNS * len(SHARES) * len(EPSILONS) * len(SCHEMES) * 2
""",
    "temporal_loss.ipynb": """
identity = by_strength[by_strength.s == 0.0].set_index("scheme")
for scheme, eps in budgets.items():  # perfect correlation: TPL reaches the whole spend
    assert abs(identity.loc[scheme, "max TPL"] - eps.sum()) <= 1e-6 * eps.sum()
weak = by_strength[by_strength.s == max(STRENGTHS)].set_index("scheme")
assert (weak["max TPL"] <= identity["max TPL"] + 1e-12).all()
""",
}


@pytest.fixture(scope="module")
def kernel():
    """One kernel for the five notebooks: its start and the imports every notebook makes
    (numpy, pandas, Plotly, lmdk_core, numba's first dispatch) cost ~3 CPU-s each time. Each
    notebook still runs in a fresh namespace (notebook_runner.FRESH_NAMESPACE asserts it), in
    any order; none changes shared module state (no option, global seed, warning filter outside
    ``catch_warnings``, working directory or patched attribute; lmdk_core's caches hold constants),
    and each cell's outputs come only from its own execution (nbclient keeps the messages whose
    parent is that cell). After a failure notebook_runner.run restarts it for the next notebook."""
    km = start_kernel(NOTEBOOKS)
    yield km
    km.shutdown_kernel(now=True)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SMALL))
def test_notebook_executes_and_shows_what_it_claims(name, tmp_path, kernel):
    nbformat = pytest.importorskip("nbformat")
    if name == "explore.ipynb":
        pytest.importorskip("anywidget")
    nb = read_stripped(NOTEBOOKS / name)
    first, last = nb.cells[0], nb.cells[-1]
    assert first.cell_type == "markdown" and "**Question.**" in first.source
    assert last.cell_type == "markdown" and last.source.startswith("## What this showed")
    figures = nb.cells[-2]  # the conclusions' figures are computed, and their claims asserted
    assert figures.cell_type == "code" and "assert " in figures.source, (
        f"{name}: compute the figures 'What this showed' rests on, and assert its claims, in the "
        "cell before it (issue 24 finding 12: numbers typed in prose go stale)")

    at = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    small = nbformat.v4.new_code_cell(SMALL[name].format(tmp=str(tmp_path)))
    nb.cells.insert(at + 1, small)
    nb.cells.append(nbformat.v4.new_code_cell(CHECKS[name]))
    start = time.perf_counter()
    run(nb, NOTEBOOKS, kernel, timeout=180)
    print(f"{name}: {time.perf_counter() - start:.1f} s")
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    mimes = output_mimes(nb)
    assert "application/vnd.plotly.v1+json" in mimes
    if name == "explore.ipynb":
        assert "application/vnd.jupyter.widget-view+json" in mimes  # the explorer itself


@pytest.mark.slow
def test_population_notebook_executes_without_errors(kernel):
    nb = run(read_stripped(NOTEBOOKS / "population.ipynb"), NOTEBOOKS, kernel)
    assert "application/vnd.plotly.v1+json" in output_mimes(nb)
    # the error table ranks the personalised release above Minimum and user-level
    table = nb.cells[5].outputs[0]["data"]["text/plain"]
    assert "personalised" in table and "user_level" in table


@pytest.mark.slow
def test_patterns_notebook_executes_without_errors(kernel):
    nb = run(read_stripped(NOTEBOOKS / "patterns.ipynb"), NOTEBOOKS, kernel)
    assert "parameters" in nb.cells[1].metadata.get("tags", [])
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.get("output_type") == "error"]
    assert not errors
    assert "application/vnd.plotly.v1+json" in output_mimes(nb)
