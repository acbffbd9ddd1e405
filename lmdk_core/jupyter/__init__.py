"""lmdk in Jupyter: ``explore(trajectory)`` shows a map, privacy controls and live charts.

Needs the ``jupyter`` extra (``pip install 'lmdk[jupyter]'``: anywidget, ipywidgets). Works
offline: every script comes from installed packages through the local Jupyter server (the map's
Leaflet is inlined, charts use Plotly's JupyterLab renderer), and the map requests no tile
unless you opt in.

* :mod:`.session` — the explorer's state and computation, no widgets (:class:`ExplorerSession`):
  a view over :class:`lmdk_core.session.Session` (free previews, real draws counted in a ledger)
  and :mod:`lmdk_core.loss_models` (the loss bounds the dashboard shows).
* :mod:`.map_widget` — the Leaflet map widget (:class:`LandmarkMap`).
* :mod:`.explorer` — controls and charts around both (:class:`Explorer`, :func:`explore`).
"""

from __future__ import annotations

try:
    import anywidget  # noqa: F401
    import ipywidgets  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "lmdk_core.jupyter needs the jupyter extra: pip install 'lmdk[jupyter]' "
        f"(missing: {exc.name})"
    ) from exc

from .explorer import CHART_POINTS, Explorer, explore, show_figure
from .map_widget import LandmarkMap, tile_source
from .session import (
    DEFAULT_CENTRE,
    LOSS_LABELS,
    LOSS_MODELS,
    ExplorerResult,
    ExplorerSession,
    auto_interval,
)

__all__ = [
    "CHART_POINTS",
    "DEFAULT_CENTRE",
    "LOSS_LABELS",
    "LOSS_MODELS",
    "Explorer",
    "ExplorerResult",
    "ExplorerSession",
    "LandmarkMap",
    "auto_interval",
    "explore",
    "show_figure",
    "tile_source",
]
