"""Page latencies in a real headless Chromium: first load, person switch, and a map click on a
1 M-point person, each printed with the no-op rerun of the same page as a baseline.

  * first load (cold): the first page load after the server started (imports, numba caches);
  * first load (warm): a new browser page on the running server, from navigation until the
    script is idle with the map and every chart drawn;
  * person switch: choose another person of the bundled sample until every chart has new data;
  * 1 M points: a generated random-walk trace of ``--points`` points (written to a temporary
    Parquet file, uploaded through the page's uploader: no download), its load time, then map
    clicks on it until every chart has new data.

Never fails on timing. Usage: python bench/bench_page.py [--runs 3] [--points 1000000]
[--sections]   (--sections: the server's time per page section, see dashboard/timing.py)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

import bench_click as bc  # noqa: E402  (shared timing of actions in the page)
import browser_driver as tb  # noqa: E402

LOADED = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  const f = document.querySelector('.lmdk-map.leaflet-container');  // the map is drawn
  if (window.lmdkDrawCharts) window.lmdkDrawCharts();  // and the charts out of view too
  // the allocation and error charts (section 5's chart is lazy on long traces)
  return !!f && document.querySelectorAll('.js-plotly-plot').length >= 2;
}"""


def walk(n: int, seed: int = 7) -> pd.DataFrame:
    """A synthetic person: ``n`` fixes 5 s apart, a random walk with stays (simulation only)."""
    rng = np.random.default_rng(seed)
    moving = rng.random(n) < 0.5
    step = rng.normal(0.0, 4e-5, (n, 2)) * moving[:, None]
    lat = 39.95 + np.cumsum(step[:, 0])
    lon = 116.35 + np.cumsum(step[:, 1])
    time_ = pd.Timestamp("2024-01-01", tz="UTC") + pd.to_timedelta(np.arange(n) * 5, unit="s")
    return pd.DataFrame({"uid": "walker", "time": time_, "lat": lat, "lon": lon})


def first_load(browser, url: str) -> float:
    page = browser.new_page(viewport={"width": 1366, "height": 1000})
    t0 = time.perf_counter()
    page.goto(url)
    page.wait_for_function(LOADED, polling="raf", timeout=120_000)
    elapsed = time.perf_counter() - t0
    page.close()
    return elapsed


def noop(page) -> float:
    page.mouse.click(700, 20)  # focus the page (an empty spot), not a widget
    t = bc.timed(page, lambda: page.keyboard.press("r"), None)
    tb.wait_idle(page, settle_ms=200)
    return t


def map_click(page, lat: float, lon: float) -> float:
    page.locator(tb.MAP).scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    before = page.evaluate(bc.SIGNATURES)
    pos = tb.map_point(page, lat, lon)
    target = page.locator(tb.MAP)
    t = bc.timed(page, lambda: target.click(position=pos), before)
    tb.wait_idle(page, settle_ms=200)
    return t


def switch_person(page, uid: str) -> float:
    box = page.locator("[data-testid='stSidebar'] [data-testid='stSelectbox']").first
    box.scroll_into_view_if_needed()
    box.click()
    option = page.get_by_role("option", name=uid, exact=True)
    option.wait_for(timeout=10_000)
    before = page.evaluate(bc.SIGNATURES)
    t = bc.timed(page, option.click, before)
    tb.wait_idle(page, settle_ms=200)
    return t


SEEN = [0]
PHASES: dict[str, dict[str, float]] = {}


def phase(label: str) -> None:
    """Attribute the server section times logged since the last call to ``label``."""
    SEEN[0], sections = bc.server_sections(SEEN[0])
    PHASES[label] = sections


def line(label: str, times: list[float], base: float) -> None:
    med = statistics.median(times)
    print(f"{label:<34} median {med:7.3f} s   max {max(times):7.3f} s   "
          f"{med / base:5.2f}x no-op rerun")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--sections", action="store_true")
    args = ap.parse_args()

    from playwright.sync_api import sync_playwright

    from lmdk_core.sample import load_sample

    sample = load_sample()
    uids = list(dict.fromkeys(sample.uid))
    tmp = Path(tempfile.mkdtemp())
    big = walk(args.points)
    big_file = tmp / "walker.parquet"
    big.to_parquet(big_file)
    # click spots on the big trace: points of the walk, spread over it
    spots = big.iloc[np.linspace(args.points // 10, args.points - args.points // 10,
                                 args.runs).astype(int)]

    bc.TIMING = tmp / "timing.tsv" if args.sections else None
    port = tb.free_port()
    proc = tb.start_server(port, tmp / "server.log",
                           env={"LMDK_TIMING": str(bc.TIMING)} if bc.TIMING else None)
    url = f"http://127.0.0.1:{port}/?tiles=none"
    report: list[tuple[str, list[float], float]] = []
    try:
        with sync_playwright() as p:
            browser = tb.launch(p)
            cold = first_load(browser, url)
            phase("first load, cold")
            warm = [first_load(browser, url) for _ in range(args.runs)]
            phase("first load, warm")

            page = browser.new_page(viewport={"width": 1366, "height": 1000})
            page.goto(url)
            page.wait_for_function(LOADED, polling="raf", timeout=120_000)
            tb.wait_idle(page, settle_ms=500)
            page.evaluate(bc.OBSERVE)
            phase("")
            base = [noop(page) for _ in range(args.runs)]
            phase("no-op rerun (sample)")
            b = statistics.median(base)
            report += [("no-op rerun (sample)", base, b), ("first load, cold", [cold], b),
                       ("first load, warm", warm, b)]
            switches = [switch_person(page, uids[(i + 1) % 2]) for i in range(args.runs)]
            report.append(("person switch (sample)", switches, b))
            phase("person switch (sample)")

            page.get_by_text("Upload files", exact=True).click()
            tb.wait_idle(page)
            t0 = time.perf_counter()
            page.locator("input[type='file']").first.set_input_files(str(big_file))
            page.get_by_text(f"{args.points:,} points", exact=False).first.wait_for(
                timeout=600_000)
            page.wait_for_function(LOADED, polling="raf", timeout=600_000)
            tb.wait_idle(page, settle_ms=300)
            load_big = time.perf_counter() - t0
            phase(f"upload {args.points:,} points")
            base_big = [noop(page) for _ in range(args.runs)]
            phase(f"no-op rerun ({args.points:,} points)")
            bb = statistics.median(base_big)
            clicks = [map_click(page, float(r.lat), float(r.lon)) for r in spots.itertuples()]
            phase(f"map click ({args.points:,} points)")
            report += [(f"upload {args.points:,} points", [load_big], bb),
                       (f"no-op rerun ({args.points:,} points)", base_big, bb),
                       (f"map click ({args.points:,} points)", clicks, bb)]
            browser.close()
    finally:
        tb.stop_server(proc)
    print(f"{args.runs} runs each; load average {os.getloadavg()[0]:.2f} "
          "(shared 2-core machine: figures are noisy)")
    for label, times, base_s in report:
        line(label, times, base_s)
    if bc.TIMING is not None:
        print("server time per section, summed over each measurement's runs (s):")
        for label, times, _ in report:
            sections = PHASES.get(label, {})
            cells = ", ".join(f"{k} {v / len(times):.2f}"
                              for k, v in sorted(sections.items(), key=lambda kv: -kv[1]))
            print(f"  {label:<32} per run: {cells}")


if __name__ == "__main__":
    main()
