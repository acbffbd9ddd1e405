"""allocate(): the closed forms of event, user, uniform and skip; argument errors."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lmdk_core import ParameterError, allocate
from lmdk_core.accounting import landmark_guarantee


@st.composite
def cases(draw):
    n = draw(st.integers(1, 500))
    kind = draw(st.sampled_from(["empty", "all", "random"]))
    if kind == "empty":
        mask = np.zeros(n, dtype=bool)
    elif kind == "all":
        mask = np.ones(n, dtype=bool)
    else:
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        mask = rng.random(n) < draw(st.floats(0.0, 1.0))
    eps = draw(st.floats(0.01, 10.0))
    return n, mask, eps


@given(cases())
def test_closed_forms(case):
    n, mask, eps = case
    k = int(mask.sum())
    np.testing.assert_array_equal(allocate(n, mask, epsilon=eps, scheme="event"), np.full(n, eps))
    user = allocate(n, mask, epsilon=eps, scheme="user")
    np.testing.assert_allclose(user, eps / n, rtol=1e-15)
    assert user.sum() == pytest.approx(eps, rel=1e-12)
    np.testing.assert_allclose(allocate(n, mask, epsilon=eps, scheme="uniform"), eps / (k + 1),
                               rtol=1e-15)
    skip = allocate(n, mask, epsilon=eps, scheme="skip")
    assert np.all(skip[mask] == 0) and np.all(skip[~mask] == eps)
    # indices and masks are interchangeable
    np.testing.assert_array_equal(
        allocate(n, np.flatnonzero(mask), epsilon=eps, scheme="uniform"),
        allocate(n, mask, epsilon=eps, scheme="uniform"),
    )


@given(cases())
def test_landmark_private_closed_forms_meet_the_guarantee(case):
    n, mask, eps = case
    for scheme in ("user", "uniform", "skip"):
        assert landmark_guarantee(allocate(n, mask, epsilon=eps, scheme=scheme),
                                  mask).max() <= eps + 1e-9


def test_uniform_example():
    np.testing.assert_allclose(allocate(5, [1, 3], epsilon=1.5, scheme="uniform"), [0.5] * 5)
    np.testing.assert_array_equal(allocate(4, [0, 2], epsilon=2.0, scheme="skip"), [0.0, 2.0, 0.0,
                                                                                    2.0])
    assert allocate(0, None, epsilon=1.0, scheme="user").shape == (0,)


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        (("nope", 5, [], 1.0), {}, "unknown scheme 'nope'; valid schemes: event, user, uniform"),
        (("adaptive", 5, [], 1.0), {}, "release_values"),
        (("bd", 5, [], 1.0), {"w": 3}, "release_values"),
        (("reserve", 5, [], 1.0), {}, "timestamps while releasing"),
        (("uniform", 5, [], 1.0), {"w": 3}, "takes no parameters"),
        (("uniform", 5, [], 0.0), {}, "epsilon must be > 0"),
        (("uniform", 5, [], -1.0), {}, "epsilon must be > 0"),
        (("uniform", 5, [], float("nan")), {}, "finite"),
        (("uniform", 5, [], float("inf")), {}, "finite"),
        (("uniform", 5, [True, False], 1.0), {}, "length mismatch"),
        (("uniform", 5, [7], 1.0), {}, "out of range"),
        (("uniform", -1, [], 1.0), {}, "n must be"),
    ],
)
def test_invalid_arguments(args, kwargs, match):
    scheme, n, landmarks, epsilon = args
    with pytest.raises(ParameterError, match=match):
        allocate(n, landmarks, epsilon=epsilon, scheme=scheme, **kwargs)
    with pytest.raises(ParameterError, match=match):  # the deprecated positional order too
        allocate(*args, **kwargs)


def test_one_argument_order_and_keyword_only_privacy_parameters():
    """allocate(n, landmarks, *, epsilon, scheme) like release_values/release_locations."""
    new = allocate(5, [1, 3], epsilon=1.5, scheme="uniform")
    np.testing.assert_array_equal(allocate("uniform", 5, [1, 3], 1.5), new)  # legacy order
    with pytest.raises(ParameterError, match="keyword-only"):
        allocate(5, [1, 3], 1.5, "uniform")


def test_unknown_scheme_lists_every_scheme():
    """The message names every scheme the release functions accept (it once missed reserve)."""
    from lmdk_core.release import SCHEMES

    with pytest.raises(ParameterError) as err:
        allocate(5, [], epsilon=1.0, scheme="nope")
    listed = str(err.value).split("valid schemes: ")[1].split(", ")
    assert sorted(listed) == sorted(SCHEMES)
