"""Page scripts print nothing by accident: Streamlit's "magic" writes any bare expression of a
page script on the page (a constant's docstring once appeared above the title)."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["dashboard/app.py", "dashboard/page_patterns.py", "dashboard/page_population.py"]


@pytest.mark.parametrize("page", PAGES)
def test_no_bare_expression_at_the_top_level_of_a_page(page: str) -> None:
    tree = ast.parse((ROOT / page).read_text())
    body = tree.body[1:] if ast.get_docstring(tree) is not None else tree.body
    bare = [n.lineno for n in body
            if isinstance(n, ast.Expr) and not isinstance(n.value, ast.Call)]
    assert bare == [], f"{page}: bare expressions (shown on the page by magic) at lines {bare}"


def test_magic_is_off_for_the_app() -> None:
    config = tomllib.loads((ROOT / ".streamlit/config.toml").read_text())
    assert config["runner"]["magicEnabled"] is False
