"""One owner of randomness (issue 29 item 3): only ``lmdk_core/noise/source.py`` draws.

Every other module of ``lmdk_core``, and every module of the app (``dashboard/``), takes ``rng=``
and hands it to :func:`lmdk_core.noise.source.as_source` / :func:`~lmdk_core.noise.source.as_rng`
(or builds a simulation's Generator with ``simulation_rng``). This file AST-scans the package and
the app for the ways Python and numpy draw randomness (``np.random.*`` except the
``Generator`` type name, ``SeedSequence``, ``random``, ``secrets``, ``os.urandom``, a cipher from
``cryptography``) and fails on any use outside the source and a short allowlist, each entry with
its reason and its exact count (a new use fails; a removed one must shrink the list).
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import numpy as np

import lmdk_core
from lmdk_core.noise.source import RandomSource, as_source

PKG = Path(lmdk_core.__file__).parent
APP = Path(__file__).resolve().parents[1] / "dashboard"
"""The app draws through the package too (its population page built its own SeedSequence)."""
OWNER = "noise/source.py"

# path -> (uses, reason). Keep it short; shrink it as modules move to as_rng/as_source.
ALLOWED: dict[str, tuple[int, str]] = {
    "patterns/taxi.py": (14, "synthetic taxi traces (demo/benchmark data, never a release): the "
                             "numba kernel can only call the legacy np.random API, seeded per "
                             "taxi from the caller's seed"),
}


def random_uses(tree: ast.AST) -> list[str]:
    """The random-source uses in a module's AST, as readable strings."""
    modules = {"random", "secrets"}
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in {"random", "secrets", "cryptography"} or \
                        a.name == "numpy.random":
                    found.append(f"import {a.name}")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in {"random", "secrets", "cryptography"} or \
                    node.module == "numpy.random" or (
                    node.module == "os" and any(a.name == "urandom" for a in node.names)):
                found.append(f"from {node.module} import ...")
        elif isinstance(node, ast.Attribute):
            v = node.value
            if isinstance(v, ast.Attribute) and v.attr == "random" and \
                    isinstance(v.value, ast.Name) and v.value.id in {"np", "numpy"}:
                if node.attr != "Generator":  # the type, for isinstance and annotations
                    found.append(f"np.random.{node.attr}")
            elif isinstance(v, ast.Name) and (v.id in modules or
                                              (v.id == "os" and node.attr == "urandom")):
                found.append(f"{v.id}.{node.attr}")
        elif isinstance(node, ast.Name) and node.id == "SeedSequence":
            found.append("SeedSequence")
    return found


def scan() -> dict[str, list[str]]:
    """Random-source uses per module of the package and of the app (``dashboard/...``)."""
    assert APP.is_dir()
    out = {}
    for path in sorted([*PKG.rglob("*.py"), *APP.rglob("*.py")]):
        rel = path.relative_to(PKG if path.is_relative_to(PKG) else APP.parent).as_posix()
        uses = random_uses(ast.parse(path.read_text(encoding="utf-8")))
        if uses and rel != OWNER:
            out[rel] = uses
    return out


def test_only_the_source_draws_randomness():
    found = scan()
    bad = {p: u for p, u in found.items() if p not in ALLOWED}
    assert not bad, f"randomness outside noise/source.py (use as_source/as_rng): {bad}"
    counts = {p: len(u) for p, u in found.items()}
    for p, (n, _) in ALLOWED.items():
        assert counts.get(p, 0) == n, (
            f"{p}: {counts.get(p, 0)} random-source uses, allowlist says {n} "
            f"({Counter(found.get(p, []))}); fix the use or shrink the list")


def test_the_scanner_catches_each_kind():
    # a deliberately broken module: every line is a private random source
    src = ("import numpy as np\nimport secrets, os\nimport random\n"
           "a = np.random.default_rng(1)\nb = np.random.SeedSequence(2)\n"
           "c = secrets.token_bytes(32)\nd = os.urandom(8)\ne = random.random()\n"
           "from cryptography.hazmat.primitives.ciphers import Cipher\n")
    uses = random_uses(ast.parse(src))
    for u in ("np.random.default_rng", "np.random.SeedSequence", "secrets.token_bytes",
              "os.urandom", "random.random", "import random", "import secrets",
              "from cryptography.hazmat.primitives.ciphers import ..."):
        assert u in uses, u
    # the Generator type name (isinstance, annotations) is not a draw
    assert random_uses(ast.parse("import numpy as np\nx: np.random.Generator\n")) == []


def test_noise_does_not_import_mechanisms():
    """The noise primitives never import the mechanism classes back (no lazy cycle)."""
    for path in (PKG / "noise").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                mod = (node.module or "")
                assert not (node.level >= 2 and mod.startswith("mechanisms")), path.name
                assert not mod.startswith("lmdk_core.mechanisms"), path.name


def test_uniform53_keeps_seeded_draws_and_bounds():
    # seeded: exactly the Generator's integers (dummies' pinned seeded outputs are unchanged)
    np.testing.assert_array_equal(
        as_source(7).uniform53(50), np.random.default_rng(7).integers(0, 2**53, size=50,
                                                                       dtype=np.uint64))
    u = RandomSource.secure().uniform53(4096)
    assert u.dtype == np.uint64 and int(u.max()) < 2**53
    assert int(u.max()) >= 2**52  # top bit of 53 used (fails with probability 2^-4096)


def test_keyed_source_is_deterministic_per_key_and_label():
    a = RandomSource.keyed(b"k" * 32, b"x").words(4)
    np.testing.assert_array_equal(a, RandomSource.keyed(b"k" * 32, b"x").words(4))
    assert not np.array_equal(a, RandomSource.keyed(b"k" * 32, b"y").words(4))
    assert not np.array_equal(a, RandomSource.keyed(b"j" * 32, b"x").words(4))
