"""The public API is coherent: one argument order, keyword-only privacy parameters with one
spelling, one name for the random source, a complete __all__ grouped by topic.

The convention (``lmdk_core/__init__.py``'s docstring; OpenDP's explicit privacy parameters,
diffprivlib's validated keyword-only mechanisms) is checked over EVERY public callable of EVERY
public module: each module under ``lmdk_core`` none of whose name's segments starts with ``_``
(``lmdk_core.noise.apply`` is public, ``lmdk_core.schemes._kernel`` is not), each name in its
``__all__`` (a module without one: each function and class it defines whose name does not start
with ``_``), each public class's ``__init__`` and public methods. Known violations in files
other helpers are editing right now sit on :data:`ALLOWLIST` with a reason; an entry that no
longer violates fails the test, so the list only shrinks.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import json
import pkgutil
import re
import sys
import types
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ast_scan import gc_paused

import lmdk_core as lm
from lmdk_core._deprecation import renamed, warn_renamed
from lmdk_core._optional import MissingExtraError
from lmdk_core.errors import ParameterError

KW = inspect.Parameter.KEYWORD_ONLY

PRIVACY = frozenset({"epsilon", "budget", "radius_m", "rng", "sensitivity"})
"""Privacy parameters: keyword-only wherever they are not the callable's subject (its first
parameter, e.g. ``landmark_guarantee(budget, landmarks)`` examines a budget). Every name
starting with ``epsilon_`` (``epsilon_select``, ``epsilon_model``…) is one too."""

FORBIDDEN = {"eps": "budget (per timestamp) or epsilon (total)", "seed": "rng",
             "radius": "radius_m, place_radius_m or stay_radius_m"}
"""Spellings that must not appear in a public signature (a deprecated alias lives only in
:mod:`lmdk_core._deprecation`, outside the signature)."""

SPELLING_EXEMPT = {
    # the seed IS the concept here: the one constructor of a reproducible source from a seed
    "lmdk_core.noise.source.RandomSource.seeded",
}

RECORDS = {
    # Frozen result records the library constructs and returns: users read their fields, they
    # do not call them with privacy parameters, so the keyword-only rule does not apply to
    # their __init__ (the spelling rule does).
    "lmdk_core.release.Release", "lmdk_core.attacks.AttackReport", "lmdk_core.ledger.Cost",
    "lmdk_core.ledger.LedgerEntry", "lmdk_core.population.ledger.Charge",
    "lmdk_core.dummies.HiddenLandmarks", "lmdk_core.dummies.HiddenRelease",
    "lmdk_core.patterns.ppm.PatternRelease", "lmdk_core.correlation.loss.TemporalLoss",
    "lmdk_core.correlation.allocation.BoundedAllocation",
    "lmdk_core.correlation.neighbours.StepLosses", "lmdk_core.correlation.model.CorrelationModel",
    "lmdk_core.places.Place", "lmdk_core.advice.TargetAdvice", "lmdk_core.dummies.StayChain",
    "lmdk_core.patterns.audit.AuditResult", "lmdk_core.patterns.ledger.LedgerEntry",
}

PLACE_OR_STAY_RADIUS = {
    # ``radius_m`` is only the geo-indistinguishability protection radius; these callables take
    # the radius of a place (``place_radius_m``) or of a stay (``stay_radius_m``) instead.
    "lmdk_core.stays.detect_stays": "stay_radius_m",
    "lmdk_core.stays.suggest_places": "stay_radius_m",
    "lmdk_core.patterns.regions.PlaceRegions.__init__": "place_radius_m",
    "lmdk_core.jupyter.explorer.Explorer.add_place": "place_radius_m",
    "lmdk_core.jupyter.session.ExplorerSession.add_place": "place_radius_m",
    "lmdk_core.population.places.suggest_user_places": "stay_radius_m",
    "lmdk_core.places.Place.__init__": "place_radius_m",
}

CONCURRENT = "being edited concurrently (issue 25/26/27 helpers)"
ALLOWLIST: dict[tuple[str, str, str], str] = {
    # (callable, rule, parameter or name): reason.  Only shrinks: a fixed entry fails the test.
}


def _private(name: str) -> bool:
    """Whether a dotted module name has a segment starting with ``_`` (``lmdk_core._optional``,
    ``lmdk_core.schemes._space``): a private module, outside the checked API."""
    return any(part.startswith("_") for part in name.split("."))


def _import_public(names: list[str]) -> tuple[list[types.ModuleType], list[str]]:
    """The modules ``names`` imported, and the names left out because an optional extra is not
    installed (``lmdk_core.jupyter`` under ``make test-min``; never an error in lmdk_core)."""
    mods, skipped = [], []
    for name in names:
        try:
            mods.append(importlib.import_module(name))
        except ImportError as err:  # an extra: a missing third-party module, or its own error
            third_party = isinstance(err, ModuleNotFoundError) and not (
                err.name or "").startswith("lmdk_core")
            if not (third_party or isinstance(err, MissingExtraError)):
                raise
            skipped.append(name)
    return mods, skipped


@functools.cache
def _walk() -> tuple[tuple[types.ModuleType, ...], tuple[str, ...]]:
    """(lmdk_core and every public module under it, the ones left out for a missing extra)."""
    names = ["lmdk_core"] + [m.name for m in pkgutil.walk_packages(lm.__path__, "lmdk_core.",
                                                                  onerror=lambda name: None)
                             if not _private(m.name)]
    mods, skipped = _import_public(names)
    return tuple(mods), tuple(skipped)


def _public_modules() -> list[types.ModuleType]:
    """lmdk_core and every public module under it (see the module docstring)."""
    return list(_walk()[0])


def _api_namespaces() -> list[types.ModuleType]:
    """The namespaces a user imports names from: lmdk_core, lmdk_core.attacks and every public
    subpackage. The duplicate-name rule holds across these (a module's own names are read
    qualified by it: ``cli.main`` and ``patterns.evaluate.main`` are different commands)."""
    names = ["lmdk_core", "lmdk_core.attacks"]
    names += [f"lmdk_core.{m.name}" for m in pkgutil.iter_modules(lm.__path__)
              if m.ispkg and not m.name.startswith("_")]
    return _import_public(names)[0]


def public_names(mod: types.ModuleType) -> list[str]:
    """A module's public names: its ``__all__``, or (a module without one) the functions and
    classes it defines whose names do not start with ``_`` (``import *``'s rule, less the names
    it imports)."""
    if hasattr(mod, "__all__"):
        return list(mod.__all__)
    return [name for name, obj in vars(mod).items()
            if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
            and obj.__module__ == mod.__name__]


def _key(obj: object, attr: str | None = None) -> str:
    base = f"{obj.__module__}.{obj.__qualname__}"
    return f"{base}.{attr}" if attr else base


def public_callables(modules: list[types.ModuleType]) -> Iterator[tuple[str, Callable, bool]]:
    """(key, callable, is_record_init) for every public function, class __init__ and method."""
    seen: set[str] = set()
    for mod in modules:
        for name in public_names(mod):
            obj = getattr(mod, name)
            if inspect.isclass(obj):
                own = vars(obj)
                if "__init__" in own and inspect.isfunction(own["__init__"]):
                    key = _key(obj, "__init__")
                    if key not in seen:
                        seen.add(key)
                        yield key, own["__init__"], _key(obj) in RECORDS
                for attr, val in own.items():
                    if attr.startswith("_"):
                        continue
                    if isinstance(val, (staticmethod, classmethod)):
                        val = val.__func__
                    if inspect.isfunction(val) and _key(obj, attr) not in seen:
                        seen.add(_key(obj, attr))
                        yield _key(obj, attr), val, False
            elif inspect.isfunction(obj) and _key(obj) not in seen:
                seen.add(_key(obj))
                yield _key(obj), obj, False


def violations(modules: list[types.ModuleType],
               namespaces: list[types.ModuleType] | None = None) -> set[tuple[str, str, str]]:
    """Every breach of the convention among the public callables of ``modules`` (two callables
    under one public name: across ``namespaces``, default ``modules``)."""
    found: set[tuple[str, str, str]] = set()
    for key, func, record in public_callables(modules):
        params = list(inspect.signature(func).parameters.values())
        if params and params[0].name in ("self", "cls"):
            params = params[1:]
        for i, p in enumerate(params):
            name = p.name
            if (name in FORBIDDEN or name.endswith("_eps") or name.startswith("eps_")) \
                    and key not in SPELLING_EXEMPT:
                found.add((key, "spelling", name))
            privacy = name in PRIVACY or name.startswith("epsilon_")
            if privacy and p.kind is not KW and i > 0 and not record:
                found.add((key, "keyword-only", name))
        if key in PLACE_OR_STAY_RADIUS:
            names = {p.name for p in params}
            if "radius_m" in names or PLACE_OR_STAY_RADIUS[key] not in names:
                found.add((key, "radius-meaning", "radius_m"))
    owners: dict[str, set[object]] = defaultdict(set)
    for mod in modules if namespaces is None else namespaces:
        for name in public_names(mod):
            obj = getattr(mod, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                owners[name].add(inspect.unwrap(obj))
    for name, objs in owners.items():
        if len(objs) > 1:  # two different callables answer to one public name
            found.add((name, "duplicate", name))
    return found


def test_every_public_callable_follows_the_convention():
    modules = _public_modules()
    found = violations(modules, _api_namespaces())
    new = sorted(found - set(ALLOWLIST))
    assert not new, "convention violated (fix it, do not allowlist):\n" + "\n".join(map(str, new))
    fixed = sorted(set(ALLOWLIST) - found)
    assert not fixed, "allowlisted but no longer violating (remove):\n" + "\n".join(map(str, fixed))


def test_the_walk_covers_every_public_module_and_callable():
    """The walk imports every public module file of the package (or names the extra it lacks)
    and yields every public function, class ``__init__`` and public method of each: the check
    above covers the whole API, whatever its size, not a handful."""
    root = Path(lm.__file__).parent
    names = {".".join(p.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")
             for p in root.rglob("*.py")}
    modules, skipped = _walk()
    missing = {n for n in names if not _private(n)} - {m.__name__ for m in modules}
    missing = {n for n in missing if not any(n == s or n.startswith(s + ".") for s in skipped)}
    assert not missing, sorted(missing)
    keys = {k for k, _, _ in public_callables(modules)}
    for mod in modules:
        for name in public_names(mod):
            obj = getattr(mod, name)
            if inspect.isfunction(obj) and obj.__module__.startswith("lmdk_core"):
                assert _key(obj) in keys, (mod.__name__, name)
            elif inspect.isclass(obj) and inspect.isfunction(vars(obj).get("__init__")):
                assert _key(obj, "__init__") in keys, (mod.__name__, name)
    assert {"lmdk_core.release.release_values", "lmdk_core.noise.apply.noisy_values",
            "lmdk_core.places.Place.__init__", "lmdk_core.schemes.wevent.run_wevent"} <= keys


def test_place_and_stay_radius_callables_exist():
    """The radius-meaning list names real callables (a renamed one must be renamed here)."""
    keys = {k for k, _, _ in public_callables(_public_modules())}
    named = {k for k in PLACE_OR_STAY_RADIUS
             if not k.startswith("lmdk_core.jupyter.") or "lmdk_core.jupyter" in sys.modules}
    assert named <= keys, sorted(named - keys)
    assert {k.removesuffix(".__init__") for k in keys} >= RECORDS, sorted(RECORDS)


def test_the_checker_catches_a_broken_api():
    """A deliberately broken module: every rule fires."""
    bad = types.ModuleType("lmdk_core.fake")

    def laplace(values, eps, rng=None, *, radius=1.0):
        return values

    def mae(a, b):
        return 0.0

    def sup(p, budget, *, epsilon_model):
        return p

    for f in (laplace, mae, sup):
        f.__module__ = "lmdk_core.fake"
    bad.laplace, bad.mae, bad.sup = laplace, mae, sup
    bad.__all__ = ["laplace", "mae", "sup"]
    found = violations([lm, bad])
    key = "lmdk_core.fake.test_the_checker_catches_a_broken_api.<locals>."
    assert (key + "laplace", "spelling", "eps") in found
    assert (key + "laplace", "spelling", "radius") in found
    assert (key + "laplace", "keyword-only", "rng") in found
    assert (key + "sup", "keyword-only", "budget") in found
    assert (key + "sup", "keyword-only", "epsilon_model") not in found
    assert ("mae", "duplicate", "mae") in found


def test_the_deprecation_helper_keeps_old_spellings_working_with_a_warning():
    @renamed(eps="budget", positional=("budget", "rng"))
    def f(x, *, budget, rng=None):
        return x, budget, rng

    assert list(inspect.signature(f).parameters) == ["x", "budget", "rng"]
    assert f.__lmdk_deprecated__ == {"aliases": {"eps": "budget"}, "positional": ("budget", "rng")}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(1, budget=2) == (1, 2, None)  # the new spelling does not warn
    with pytest.warns(DeprecationWarning, match=r"eps= is deprecated: pass budget="):
        assert f(1, eps=2) == (1, 2, None)
    with pytest.warns(DeprecationWarning, match=r"budget, rng positionally .* budget=, rng="):
        assert f(1, 2, 3) == (1, 2, 3)
    with pytest.raises(ParameterError, match="not both"):
        f(1, budget=2, eps=2)

    @renamed(radius="radius_m")
    def g(x, radius_m=1.0):
        return radius_m

    with pytest.raises(ParameterError, match="not both"):  # the new one given positionally
        g(1, 2.0, radius=3.0)

    @renamed(eps_t="budget", budget="epsilon")  # an old name kept with a new meaning
    def h(budget, *, epsilon):
        return budget, epsilon

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert h(1, epsilon=2) == h(budget=1, epsilon=2) == (1, 2)
    with pytest.warns(DeprecationWarning, match="budget= is deprecated: pass epsilon="):
        assert h(1, budget=2) == (1, 2)
    with pytest.warns(DeprecationWarning) as record:
        assert h(eps_t=1, budget=2) == (1, 2)
    assert sorted(str(w.message).split(" is ")[0] for w in record) == ["budget=", "eps_t="]
    with pytest.raises(TypeError, match="required"):
        renamed(budget="epsilon")(lambda budget=0, *, epsilon=1: None)
    with pytest.raises(TypeError, match="positional"):
        f(1, 2, 3, 4)
    with pytest.raises(TypeError, match="no parameter"):
        renamed(eps="nope")(f.__wrapped__)
    with pytest.warns(DeprecationWarning, match=r"seed= is deprecated: pass rng= \(hint\)"):
        warn_renamed("seed", "rng", hint="hint", stacklevel=2)


def test_deprecated_spellings_reach_the_new_ones():
    """Each decorated public callable accepts its old spelling, warns, and gives the same
    result as the new spelling (checked on the mechanisms, whose output is deterministic for a
    seeded source)."""
    x = [0.0, 1.0]
    new = lm.laplace(x, epsilon=1.0, rng=1)
    with pytest.warns(DeprecationWarning, match="epsilon="):
        old = lm.laplace(x, 1.0, 1.0, 1)
    assert list(old) == list(new)
    with pytest.warns(DeprecationWarning, match="pass epsilon="):
        assert list(lm.laplace(x, eps=1.0, rng=1)) == list(new)
    with pytest.warns(DeprecationWarning, match="epsilon="):
        assert lm.Laplace(2.0) == lm.Laplace(epsilon=2.0)
    g = lm.landmark_guarantee([0.1, 0.2, 0.3], [0, 2])
    with pytest.warns(DeprecationWarning, match="pass budget="):
        assert list(lm.landmark_guarantee(eps=[0.1, 0.2, 0.3], landmarks=[0, 2])) == list(g)


def _equal(got: object, want: object) -> None:
    """``got == want`` for what the renamed callables return: frames, dicts, arrays, tuples."""
    import numpy as np
    import pandas as pd

    if isinstance(want, pd.DataFrame):
        pd.testing.assert_frame_equal(got, want)
    elif isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            _equal(a, b)
    elif isinstance(want, dict):
        assert got == want
    else:
        np.testing.assert_array_equal(got, want)


def _same(old: Callable, new: Callable, match: str) -> None:
    """The old spelling (``old()``) warns with ``match`` and gives what the new one gives
    (``new()``, which must not warn)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want = new()
    with pytest.warns(DeprecationWarning, match=match):
        got = old()
    _equal(got, want)


def test_population_ledger_and_scheme_old_spellings_reach_the_new_ones():
    """The renames of the population, dummies, ledger and scheme runner: each old spelling
    warns and gives exactly what the new one gives (seeded draws, so outputs are comparable)."""
    import numpy as np
    import pandas as pd

    from lmdk_core import dummies
    from lmdk_core import population as P
    from lmdk_core.schemes import resolve_params, run_scheme
    from lmdk_core.schemes._space import Space

    e = np.array([0.1, 0.5, 2.0])
    _same(lambda: P.keep_probability(eps=e, tau=1.0), lambda: P.keep_probability(e, 1.0), "eps=")
    _same(lambda: P.public_bin_budgets(public_eps=[1.0, 2.0], scheme="user", n_bins=4),
          lambda: P.public_bin_budgets(public_epsilon=[1.0, 2.0], scheme="user", n_bins=4),
          "public_epsilon=")
    _same(lambda: P.discrete_laplace(50, 0.5, 3), lambda: P.discrete_laplace(50, 0.5, rng=3),
          "rng=")
    c = np.arange(6, dtype=np.int64)
    _same(lambda: P.publish_counts(c, 0.5, 3), lambda: P.publish_counts(c, 0.5, rng=3), "rng=")
    _same(lambda: dummies.split_budget(1.0, 0.2),
          lambda: dummies.split_budget(1.0, epsilon_select=0.2), "epsilon_select=")
    _same(lambda: lm.distance_factor(250.0, 200.0),
          lambda: lm.distance_factor(250.0, radius_m=200.0), "radius_m=")
    _same(lambda: P.generate_population(3, points_per_user=20, days=1, seed=2),
          lambda: P.generate_population(3, points_per_user=20, days=1, rng=2), "pass rng=")
    traj, _ = P.generate_population(2, points_per_user=200, days=1, rng=1)
    _same(lambda: P.suggest_user_places(traj, radius_m=150.0),
          lambda: P.suggest_user_places(traj, stay_radius_m=150.0), "pass stay_radius_m=")
    budgets = pd.DataFrame({"uid": ["a", "b"], "epsilon": [1.0, 0.2]})
    led_old, led_new = P.Ledger(budgets), P.Ledger(budgets)
    _same(lambda: led_old.charge([1.0, 1.0], 0.5).included,
          lambda: led_new.charge([1.0, 1.0], epsilon=0.5).included, "epsilon=")
    space = Space("values", (np.linspace(0.0, 1.0, 8),), 1.0)
    mask, params = np.zeros(8, bool), resolve_params("uniform", {})
    mask[2] = True
    _same(lambda: run_scheme("uniform", space, mask, 1.0, 5, params).columns[0],
          lambda: run_scheme("uniform", space, mask, epsilon=1.0, rng=5, params=params).columns[0],
          "epsilon=, rng=, params=")
    x = np.linspace(0.0, 1.0, 8)
    rel = lm.release_values(x, mask, epsilon=1.0, scheme="uniform", rng=5)
    ledger = lm.ReleaseLedger().add(rel, key="a")
    with pytest.warns(DeprecationWarning, match="epsilon="):
        assert ledger.would_exceed(rel, 0.5, key="b") is ledger.would_exceed(
            rel, epsilon=0.5, key="b") is True
    _same(lambda: lm.release_with_budget(x, eps=[0.5] * 8, sensitivity=1.0,
                                         seed=5).values,
          lambda: lm.release_with_budget(x, budget=[0.5] * 8, sensitivity=1.0, rng=5).values,
          "deprecated")


def test_module_level_old_spellings_reach_the_new_ones():
    """The renames the walk over every public module brought (noise.apply, mechanisms,
    formatting, maps, patterns.taxi, population.core/noise, the scheme runners): each old
    spelling warns and gives exactly what the new one gives (seeded draws)."""
    import numpy as np

    from lmdk_core import formatting, maps, mechanisms
    from lmdk_core.noise import apply
    from lmdk_core.noise.source import as_source
    from lmdk_core.patterns import taxi
    from lmdk_core.population import core, noise
    from lmdk_core.schemes import reserve, wevent
    from lmdk_core.schemes._space import Space

    x, e = np.linspace(0.0, 1.0, 6), np.full(6, 0.5)
    _same(lambda: apply.noisy_values(x, e, sensitivity=1.0, source=as_source(3)),
          lambda: apply.noisy_values(x, budget=e, sensitivity=1.0, source=as_source(3)),
          "budget positionally")
    _same(lambda: apply.noisy_bits(x > 0.5, eps=e, source=as_source(3)),
          lambda: apply.noisy_bits(x > 0.5, budget=e, source=as_source(3)), "pass budget=")
    _same(lambda: mechanisms.rr_keep_probability(eps=e),
          lambda: mechanisms.rr_keep_probability(e), "pass epsilon=")
    _same(lambda: formatting.plain_epsilon(eps=0.5), lambda: formatting.plain_epsilon(0.5),
          "pass epsilon=")
    _same(lambda: maps.CircleMarkers([(1.0, 2.0)], radius=4).options,
          lambda: maps.CircleMarkers([(1.0, 2.0)], radius_px=4).options, "pass radius_px=")
    _same(lambda: taxi.hotspots(5, seed=7), lambda: taxi.hotspots(5, rng=7), "pass rng=")
    _same(lambda: noise.bernoulli_exp(np.arange(4), 4, 5),
          lambda: noise.bernoulli_exp(np.arange(4), 4, rng=5), "rng positionally")
    b, marks = np.array([[0.1, 0.5, 2.0]]), np.array([[True, False, False]])
    _same(lambda: core.release_loss(eps_t=b, landmarks=marks, tau=1.0, mode="sample",
                                    budget=np.ones(1)),
          lambda: core.release_loss(b, marks, tau=1.0, mode="sample", epsilon=np.ones(1)),
          "deprecated")
    mask = np.arange(30) % 7 == 0
    _same(lambda: wevent.window_epsilon("bd", mask, 1.0, 5),
          lambda: wevent.window_epsilon("bd", mask, epsilon=1.0, w=5), "epsilon=, w=")
    space = Space("values", (np.linspace(0.0, 1.0, 30),), 1.0)
    _same(lambda: reserve.schedule(space, mask, 1.0, 0.5, 0.1),
          lambda: reserve.schedule(space, mask, epsilon=1.0, share=0.5, speed=0.1),
          "epsilon=, share=, speed=")


def test_the_old_eps_attribute_reads_budget_with_a_warning():
    """``.eps`` of a Release, a BoundedAllocation and a TemporalLoss was a silent alias of
    ``.budget``: reading it warns (naming ``budget``, removed in 0.3) and gives ``.budget``."""
    import numpy as np

    from lmdk_core.correlation import BoundedAllocation

    x, mask = np.linspace(0.0, 1.0, 8), np.arange(8) % 3 == 0
    rel = lm.release_values(x, mask, epsilon=1.0, scheme="uniform", rng=5)
    P = np.array([[0.9, 0.1], [0.2, 0.8]])
    loss = lm.temporal_loss(rel.budget, P, P)
    alloc = BoundedAllocation(budget=np.full(8, 0.25), alpha=1.0, source="public",
                              source_text="", description="", epsilon_model=0.0, scale=1.0)
    for obj in (rel, alloc, loss):
        name = type(obj).__name__
        _same(lambda obj=obj: obj.eps, lambda obj=obj: obj.budget,
              rf"{name}\.eps is deprecated: read budget; eps is removed in 0\.3")


OLD_SPELLING_CALLERS: dict[tuple[str, str], str] = {
    # (file, callable): callers of a deprecated spelling in files being edited concurrently.
}


def _n_positional(func: Callable) -> int:
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(p.kind in kinds for p in inspect.signature(func).parameters.values())


def _deprecated_signatures() -> dict[str, tuple[int, dict]]:
    """Public function and class names whose old spellings the helper still accepts:
    name → (number of positional parameters, the helper's ``__lmdk_deprecated__``)."""
    out: dict[str, tuple[int, dict]] = {}
    for mod in _public_modules():
        for name in public_names(mod):
            obj = getattr(mod, name)
            func = vars(obj).get("__init__") if inspect.isclass(obj) else obj
            meta = getattr(func, "__lmdk_deprecated__", None)
            if meta is not None:
                n_pos = _n_positional(func) - inspect.isclass(obj)
                if name in out and out[name] != (n_pos, meta):
                    raise AssertionError(f"two renamed callables answer to {name!r}: rename one")
                out[name] = (n_pos, meta)
    return out


def _deprecated_methods() -> dict[str, tuple[int, dict]]:
    """Public method names whose old spellings the helper still accepts: name → (the largest
    number of positional parameters after ``self`` among the classes defining it, the union of
    their old spellings). A method call ``x.name(...)`` is matched by name whatever ``x`` is."""
    out: dict[str, tuple[int, dict]] = {}
    for mod in _public_modules():
        for name in public_names(mod):
            obj = getattr(mod, name)
            if not inspect.isclass(obj):
                continue
            for attr, val in vars(obj).items():
                if isinstance(val, (staticmethod, classmethod)):
                    val = val.__func__
                meta = getattr(val, "__lmdk_deprecated__", None)
                if attr.startswith("_") or meta is None:
                    continue
                n_pos = _n_positional(val) - 1  # self or cls
                old_n, old_meta = out.get(attr, (n_pos, {"aliases": {}, "positional": ()}))
                out[attr] = (max(n_pos, old_n),
                             {"aliases": {**old_meta["aliases"], **meta["aliases"]},
                              "positional": old_meta["positional"] or meta["positional"]})
    return out


def _old_spelling(node: ast.Call, n_pos: int, meta: dict) -> bool:
    """Whether the call passes an old keyword, or a now keyword-only parameter positionally (a
    call with more positional arguments than the old signature took is another function of the
    same name, e.g. the internal sampler ``lmdk_core.noise.discrete.discrete_laplace``). An old
    keyword given with its new one is not an old call (an error, or, when the old name is still
    a parameter, its new meaning: ``release_loss(b, lm, budget=…)`` is old,
    ``release_loss(budget=…, landmarks=lm, epsilon=…)`` new)."""
    keywords = {k.arg for k in node.keywords}
    return any(k in meta["aliases"] and meta["aliases"][k] not in keywords
               for k in keywords) or bool(
        n_pos < len(node.args) <= n_pos + len(meta["positional"])
        and not any(isinstance(a, ast.Starred) for a in node.args))


def _deliberate_calls(withs: list[ast.With]) -> set[int]:
    """ids of the calls inside ``with pytest.warns(...)``, ``pytest.raises(...)`` or
    ``pytest.deprecated_call()`` among the ``with`` statements ``withs``: a test calling an old
    spelling on purpose."""
    out: set[int] = set()
    for node in withs:
        if any(
                isinstance(e := item.context_expr, ast.Call) and isinstance(e.func, ast.Attribute)
                and isinstance(e.func.value, ast.Name) and e.func.value.id == "pytest"
                and e.func.attr in ("warns", "raises", "deprecated_call") for item in node.items):
            out |= {id(c) for stmt in node.body for c in ast.walk(stmt) if isinstance(c, ast.Call)}
    return out


def _python_sources(path: Path) -> list[str]:
    """The Python code of a file: the file itself, a notebook's code cells (IPython magics
    dropped), or a Markdown page's ```python blocks."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        cells = [c for c in json.loads(text)["cells"] if c["cell_type"] == "code"]
        code = ["".join(c["source"]) for c in cells]
        return ["\n".join(ln for ln in c.splitlines() if not ln.startswith(("%", "!")))
                for c in code]
    if path.suffix == ".md":
        return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    return [text]


def old_spelling_calls(source: str, spelled: dict[str, tuple[int, dict]],
                       methods: dict[str, tuple[int, dict]]) -> set[str]:
    """Names of the renamed functions and methods that ``source`` calls with an old spelling
    (calls inside ``pytest.warns``/``pytest.raises`` blocks are deliberate and skipped)."""
    tree = ast.parse(source)
    calls, withs = [], []  # one walk of the whole tree (it is most of this check's time)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            calls.append(node)
        elif isinstance(node, ast.With):
            withs.append(node)
    deliberate = _deliberate_calls(withs)
    found = set()
    for node in calls:
        if id(node) in deliberate:
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else None
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                and f.value.id not in ("np", "gen", "rng", "self", "source", "generator"):
            name = f.attr
        if name in spelled and _old_spelling(node, *spelled[name]):
            found.add(name)
        if isinstance(f, ast.Attribute) and f.attr in methods \
                and _old_spelling(node, *methods[f.attr]):
            found.add(f.attr)
    return found


def test_no_caller_uses_a_deprecated_spelling():
    """The package, the app, the benches, the tests, the notebooks and the Python examples of
    README and docs call each renamed function and method by its new spelling (only this file
    and a test checking the deprecation inside ``pytest.warns``/``pytest.raises`` may use the
    old ones)."""
    root = Path(lm.__file__).parent.parent
    spelled = _deprecated_signatures()
    methods = _deprecated_methods()
    assert {"laplace", "Laplace", "temporal_loss", "detect_stays"} <= set(spelled)
    assert {"charge", "sample", "release"} <= set(methods)
    found = set()
    paths = sorted({*root.glob("lmdk_core/**/*.py"), *root.glob("dashboard/**/*.py"),
                    *root.glob("bench/*.py"), *root.glob("tests/*.py"),
                    *root.glob("notebooks/*.ipynb"), *root.glob("docs/*.md"), root / "README.md"})
    assert any(p.suffix == ".ipynb" for p in paths) and root / "README.md" in paths
    # a call old_spelling_calls reports names one of these as a whole identifier: a source that
    # holds none of them as a word has no such call, and is not parsed (a quarter of them)
    names = "|".join(map(re.escape, sorted({*spelled, *methods})))
    mentioned = re.compile(rf"\b(?:{names})\b")
    with gc_paused():
        for path in paths:
            rel = path.relative_to(root).as_posix()
            if rel == "tests/test_api.py":
                continue
            for source in _python_sources(path):
                if not mentioned.search(source):
                    continue
                try:
                    calls = old_spelling_calls(source, spelled, methods)
                except SyntaxError:  # an example fragment (``...``), not a program
                    continue
                found |= {(rel, name) for name in calls}
    new = sorted(found - set(OLD_SPELLING_CALLERS))
    assert not new, f"callers of deprecated spellings (use the new ones): {new}"
    fixed = sorted(set(OLD_SPELLING_CALLERS) - found)
    assert not fixed, f"no longer calling an old spelling (remove from the list): {fixed}"


def test_the_caller_check_catches_old_spellings():
    """A deliberately old-spelled snippet: every kind of old call is found, the new spellings
    and the deliberate calls inside pytest.warns are not."""
    spelled, methods = _deprecated_signatures(), _deprecated_methods()
    old = """
import pytest
lm.laplace(x, 1.0)
P.generate_population(5, seed=1)
ledger.charge(records, 0.5)
obj.regions.sample(codes, gen)
"""
    assert old_spelling_calls(old, spelled, methods) == {
        "laplace", "generate_population", "charge", "sample"}
    new = """
import pytest
lm.laplace(x, epsilon=1.0)
P.generate_population(5, rng=1)
ledger.charge(records, epsilon=0.5)
obj.regions.sample(codes, rng=gen)
discrete_laplace(buf, st, fn, t, s)  # the internal sampler of the same name, other arity
with pytest.warns(DeprecationWarning):
    lm.laplace(x, eps=1.0)
"""
    assert old_spelling_calls(new, spelled, methods) == set()


@pytest.mark.parametrize("func", [lm.allocate, lm.release_values, lm.release_locations,
                                  lm.release_with_budget, lm.compare_schemes])
def test_data_then_landmarks(func):
    names = list(inspect.signature(func).parameters)
    assert names[1] == "landmarks", names


def test_one_name_for_the_random_source():
    for func in (lm.release_values, lm.release_locations, lm.release_with_budget,
                 lm.compare_schemes):
        params = inspect.signature(func).parameters
        assert params["rng"].default is None  # fresh OS randomness by default


def test_all_is_complete_and_has_no_internal_labels():
    assert len(lm.__all__) == len(set(lm.__all__))
    for name in lm.__all__:
        assert getattr(lm, name) is not None, name
    public = {n for n, v in vars(lm).items()
              if not n.startswith("_") and not isinstance(v, types.ModuleType)}
    assert public <= set(lm.__all__), sorted(public - set(lm.__all__))
    source = inspect.getsource(lm)
    for label in ("Engine-A", "Figures helper"):
        assert label not in source
