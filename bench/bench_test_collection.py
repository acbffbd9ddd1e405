"""CPU of one pytest collection of the suite, with and without cached bytecode for the tests.

Usage: ``.venv/bin/python bench/bench_test_collection.py [--repeat N]``

`make test` collects every test file once in each worker (pytest-xdist), so a collection's cost
is paid twice a run on 2 cores. pytest rewrites the asserts of each test module and caches the
result as bytecode, unless ``sys.dont_write_bytecode`` is set (``PYTHONDONTWRITEBYTECODE=1``, as
some sandboxes and containers set): then every collection parses, rewrites and compiles all the
test modules again. tests/conftest.py turns the cache back on for the pytest processes.

Both variants run in a fresh copy of the committed tree (``git archive HEAD``), in the same run,
interleaved, each ``pytest --collect-only`` in its own process with ``PYTHONDONTWRITEBYTECODE=1``:

* ``no cache``: a plugin hook at session start puts ``sys.dont_write_bytecode`` back to True
  after tests/conftest.py has set it, in a copy that holds no bytecode of its own (what every
  run paid before; the copy's caches are removed before each such run);
* ``cached``: the suite as committed, after one warm-up collection in its copy.

Printed: CPU seconds (user + sys of the collecting process, ``os.times``) of each run, the
least of each variant and their ratio.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NO_CACHE_PLUGIN = """
import sys
def pytest_sessionstart(session):
    sys.dont_write_bytecode = True  # undo tests/conftest.py: the behaviour before it
"""


def copy_tree(dest: Path) -> None:
    """The committed tree (HEAD) unpacked into ``dest``."""
    archive = dest.with_suffix(".tar")
    subprocess.run(["git", "-C", str(REPO), "archive", "-o", str(archive), "HEAD"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    archive.unlink()


def drop_bytecode(root: Path) -> None:
    for d in root.rglob("__pycache__"):
        shutil.rmtree(d, ignore_errors=True)


def collect(cwd: Path, *plugin: str) -> float:
    """CPU seconds of one ``pytest --collect-only`` run in ``cwd`` (a child process)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(cwd.parent)}
    before = os.times()
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:cacheprovider", *plugin], cwd=cwd, env=env,
                          capture_output=True, text=True)
    after = os.times()
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return (after.children_user - before.children_user
            + after.children_system - before.children_system)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="collections of each variant")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="lmdk-bench-collect-") as tmp:
        base = Path(tmp)
        (base / "no_bytecode_plugin.py").write_text(NO_CACHE_PLUGIN)
        plain, cached = base / "plain", base / "cached"
        for d in (plain, cached):
            d.mkdir()
            copy_tree(d)
        collect(cached)  # warm-up: writes the caches this variant reads from then on
        runs: dict[str, list[float]] = {"no cache": [], "cached": []}
        for _ in range(args.repeat):
            drop_bytecode(plain)
            runs["no cache"].append(collect(plain, "-p", "no_bytecode_plugin"))
            runs["cached"].append(collect(cached))
        for name, cpu in runs.items():
            print(f"{name:9s} CPU s per collection: " + ", ".join(f"{c:.2f}" for c in cpu))
        best = {name: min(cpu) for name, cpu in runs.items()}
        print(f"least: no cache {best['no cache']:.2f} s, cached {best['cached']:.2f} s; "
              f"ratio {best['no cache'] / best['cached']:.2f}x; saved per make test on 2 "
              f"workers: {2 * (best['no cache'] - best['cached']):.1f} CPU-s")


if __name__ == "__main__":
    main()
