"""The code stays clean under ruff and mypy, as configured in pyproject.toml (`make lint`)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _run(tool: str, *args: str) -> subprocess.CompletedProcess:
    if importlib.util.find_spec(tool) is None:
        pytest.skip(f"{tool} is not installed (pip install 'lmdk[lint]')")
    return subprocess.run(
        [sys.executable, "-m", tool, *args], cwd=REPO, capture_output=True, text=True
    )


def test_ruff_finds_nothing():
    done = _run("ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def mypy_cache_dir() -> Path:
    """Where the test keeps mypy's incremental cache: the user's cache folder, outside the
    checkout, so a fresh clone or worktree starts warm (a cold run took 12 CPU-s, a warm one
    about 1.5 CPU-s, also from another checkout of the same code). mypy keys each module's entry
    on its source's hash and the entries of what it imports, so a changed module, and every
    module depending on it, is checked again: the cache never hides an error."""
    home = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(home) / "lmdk" / "mypy"


@pytest.mark.slow
def test_mypy_finds_nothing():
    # MYPY_CACHE_DIR, when set, is mypy's own choice of cache and wins
    cache = () if os.environ.get("MYPY_CACHE_DIR") else ("--cache-dir", str(mypy_cache_dir()))
    done = _run("mypy", *cache)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout
