"""The one deprecation helper: old spellings keep working for one release, with a warning.

Every renamed or now keyword-only parameter goes through :func:`renamed` (a decorator) or, for a
keyword a function still declares itself (``seed=`` of the release functions), through
:func:`warn_renamed`; a renamed attribute through :func:`renamed_property`, a renamed module
name through :func:`renamed_attributes`. Each emits a :class:`DeprecationWarning` naming the
new spelling, so a caller's test run with ``-W error::DeprecationWarning`` finds every old
call. The decorated function's signature (``inspect.signature``) is the new one; the old
spellings are listed in its ``__lmdk_deprecated__`` attribute, which ``tests/test_api.py``
reads to check that an alias exists only through this module.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from .errors import ParameterError

F = TypeVar("F", bound=Callable[..., Any])

REMOVED_IN = "0.3"
"""The release in which the deprecated spellings stop working (CHANGELOG.md lists them)."""


def warn_renamed(old: str, new: str, *, hint: str = "", stacklevel: int = 3) -> None:
    """Warn that keyword ``old=`` is deprecated in favour of ``new=`` (``hint`` appended)."""
    extra = f" ({hint})" if hint else ""
    warnings.warn(f"{old}= is deprecated: pass {new}={extra}; {old}= is removed in {REMOVED_IN}",
                  DeprecationWarning, stacklevel=stacklevel)


def renamed(*, positional: tuple[str, ...] = (), **aliases: str) -> Callable[[F], F]:
    """Decorator keeping old call spellings of a function or method working, with a warning.

    ``aliases``: old keyword → new keyword (``eps="budget"``); giving both raises ParameterError.
    An old keyword may still be a parameter with another meaning (``eps_t="budget",
    budget="epsilon"``: per-bin budgets were ``eps_t``, each user's ε was ``budget``) when its
    old meaning's new name is a required parameter: a call giving that one too uses the new
    meaning, a call without it (so, before the rename, a complete one) the old.
    ``positional``: parameters, now keyword-only, that callers used to pass positionally right
    after the still-positional ones, in their old order (``("epsilon", "sensitivity", "rng")``).
    """

    def decorate(func: F) -> F:
        sig = inspect.signature(func)
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        n_pos = sum(p.kind in kinds for p in sig.parameters.values())
        for new in (*aliases.values(), *positional):
            if new not in sig.parameters:
                raise TypeError(f"{func.__qualname__} has no parameter {new!r}")
        name = func.__qualname__.replace(".__init__", "")
        pos_names = [p.name for p in sig.parameters.values() if p.kind in kinds]
        reused = [old for old in aliases if old in sig.parameters]
        for old in reused:
            if sig.parameters[aliases[old]].default is not inspect.Parameter.empty:
                raise TypeError(f"{func.__qualname__}: {old}= keeps a new meaning, so its old "
                                f"one's new name {aliases[old]!r} must be a required parameter")
        order = reused + [old for old in aliases if old not in reused]  # old meanings first

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if len(args) > n_pos and positional:
                extra = args[n_pos:]
                if len(extra) > len(positional):
                    raise TypeError(f"{name}() takes {n_pos} positional arguments "
                                    f"but {len(args)} were given")
                moved = positional[:len(extra)]
                warnings.warn(f"{name}(): passing {', '.join(moved)} positionally is deprecated: "
                              f"pass {', '.join(f'{m}=' for m in moved)} by keyword; removed in "
                              f"{REMOVED_IN}", DeprecationWarning, stacklevel=2)
                for key, value in zip(moved, extra, strict=True):
                    if key in kwargs:
                        raise TypeError(f"{name}() got multiple values for argument {key!r}")
                    kwargs[key] = value
                args = args[:n_pos]
            for old in order:
                new = aliases[old]
                if old in kwargs:
                    given = new in kwargs or new in pos_names[:len(args)]
                    if given and old in reused:
                        continue  # the parameter's new meaning
                    if given:
                        raise ParameterError(f"give {new} or its deprecated alias {old}, not both")
                    warn_renamed(old, new, stacklevel=3)
                    kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        wrapper.__lmdk_deprecated__ = {"aliases": dict(aliases),  # type: ignore[attr-defined]
                                       "positional": tuple(positional)}
        return wrapper  # type: ignore[return-value]

    return decorate


def renamed_property(old: str, new: str) -> property:
    """A read-only attribute ``old`` serving attribute ``new`` for one release, with a warning.

    In a class body: ``radius_m = renamed_property("radius_m", "place_radius_m")``; reading
    ``obj.radius_m`` warns (naming ``new``) and gives ``obj.place_radius_m``.
    """

    def get(self: Any) -> Any:
        warnings.warn(f"{type(self).__name__}.{old} is deprecated: read {new}; {old} is removed "
                      f"in {REMOVED_IN}", DeprecationWarning, stacklevel=2)
        return getattr(self, new)

    return property(get, doc=f"Deprecated alias of :attr:`{new}` (warns; removed in "
                             f"{REMOVED_IN}).")


def renamed_attributes(module: str, **old_to_new: Callable[..., Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving each old public name, with a warning naming the new one.

    ``module.__getattr__ = renamed_attributes(__name__, discrete_laplace=integer_laplace)``: the
    old name is no longer in ``__all__`` (so no two public callables share a name) but
    ``from module import old`` keeps working for one release.
    """

    def __getattr__(name: str) -> Any:
        if name in old_to_new:
            new = old_to_new[name]
            warnings.warn(f"{module}.{name} is deprecated: use {new.__name__}; removed in "
                          f"{REMOVED_IN}", DeprecationWarning, stacklevel=2)
            return new
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
