"""Regenerate the README's screenshots: the dashboard on the bundled sample with the first
person's home and clinic stays marked.

Drives the real app in headless Chromium (helpers in tests/browser_driver.py), clicks the
first user's home and clinic (the sample's ground-truth labels) on the map, picks a scheme
and saves a screenshot, palette-quantised to stay small:
the whole page at laptop width (default), or with ``--viewport WxH`` exactly what a screen of
that size shows first.

Usage: python docs/make_screenshot.py [--out docs/dashboard.png] [--scheme skip]
       python docs/make_screenshot.py --viewport 1280x720 --out docs/dashboard-1280x720.png
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import browser_driver as tb  # noqa: E402  (server and browser helpers shared with the browser test)

SCHEME_OPTION = {
    "skip": "Skip (landmarks are not released)",
    "uniform": "Uniform (ε / (landmarks + 1))",
    "adaptive": "Adaptive (sample when the trace changes)",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "dashboard.png"))
    ap.add_argument("--scheme", default="skip", choices=sorted(SCHEME_OPTION))
    ap.add_argument("--height", type=int, default=3200, help="viewport height (px): the whole page")
    ap.add_argument("--viewport", default=None,
                    help="WxH, e.g. 1280x720: save the first screen at that size, not the page")
    args = ap.parse_args()

    from PIL import Image
    from playwright.sync_api import sync_playwright

    from lmdk_core.sample import load_sample

    s = load_sample()
    first = s[s.uid == s.uid.iloc[0]]
    spots = first.groupby("place")[["lat", "lon"]].median()

    port = tb.free_port()
    proc = tb.start_server(port, Path(tempfile.mkdtemp()) / "server.log")
    raw = Path(tempfile.mkdtemp()) / "raw.png"
    try:
        with sync_playwright() as p:
            browser = tb.launch(p)
            width, height = (1366, args.height) if args.viewport is None else map(
                int, args.viewport.lower().split("x"))
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(f"http://127.0.0.1:{port}/?tiles=none")
            tb.wait_idle(page, settle_ms=800)
            for place in ("home", "clinic"):
                before = tb.chart_signature(page, 0)
                tb.click_map(page, *spots.loc[place])
                tb.wait_chart_change(page, before)
                tb.wait_idle(page)
            if args.scheme != "skip":  # the page's default
                box = page.locator("[data-testid='stSelectbox']")
                box.filter(has_text="Allocation scheme").click()
                page.get_by_role("option", name=SCHEME_OPTION[args.scheme]).click()
                tb.wait_idle(page, settle_ms=800)
            page.mouse.click(700, 10)
            tb.wait_idle(page, settle_ms=1500, draw=True)  # the charts out of view too
            page.screenshot(path=str(raw), full_page=args.viewport is None)
            browser.close()
    finally:
        tb.stop_server(proc)
    img = Image.open(raw).convert("RGB")
    if args.viewport is not None:  # the first screen as it is
        img.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(args.out, optimize=True)
        size_kb = Path(args.out).stat().st_size / 1024
        print(f"{args.out}: {img.width}x{img.height}, {size_kb:.0f} KB")
        return
    # crop the empty bottom of the tall viewport: keep down to the last non-white row of the
    # main area (right of the sidebar) plus a margin
    import numpy as np

    main = np.asarray(img.convert("L"))[:, 400:]
    rows = np.flatnonzero((main < 240).any(axis=1))
    if rows.size:
        img = img.crop((0, 0, img.width, min(img.height, int(rows[-1]) + 40)))
    img = img.resize((img.width * 3 // 4, img.height * 3 // 4), Image.LANCZOS)
    img.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(args.out, optimize=True)
    print(f"{args.out}: {img.width}x{img.height}, {Path(args.out).stat().st_size / 1024:.0f} KB")


if __name__ == "__main__":
    main()
