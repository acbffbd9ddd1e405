"""Optional dependencies: the core needs only numpy, pandas, pyarrow and numba.

Plotly figures (:mod:`lmdk_core.figures`) need the ``plot`` extra; Folium maps
(:mod:`lmdk_core.maps`) and the dashboard need the ``app`` extra. Those modules load on first use
and, when their library is missing, raise :class:`MissingExtraError` naming the extra to install.
"""

from __future__ import annotations

from .errors import LmdkError

__all__ = ["MissingExtraError", "missing_extra"]


class MissingExtraError(LmdkError, ImportError):
    """An optional dependency is not installed; the message says which extra provides it."""


def missing_extra(package: str, extra: str, module: str) -> MissingExtraError:
    """The error to raise (``from`` the ImportError) when ``module`` cannot import ``package``."""
    return MissingExtraError(
        f"{module} needs {package}, which is not installed: pip install 'lmdk[{extra}]'"
    )
