"""The colours every figure and map uses, and the plain words the page says for them.

One source, so the map (:mod:`lmdk_core.maps`), the Plotly figures (:mod:`lmdk_core.figures`),
their legends and the page's help texts cannot disagree.
"""

from __future__ import annotations

OKABE_ITO: dict[str, str] = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}
"""The Okabe–Ito colour-blind-safe palette by name (Okabe & Ito, 2008)."""

TRUE_COLOUR = OKABE_ITO["blue"]
RELEASE_COLOUR = "#D62728"
"""Released (perturbed) locations: a clear red, apart from the palette's orange selection."""
LANDMARK_COLOUR = OKABE_ITO["reddish_purple"]
PLACE_COLOUR = OKABE_ITO["bluish_green"]
SELECTED_COLOUR = OKABE_ITO["orange"]
CONTEXT_COLOUR = "#8C8C8C"
DUMMY_COLOUR = OKABE_ITO["sky_blue"]

COLOUR_NAMES: dict[str, str] = {
    "#000000": "black", "#E69F00": "orange", "#56B4E9": "sky blue", "#009E73": "green",
    "#F0E442": "yellow", "#0072B2": "blue", "#D55E00": "vermillion", "#CC79A7": "pink",
    "#999999": "grey", "#8C8C8C": "grey", "#D62728": "red",
}
"""Plain words for the colours above (upper-case hex), as legends and help texts say them."""
