"""Map click → fully updated page, in a real headless Chromium, against a no-op rerun baseline.

Starts `streamlit run dashboard/app.py` on the bundled sample (tiles none), then
  * baseline: press "r" (Streamlit's rerun key) with nothing changed, N times;
  * click:    click the map at a new spot on the trajectory (adds a landmark place), N times.
The clicks go to distinct long-stay places (lmdk_core.stays.suggest_places), so each one adds a
place with landmark timestamps and changes the allocation. Each time is measured in the page's
clock from the action until the script has run and stopped again and (for clicks) every chart
on the page has new data. The map is Leaflet in the page itself (dashboard/map_element.py), which
sends each click at once. Never fails on timing.

The guide's trial releases wait for their switch (off, as a newcomer finds the page);
``--guide-trials`` switches them on first, to measure a click of someone who turned them on.

Usage: python bench/bench_click.py [--clicks 5] [--verbose] [--sections] [--guide-trials]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import browser_driver as tb  # noqa: E402  (server and browser helpers shared with the browser test)

from dashboard import timing  # noqa: E402  (the server's timing file: its writer and reader)

OBSERVE = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  window.__states = [];
  new MutationObserver(() => window.__states.push(
      [performance.now(), app.getAttribute('data-test-script-state')]))
    .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""

DONE = """([t0, before]) => {
  // charts out of view draw their latest figure (dashboard/charts.py), as if scrolled to
  if (window.lmdkDrawCharts) window.lmdkDrawCharts();
  // any state change since the action (a fast run's running/notRunning may be coalesced)
  if (!window.__states.some(e => e[0] >= t0)) return false;
  const app = document.querySelector("[data-testid='stApp']");
  if (app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (before === null) return true;
  // every chart that was on the page has new data (not only the first one)
  const now = Array.from(document.querySelectorAll('.js-plotly-plot'))
    .map(d => d.data ? JSON.stringify(d.data.map(t => t.y)) : null);
  return before.every((b, i) => now[i] !== undefined && now[i] !== null && now[i] !== b);
}"""

SIGNATURES = """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
  .map(d => d.data ? JSON.stringify(d.data.map(t => t.y)) : null)"""


VERBOSE = False
TIMING: Path | None = None  # the server's per-section timing file (dashboard/timing.py)


def server_sections(skip: int) -> tuple[int, dict[str, tuple[float, float]]]:
    """Section (wall, CPU) times the server appended after line ``skip`` of the timing file
    (summed per section over the runs an action caused) and the new line count."""
    if TIMING is None or not TIMING.exists():
        return skip, {}
    new = timing.records(TIMING, skip)
    out: dict[str, tuple[float, float]] = {}
    for _, name, wall, cpu in new:
        w, c = out.get(name, (0.0, 0.0))
        out[name] = (w + wall, c + cpu)
    return skip + len(new), out


def report_sections(label: str, runs: list[dict[str, tuple[float, float]]]) -> None:
    """Median wall and script-thread CPU seconds per section (CPU: robust to the machine's
    load; the page's script thread only)."""
    for col, what in ((0, "wall"), (1, "CPU of the script thread")):
        def med(name: str, col: int = col) -> float:
            return statistics.median([r.get(name, (0.0, 0.0))[col] for r in runs])

        names = sorted({n for r in runs for n in r}, key=lambda n: -med(n))
        cells = ", ".join(f"{n} {med(n):.3f}" for n in names)
        print(f"  server {what} per section, {label} (median s): {cells}")


def timed(page, action, before: list[str | None] | None) -> float:
    t0 = page.evaluate("performance.now()")
    action()
    try:
        page.wait_for_function(DONE, arg=[t0, before], polling="raf", timeout=60_000)
    except Exception:
        print("timed out; script states since the action:",
              page.evaluate("(t0) => window.__states.filter(e => e[0] >= t0)", t0), file=sys.stderr)
        raise
    end = page.evaluate("performance.now()")
    if VERBOSE:
        states = page.evaluate("(t0) => window.__states.filter(e => e[0] >= t0)", t0)
        timeline = [(round((t - t0) / 1000, 3), s) for t, s in states]
        print("  ", timeline, f"done {(end - t0) / 1000:.3f}")
    return (end - t0) / 1000.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clicks", type=int, default=5)
    ap.add_argument("--verbose", action="store_true", help="print each run's script-state timeline")
    ap.add_argument("--sections", action="store_true",
                    help="also print the server's time per page section (dashboard/timing.py)")
    ap.add_argument("--guide-trials", action="store_true",
                    help="switch on the guide's trial releases before measuring")
    args = ap.parse_args()
    global VERBOSE
    VERBOSE = args.verbose

    from playwright.sync_api import sync_playwright

    from lmdk_core.sample import load_sample
    from lmdk_core.stays import suggest_places

    sample = load_sample()
    first = sample[sample.uid == sample.uid.iloc[0]].reset_index(drop=True)
    # distinct stay places (≥ 150 m apart), so every click adds a place with landmark timestamps
    spots = suggest_places(first, top=args.clicks)

    tmp = Path(tempfile.mkdtemp())
    log = tmp / "server.log"
    global TIMING
    TIMING = tmp / "timing.tsv" if args.sections else None
    port = tb.free_port()
    proc = tb.start_server(port, log, env={"LMDK_TIMING": str(TIMING)} if TIMING else None)
    try:
        with sync_playwright() as p:
            browser = tb.launch(p)
            page = browser.new_page(viewport={"width": 1366, "height": 1000})
            page.goto(f"http://127.0.0.1:{port}/?tiles=none")
            # a cold start under load; every chart drawn (clicks are timed until all change)
            tb.wait_idle(page, settle_ms=800, timeout_ms=180_000, draw=True)
            page.locator(tb.MAP).wait_for(timeout=30_000)
            if args.guide_trials:
                label = page.get_by_text(re.compile("^Trial releases on your trace"))
                label.scroll_into_view_if_needed()
                label.click()  # the switch's input is drawn under its label
                tb.wait_idle(page, settle_ms=800, timeout_ms=180_000)
                page.locator("h1").first.scroll_into_view_if_needed()  # back to the top
                tb.draw_charts(page)
            page.evaluate(OBSERVE)

            seen, _ = server_sections(0)
            base, base_sections = [], []
            for _ in range(args.clicks):
                page.mouse.click(700, 20)  # focus the page (an empty spot), not a widget
                base.append(timed(page, lambda: page.keyboard.press("r"), None))
                tb.wait_idle(page, settle_ms=200)
                seen, sections = server_sections(seen)
                base_sections.append(sections)

            clicks, click_sections = [], []
            for _, row in spots.iterrows():
                # the map fully in view first: a partly hidden map scrolls under the click
                page.locator(tb.MAP).scroll_into_view_if_needed()
                page.wait_for_timeout(300)
                before = page.evaluate(SIGNATURES)
                pos = tb.map_point(page, float(row.lat), float(row.lon))
                target = page.locator(tb.MAP)
                clicks.append(timed(page, lambda t=target, p=pos: t.click(position=p), before))
                tb.wait_idle(page, settle_ms=200)
                seen, sections = server_sections(seen)
                click_sections.append(sections)
            browser.close()
    finally:
        tb.stop_server(proc)

    med_b, med_c = statistics.median(base), statistics.median(clicks)
    trials = "on" if args.guide_trials else "off"
    print(f"bundled sample, {len(first):,} points for the first user; {args.clicks} runs each; "
          f"guide's trial releases {trials}; load average {os.getloadavg()[0]:.2f}")
    print(f"no-op rerun ('r')           median {med_b:.3f} s   max {max(base):.3f} s")
    print(f"map click -> page updated   median {med_c:.3f} s   max {max(clicks):.3f} s")
    print(f"click / no-op rerun ratio   {med_c / med_b:.2f}x")
    if TIMING is not None:
        report_sections("no-op rerun", base_sections)
        report_sections("map click", click_sections)
    print("caveat: shared 2-core machine; figures are noisy")


if __name__ == "__main__":
    main()
