"""The app's installed name: the wheel ships the repository's ``dashboard/`` as ``lmdk_dashboard``
(no generic top-level ``dashboard``), and ``lmdk app`` finds the app by the installed package.

The wheel itself (its top-level names, the app running under its installed name) is checked in
tests/test_package.py, which builds it once for the module."""

from __future__ import annotations

import importlib.util
import shlex
import sys
import tomllib
from pathlib import Path

import pytest

from lmdk_core import cli
from lmdk_core.errors import LmdkError

REPO = Path(__file__).resolve().parent.parent
TOOL = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def _packages_on_disk() -> set[str]:
    """Every directory under lmdk_core/ and dashboard/ that holds files, as its installed name."""
    found = set()
    for top, name in (("lmdk_core", "lmdk_core"), ("dashboard", "lmdk_dashboard")):
        for d in [REPO / top, *(REPO / top).rglob("*")]:
            if d.is_dir() and d.name != "__pycache__" and any(f.is_file() for f in d.iterdir()):
                found.add(".".join([name, *d.relative_to(REPO / top).parts]))
    return found


def test_the_package_list_names_every_package_and_the_app_under_its_own_name():
    """The explicit list in pyproject.toml cannot go stale: a new subpackage must be added."""
    assert set(TOOL["packages"]) == _packages_on_disk()
    assert TOOL["package-dir"] == {"lmdk_dashboard": "dashboard"}
    assert not any(p.split(".")[0] == "dashboard" for p in TOOL["packages"])
    assert set(TOOL["package-data"]) <= set(TOOL["packages"])


def test_lmdk_app_dry_run_names_the_installed_app(capsys):
    """The command runs the app file of the installed lmdk_dashboard (in the project's editable
    install: the dashboard/ of the checkout the venv was installed from)."""
    assert cli.main(["app", "--dry-run", "--port", "8600"]) == 0
    cmd = shlex.split(capsys.readouterr().out)
    spec = importlib.util.find_spec(cli.APP_PACKAGE)
    assert spec is not None and spec.origin is not None
    installed = Path(spec.origin).parent
    assert cmd == [sys.executable, "-m", "streamlit", "run", str(installed / "app.py"),
                   "--server.port", "8600"]
    assert installed.name == "dashboard" and (installed / "app.py").is_file()


def test_lmdk_app_without_the_package_says_so(monkeypatch, capsys):
    monkeypatch.setattr(cli.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(LmdkError, match="lmdk_dashboard is not installed"):
        cli.app_path()
    assert cli.main(["app", "--dry-run"]) == 1
    assert "lmdk: error: the dashboard package lmdk_dashboard" in capsys.readouterr().err
