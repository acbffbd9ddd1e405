"""Packaging: a light core import, optional extras that fail clearly, a wheel that carries the
sample, and declared dependency floors kept in step with the tested constraints file."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))

# Any import of these packages fails, as if only the core dependencies were installed.
BLOCKER = """
import importlib.abc, sys
BLOCKED = {"plotly", "folium", "branca", "streamlit", "xstatic"}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)")
        return None
"""
BLOCK_EXTRAS = BLOCKER + "sys.meta_path.insert(0, Block())\n"


def run_python(code: str, cwd: Path = REPO, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd,
        env={**os.environ, **env},
    )


# The two import checks below run first in the one fresh interpreter of this file (each a fresh
# import of lmdk_core, 1.5 CPU-s): first, with every extra installed, `import lmdk_core` loads
# none of the blocked packages (so the core checks that follow, made with them blocked, run the
# very same import); then the core works with the extras blocked and naming one fails naming its
# extra; last, the block lifted, the same names load their extra on first use (a failed import
# leaves nothing behind in sys.modules, so this is the first successful load of each). The same
# interpreter then runs the installed wheel (fixture `installed`).
IMPORTS = BLOCKER + (
    "import lmdk_core as lm\n"
    "eager = BLOCKED - {'xstatic'}  # xstatic: a namespace package the site's .pth loads\n"
    "assert not eager & {m.split('.')[0] for m in sys.modules}, 'imported eagerly'\n"
    "blocker = Block()\n"
    "sys.meta_path.insert(0, blocker)\n"
    "traj = lm.select_user(lm.load_sample(), 'alice').iloc[:2000]\n"
    "L = lm.landmark_mask(traj, [lm.Place('Home', 39.9925, 116.3395, 100)])\n"
    "rel = lm.release_locations(traj, L, epsilon=1.0, scheme='skip', radius_m=200, rng=1)\n"
    "assert lm.landmark_guarantee(rel.budget, L).max() <= 1.0 + 1e-9\n"
    "assert 'lat' in lm.release_to_csv(rel).splitlines()[0]\n"
    "model = lm.transition_matrix(traj, cell_m=500)\n"
    "lm.temporal_loss(rel.budget[:50], model.P_backward, model.P_forward)\n"
    "for name, extra in [('allocation_figure', 'plot'), ('PALETTE', 'plot'),\n"
    "                    ('trajectory_map', 'app'), ('figures', 'plot'), ('maps', 'app')]:\n"
    "    try:\n"
    "        getattr(lm, name)\n"
    "    except lm.LmdkError as e:\n"
    "        assert isinstance(e, ImportError), type(e)\n"
    "        assert f\"pip install 'lmdk[{extra}]'\" in str(e), str(e)\n"
    "        print(e)\n"
    "    else:\n"
    "        raise AssertionError(name + ' loaded without its extra')\n"
    "assert not {'plotly', 'folium', 'streamlit'} & set(sys.modules)\n"
    "print('--- extras installed')\n"
    "sys.meta_path.remove(blocker)\n"
    "assert not {'folium', 'plotly'} & set(sys.modules), 'imported eagerly'\n"
    "assert lm.trajectory_map is lm.maps.trajectory_map and 'folium' in sys.modules\n"
    "assert lm.allocation_figure is lm.figures.allocation_figure and 'plotly' in sys.modules\n"
    "from lmdk_core import error_figure, PALETTE\n"
    "try:\n    lm.no_such_name\nexcept AttributeError as e:\n    print(e)\n"
)


@pytest.fixture(scope="module")
def imports(installed) -> tuple[list[str], list[str]]:
    """:data:`IMPORTS`' output: (lines with the extras blocked, lines with them installed)."""
    return installed[0], installed[1]


def test_import_does_not_load_plotly_or_folium_until_asked_for(imports):
    assert any("has no attribute 'no_such_name'" in line for line in imports[1])


@pytest.mark.slow
def test_core_works_without_any_extra_and_extras_fail_naming_the_extra(imports):
    blocked = "\n".join(imports[0])
    assert "lmdk_core.figures needs plotly, which is not installed" in blocked
    assert "lmdk_core.maps needs folium, which is not installed" in blocked


def test_the_block_really_blocks():
    """Control for the test above: the same harness makes a plain `import plotly` fail."""
    out = run_python(BLOCK_EXTRAS + "import plotly\n", PYTHONPATH=str(REPO))
    assert out.returncode != 0 and "blocked by the test" in out.stderr


def _requirements() -> list[str]:
    project = PYPROJECT["project"]
    reqs = list(project["dependencies"])
    for group in project["optional-dependencies"].values():
        reqs += [r for r in group if not r.startswith("lmdk[")]
    return reqs


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def _floors() -> dict[str, str]:
    """The highest declared floor of each package (an extra may need more than another)."""
    floors: dict[str, str] = {}
    for req in _requirements():
        requirement = req.split(";")[0].strip()
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[\w,]+\])?>=([0-9.]+)", requirement)
        assert m, f"every dependency needs a plain '>=' floor: {req!r}"
        name, floor = m.group(1).lower(), m.group(2)
        if name not in floors or _version(floor) > _version(floors[name]):
            floors[name] = floor
    return floors


def test_constraints_file_pins_exactly_the_declared_floors():
    pins = {}
    for line in (REPO / "constraints" / "minimum.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[name.strip().lower()] = version.strip()
    floors = _floors()
    assert set(pins) == set(floors)
    for name, floor in floors.items():
        pinned, want = _version(pins[name]), _version(floor)
        # the oldest release of the declared floor series, e.g. >=1.9 -> 1.9.3.0, >=1.53 -> 1.53.0
        assert pinned[: len(want)] == want, f"{name}: pinned {pins[name]}, floor {floor}"


def test_core_dependencies_are_only_the_library_essentials():
    core = {re.split(r"[<>=]", r)[0].lower() for r in PYPROJECT["project"]["dependencies"]}
    # cryptography: the ChaCha20 keystream every real release draws from (lmdk_core.noise)
    assert core == {"numpy", "pandas", "pyarrow", "numba", "cryptography"}
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert "needs only numpy, pandas, pyarrow, numba and cryptography" in readme  # says so
    app = " ".join(PYPROJECT["project"]["optional-dependencies"]["app"])
    assert "streamlit>=1.53" in app  # cache_resource(scope="session") first appears in 1.53.0


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built offline from a copy of the source (the checkout stays clean), by the
    build backend pyproject.toml declares, called through its PEP 517 ``build_wheel`` hook in a
    subprocess: what ``pip wheel --no-build-isolation`` calls, without pip's own start-up
    (0.6 instead of 1.5 CPU-s; the same files with the same contents)."""
    pytest.importorskip("setuptools", minversion="77")
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for pkg in ("lmdk_core", "dashboard"):
        shutil.copytree(REPO / pkg, src / pkg, ignore=ignore)
    out = tmp_path_factory.mktemp("dist")
    backend = PYPROJECT["build-system"]["build-backend"]
    hook = f"import {backend} as b; print(b.build_wheel({str(out)!r}))"
    done = subprocess.run([sys.executable, "-c", hook], cwd=src, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (whl,) = out.glob("lmdk-*.whl")
    assert done.stdout.splitlines()[-1] == whl.name  # the hook names the file it wrote
    return whl


@pytest.fixture(scope="module")
def site(wheel, tmp_path_factory) -> Path:
    """The wheel unpacked, as an installer lays it out, once for the tests that run it."""
    folder = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(folder)
    return folder


LOAD_SAMPLE = """
import lmdk_core, pathlib
assert pathlib.Path(lmdk_core.__file__).is_relative_to({site!r})
df = lmdk_core.load_sample()
print(len(df), sorted(df['uid'].unique()))
"""
"""Loads the sample from the installed copy and prints its size and users (one line)."""


# After IMPORTS, the same interpreter leaves the checkout: it forgets every lmdk_core module it
# imported from there, puts the unpacked wheel where PYTHONPATH put the checkout, and imports
# lmdk_core afresh from the wheel (numpy, pandas and numba stay loaded: they are not the code
# under test, and re-importing them was 1.5 of this file's 6 CPU-s).
SWITCH = """
import importlib
sys.path[:] = [{site!r} if p == {repo!r} else p for p in sys.path]
assert {site!r} in sys.path and {repo!r} not in sys.path, sys.path
for m in [m for m in sys.modules if m.split('.')[0] in ('lmdk_core', 'dashboard')]:
    del sys.modules[m]
importlib.invalidate_caches()
"""

# Last: every lmdk_core / lmdk_dashboard module loaded after the switch came from the wheel.
ONLY_INSTALLED = """
site = pathlib.Path({site!r})
loaded = {{n: getattr(m, '__file__', None) for n, m in list(sys.modules.items())
          if n.split('.')[0] in ('lmdk_core', 'lmdk_dashboard', 'dashboard')}}
assert loaded and all(f is None or pathlib.Path(f).is_relative_to(site)
                      for f in loaded.values()), loaded
"""


@pytest.fixture(scope="module")
def installed(site, tmp_path_factory) -> tuple[list[str], list[str], list[str], list[str]]:
    """One interpreter, run from elsewhere, for every test that needs a fresh one (each
    interpreter is 1.5 CPU-s of numpy/pandas/numba imports, 2.7 with the wheel's modules
    compiled afresh): :data:`IMPORTS` with the checkout on the path, then :data:`SWITCH` to the
    unpacked wheel alone, :data:`LOAD_SAMPLE` (which imports lmdk_core alone, no
    lmdk_dashboard, so :data:`RUN_HEADERS`'s check of which app package got imported still sees
    only what the headers import), :data:`RUN_HEADERS` and :data:`ONLY_INSTALLED`. Each test
    gets its part of the output: (lines with the extras blocked, lines with them installed,
    sample line, headers lines)."""
    code = (IMPORTS + "print('--- installed')\n"
            + SWITCH.format(site=str(site), repo=str(REPO))
            + LOAD_SAMPLE.format(site=str(site)) + "print('--- headers')\n" + RUN_HEADERS
            + ONLY_INSTALLED.format(site=str(site)))
    done = run_python(code, cwd=tmp_path_factory.mktemp("elsewhere"), PYTHONPATH=str(REPO))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    cut = [lines.index(m) for m in ("--- extras installed", "--- installed", "--- headers")]
    return (lines[:cut[0]], lines[cut[0] + 1:cut[1]], lines[cut[1] + 1:cut[2]],
            lines[cut[2] + 1:])


@pytest.mark.slow
def test_wheel_carries_the_sample_and_licence_and_loads_it_when_installed(wheel, installed,
                                                                          sample):
    import lmdk_core

    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = zf.read(meta).decode()
    assert wheel.name.startswith(f"lmdk-{lmdk_core.__version__}-")
    assert "lmdk_core/data/sample_trajectories.csv" in names and "lmdk_core/py.typed" in names
    # the app under its own name (a top-level `dashboard` would collide with other projects)
    assert {n.split("/")[0] for n in names if not n.startswith("lmdk-")} == {
        "lmdk_core", "lmdk_dashboard"}
    assert {f"lmdk_dashboard/{f}" for f in ("app.py", "page_patterns.py", "page_population.py",
                                            "charts.py", "state.py")} <= names
    assert "lmdk_dashboard/assets/plotly-lmdk.min.js" in names  # the charts' plotly.js
    assert "lmdk_core/landmark_map.js" in names  # the map's front end (dashboard and Jupyter)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not any(n.startswith(("tests/", "data/", "bench/")) for n in names)
    assert "License-Expression: MIT" in metadata
    requires = [ln for ln in metadata.splitlines() if ln.startswith("Requires-Dist:")]
    core = [ln for ln in requires if "extra ==" not in ln]
    assert sorted(ln.split()[1].split(">")[0] for ln in core) == [
        "cryptography", "numba", "numpy", "pandas", "pyarrow"]
    # the installed copy, not the checkout: run from elsewhere with only the unpacked wheel
    (line,) = installed[2]  # LOAD_SAMPLE's one line
    n, users = line.split(" ", 1)
    assert int(n) == len(sample)
    assert users.strip() == "['alice', 'bob', 'carol', 'dave']"


# The header of each page script, run as Streamlit's script runner runs a script (a fresh
# __main__ module with only __file__ set): the PEP 366 lines must import its own package.
RUN_HEADERS = """
import ast, pathlib, sys, types
from lmdk_core.cli import app_path, main
app = app_path()
for name in ("app.py", "page_patterns.py", "page_population.py"):
    path = app.with_name(name)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    n = next(i for i, s in enumerate(tree.body)
             if not isinstance(s, (ast.Expr, ast.Import, ast.ImportFrom, ast.If)))
    module = types.ModuleType("__main__")
    module.__dict__["__file__"] = str(path)
    exec(compile(ast.Module(body=tree.body[:n], type_ignores=[]), str(path), "exec"),
         module.__dict__)
    print(name, module.__package__, module.state.__file__)
print(sorted({m.split(".")[0] for m in sys.modules} & {"dashboard", "lmdk_dashboard"}))
main(["app", "--dry-run"])
"""


@pytest.mark.slow
def test_installed_app_imports_itself_by_its_installed_name(site, installed):
    """From the unpacked wheel alone: `lmdk app` finds lmdk_dashboard/app.py there, and the
    scripts' headers import lmdk_dashboard.* from there (never a `dashboard` package)."""
    pkg = site / "lmdk_dashboard"
    lines = installed[3]
    for line, name in zip(lines[:3], ("app.py", "page_patterns.py", "page_population.py"),
                          strict=True):
        assert line == f"{name} lmdk_dashboard {pkg / 'state.py'}"
    assert lines[3] == "['lmdk_dashboard']"
    assert f"streamlit run {pkg / 'app.py'} --server.port 8501" in lines[4]
