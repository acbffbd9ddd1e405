"""docs/claims.md, the register of every privacy statement: each statement is still written where
the register says, its proof document exists, and its test exists (issue 24, "Also build")."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REGISTER = ROOT / "docs" / "claims.md"


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@functools.cache
def _said(path: Path) -> str:
    """What a file says: a Python module's strings (implicitly concatenated literals and the
    literal parts of f-strings joined, as the user reads them), any other file's text. Once per
    file and process: the ~100 claims sit in a few files (the files do not change in a run)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return _flat(text)
    parts = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.JoinedStr):
            parts.append("".join(v.value if isinstance(v, ast.Constant) else "{…}"
                                 for v in node.values))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            parts.append(node.value)
    return _flat("\n".join(parts))


@functools.cache
def _function_names(path: Path) -> frozenset[str]:
    """The names of the functions a Python file defines (once per file and process, as
    :func:`_said`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return frozenset(n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))


def rows(text: str) -> list[dict[str, str]]:
    """The register's table rows as dicts (id, statement, where, proof, test)."""
    out = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) == 5 and cells[0] not in ("ID", "---") and not cells[0].startswith("-"):
            out.append(dict(zip(("id", "statement", "where", "proof", "test"), cells,
                                strict=True)))
    return out


def problems(row: dict[str, str]) -> list[str]:
    """What is wrong with one registered claim (empty: it holds together)."""
    found = []
    where = ROOT / row["where"]
    if not where.is_file():
        found.append(f"{row['where']} does not exist")
    elif _flat(row["statement"]) not in _said(where):
        found.append(f"the statement is no longer in {row['where']}")
    if row["proof"] != "—" and not (ROOT / row["proof"]).is_file():
        found.append(f"proof {row['proof']} does not exist")
    path, _, name = row["test"].partition("::")
    test_file = ROOT / path
    if not name or not test_file.is_file():
        found.append(f"test file {path} does not exist")
    elif name not in _function_names(test_file):
        found.append(f"test {row['test']} does not exist")
    return found


REGISTERED = rows(REGISTER.read_text(encoding="utf-8"))


def test_the_register_is_not_empty_and_ids_are_unique():
    ids = [r["id"] for r in REGISTERED]
    assert len(ids) >= 30 and len(set(ids)) == len(ids)


@pytest.mark.parametrize("row", REGISTERED, ids=[r["id"] for r in REGISTERED])
def test_each_registered_claim_has_its_text_proof_and_test(row):
    assert problems(row) == []


def test_the_check_fails_for_a_missing_test_a_changed_text_or_a_missing_proof():
    good = REGISTERED[0]
    assert problems({**good, "test": good["test"] + "_gone"})
    assert problems({**good, "statement": good["statement"] + " and more"})
    assert problems({**good, "proof": "docs/no-such-proof.md"})
