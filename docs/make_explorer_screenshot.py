"""Screenshot of the Jupyter explorer for the README: JupyterLab headless, the explorer on the
bundled sample, two places clicked on the map; writes docs/explorer.png (the README shows it).

Run from the repository root: ``python docs/make_explorer_screenshot.py`` (needs the jupyter
and test extras and a Debian Chromium). Shares tests/jupyter_driver.py with the browser test.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from jupyter_driver import (  # noqa: E402
    TRACE_NAMES_JS,
    launch,
    map_pixel,
    open_and_run,
    start_lab,
    stop_lab,
    write_notebook,
)

CELLS = [
    "import lmdk_core as lk\n"
    "from lmdk_core.jupyter import explore\n"
    "traj = lk.resample(lk.select_user(lk.load_sample(), 'alice'), 300)",
    "ex = explore(traj, loss_model='preset', strength='moderate', map_height='420px')\nex",
]
PLACES = [(39.9925, 116.3395), (39.9820, 116.3564)]  # Home and the Clinic of the README


def main(out: Path = ROOT / "docs" / "explorer.png") -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        root, home = Path(tmp, "root"), Path(tmp, "home")
        root.mkdir()
        home.mkdir()
        write_notebook(root / "explorer.ipynb", CELLS)
        proc, url = start_lab(root, home, home / "lab.log")
        try:
            with sync_playwright() as pw:
                browser, context = launch(pw, viewport={"width": 1500, "height": 1100})
                page = context.new_page()
                open_and_run(page, url, "explorer.ipynb")
                page.wait_for_selector(".lmdk-map.leaflet-container", timeout=300_000)
                page.wait_for_function(f"() => ({TRACE_NAMES_JS})().includes('landmark (0)')",
                                       timeout=300_000)
                for k, (lat, lon) in enumerate(PLACES, start=1):
                    page.locator(".lmdk-map").click(position=map_pixel(page, lat, lon))
                    page.wait_for_function(
                        f"() => document.querySelector('.lmdk-map').dataset.places === '{k}'",
                        timeout=120_000)
                page.wait_for_timeout(3000)
                # the explorer's own output (map, controls, the allocation chart)
                explorer = page.locator(".jp-Cell").last.locator(".jp-Cell-outputArea").first
                box = explorer.bounding_box()
                page.set_viewport_size({"width": 1500, "height": int(box["height"]) + 400})
                page.wait_for_timeout(2000)
                explorer.screenshot(path=str(out))
                browser.close()
        finally:
            stop_lab(proc)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
