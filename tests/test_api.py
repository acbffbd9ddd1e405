"""The public API is coherent: one argument order, keyword-only privacy parameters with one
spelling, one name for the random source, a complete __all__ grouped by topic."""

from __future__ import annotations

import inspect
import types

import pytest

import lmdk_core as lm

KW = inspect.Parameter.KEYWORD_ONLY


@pytest.mark.parametrize("func", [lm.allocate, lm.release_values, lm.release_locations,
                                  lm.release_with_budget, lm.compare_schemes])
def test_data_then_landmarks_then_keyword_only_privacy_parameters(func):
    params = inspect.signature(func).parameters
    names = list(params)
    assert names[1] == "landmarks", names
    for name in ("epsilon", "scheme", "rng", "radius_m", "budget", "sensitivity"):
        if name in params:
            assert params[name].kind is KW, f"{func.__name__}: {name} is not keyword-only"
    if func is not lm.allocate:
        assert "rng" in params or func is lm.allocate
    assert "eps" not in params or params["eps"].default is None  # deprecated alias only


def test_one_name_for_the_random_source():
    for func in (lm.release_values, lm.release_locations, lm.release_with_budget,
                 lm.compare_schemes):
        params = inspect.signature(func).parameters
        assert params["rng"].default is None  # fresh OS randomness by default
        # ``seed`` survives only as the release functions' deprecated keyword alias
        assert "seed" not in params or params["seed"].kind is KW


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
