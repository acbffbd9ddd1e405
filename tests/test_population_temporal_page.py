"""The Population page states the release's loss under temporal correlation (Cao et al.'s global
schema, docs/temporal-loss.md §10): the number it shows is the library's bound for the budgets of
the people in the previewed personalised release, and it is at least the uncorrelated figure."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from lmdk_core.correlation import personalised_release_temporal_loss, temporal_loss
from lmdk_core.correlation.global_schema import PRESET_STATES
from lmdk_core.correlation.matrices import synthetic_transition_matrix

PAGE = str(Path(__file__).resolve().parent.parent / "dashboard" / "page_population.py")


@pytest.mark.slow
def test_page_states_the_global_schema_loss():
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.session_state["_w_pop_n"] = 200
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    text = next(c.value for c in at.caption if "Under temporal correlation" in c.value)
    shown = re.search(r"loses at most ([\d.e+-]+) in this release, against at most "
                      r"([\d.e+-]+) without correlation", text)
    assert shown, text
    rel = at.session_state["pages_store"]["pop_result"][1]["releases"]["personalised"]
    eps = rel.private.users["epsilon"].to_numpy()
    n_bins = rel.grid.n_bins
    loss = personalised_release_temporal_loss(eps, tau=rel.tau, n_bins=n_bins)
    assert shown.group(1) == f"{loss.tpl.max():.3g}"
    top = min(eps.max(), rel.tau)
    assert shown.group(2) == f"{top:.3g}"
    # independently: the most exposed person's own TPL under the same public chain
    P = synthetic_transition_matrix(PRESET_STATES, "moderate")
    assert loss.tpl.max() == pytest.approx(temporal_loss(np.full(n_bins, top), P).tpl.max())
    assert float(shown.group(1)) > float(shown.group(2))
