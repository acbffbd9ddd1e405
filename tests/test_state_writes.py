"""Issue 23 finding 6: the dashboard's session state is written in one module, dashboard/state.py.

Settings were lost across pages, and 24 session-state keys were written all over the dashboard.
This test reads every other dashboard module's source (AST) and fails on any write to
``st.session_state``: assignment to an item or attribute, ``del``, or a mutating method call,
directly or through a local alias (``ss = st.session_state``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

DASHBOARD = Path(__file__).resolve().parent.parent / "dashboard"
MUTATORS = {"setdefault", "pop", "update", "clear", "popitem", "__setitem__", "__delitem__"}


def _is_state(node: ast.AST, aliases: set[str]) -> bool:
    if isinstance(node, ast.Attribute) and node.attr == "session_state":
        return True
    return isinstance(node, ast.Name) and node.id in aliases


def writes(source: str) -> list[int]:
    """Line numbers of the writes to the session state in ``source``."""
    tree = ast.parse(source)
    aliases = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign)
               and _is_state(n.value, set()) for t in n.targets if isinstance(t, ast.Name)}
    lines = []
    for n in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = n.targets if isinstance(n, (ast.Assign, ast.Delete)) else [n.target]
        for t in targets:
            if isinstance(t, (ast.Attribute, ast.Subscript)) and _is_state(t.value, aliases):
                lines.append(n.lineno)
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and n.func.attr in MUTATORS and _is_state(n.func.value, aliases)):
            lines.append(n.lineno)
    return sorted(set(lines))


def test_the_check_finds_every_kind_of_write():
    src = ("import streamlit as st\nst.session_state.a = 1\nst.session_state['b'] = 2\n"
           "ss = st.session_state\nss['c'] = 3\nss.setdefault('d', 4)\ndel st.session_state.e\n"
           "x = st.session_state.get('f')\n")
    assert writes(src) == [2, 3, 5, 6, 7]


@pytest.mark.parametrize("path", sorted(p.name for p in DASHBOARD.glob("*.py")
                                        if p.name != "state.py"))
def test_only_state_py_writes_the_session_state(path):
    found = writes((DASHBOARD / path).read_text(encoding="utf-8"))
    assert not found, f"dashboard/{path} writes st.session_state at lines {found}"
