"""Many people at once: N headless browser sessions on one dashboard server.

For each N (default 1, 4, 8) a fresh `streamlit run dashboard/app.py` is started; N browser
contexts (separate sessions, as N people) open the app on the bundled sample at the same time,
then each clicks the map at ``--clicks`` distinct long-stay places of the first person, all
sessions clicking concurrently. A click's latency is measured in the page's clock from the
click until the map shows the new place (the click's rerun has reached the browser) and the
script has stopped running. Server memory is the resident set size of the server's process
tree after every session has loaded and clicked, minus its size after one warm-up session
(imports, the sample and caches shared by all sessions: shown as "warm"); per session = that
difference / N. The N = 1 row is the baseline each row's median is compared with.

Two latencies are printed for every click:

* **in the browser** (``median s``): from the click until the map shows the new place and the
  script has stopped, in the page's clock — what a person sees, *including* the rendering of
  their own browser;
* **on the server** (``server s``): the wall time of the click's page run on the server
  (dashboard/timing.py's ``total`` section), from the start of the script until its last element
  is sent — what the shared server adds, whoever runs the browsers.

In a classroom every person's browser runs on their own computer; here all N headless Chromiums
share the server's 2 cores, and they cost several times the server's CPU per click (both are
printed, as CPU seconds per click). So the clients run at the lowest CPU priority (``nice 19``,
``--client-nice``) to keep the server's share of the machine close to what it has in a real
deployment; ``--client-nice 0`` measures everything at equal priority.

* **each browser on its own computer** (an estimate, printed last): the server's median run
  under N sessions plus what one browser adds to a click when it is alone with the server (the
  first row's in-browser median minus its server median). It assumes a person's browser needs
  the same time with N others on the server as alone, which holds when each browser has its
  own computer; the in-browser column is the same click with all N browsers on these 2 cores.

The browsers' CPU per click is also printed by part (:func:`client_parts`): each renderer's
main thread (Streamlit's React re-render of the page, scripts, style, layout, paint), its other
threads (compositor, raster, and V8's optimising compilers and garbage collector, which run on
worker threads: a large share of what is not the main thread), the GPU process (compositing and
WebGL, both in software in headless Chromium) and the rest. A chart out of view is not redrawn on
a click (dashboard/charts.py): these sessions never scroll from the map, so, as for a person
looking at the map, their clicks redraw no chart (Streamlit still re-renders every element).

Target (issue 27, 2 cores): 8 sessions with median click ≤ 1.5 s and ≤ 150 MB per session.
Never fails on timing; prints a table.

Usage: python bench/bench_load.py [--sessions 1 4 8] [--clicks 3] [--client-nice 19]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import browser_driver as tb  # noqa: E402  (server helpers shared with the browser tests)
import psutil  # noqa: E402
from playwright.async_api import async_playwright  # noqa: E402

from dashboard import timing  # noqa: E402  (the server's timing file: its writer and reader)

READY = """() => { const app = document.querySelector("[data-testid='stApp']");
  const m = document.querySelector('.lmdk-map.leaflet-container');
  return app && m && m.lmdkMap && app.getAttribute('data-test-script-state') === 'notRunning'
    && m.dataset.places !== undefined; }"""
CLICKED = """(n) => { const app = document.querySelector("[data-testid='stApp']");
  const m = document.querySelector('.lmdk-map');
  return m && m.dataset.places === String(n)
    && app.getAttribute('data-test-script-state') === 'notRunning'; }"""


def tree(pid: int) -> list[psutil.Process]:
    """A process and its living descendants."""
    proc = psutil.Process(pid)
    return [proc, *proc.children(recursive=True)]


def cpu_s(procs: list[psutil.Process]) -> float:
    """User + system CPU seconds of ``procs`` (those still alive)."""
    total = 0.0
    for p in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            c = p.cpu_times()
            total += c.user + c.system
    return total


def clients(server_pid: int) -> list[psutil.Process]:
    """This benchmark's browser processes (Playwright's driver and Chromium): every descendant
    of this process outside the server's tree."""
    server = {p.pid for p in tree(server_pid)}
    return [p for p in psutil.Process().children(recursive=True) if p.pid not in server]


def client_parts(procs: list[psutil.Process]) -> dict[str, float]:
    """CPU seconds of the browser processes by where they are spent: ``main`` (each renderer's
    main thread: scripts, style, layout, paint), ``renderer`` (its other threads: compositor,
    raster, V8's compiler and garbage collector), ``gpu`` (the GPU process: compositing and WebGL,
    in software here) and ``rest`` (the browser process, its utilities, Playwright's driver)."""
    out = dict.fromkeys(("main", "renderer", "gpu", "rest"), 0.0)
    for p in procs:
        with contextlib.suppress(psutil.Error):
            kind = next((a[7:] for a in p.cmdline() if a.startswith("--type=")), "")
            for t in p.threads():
                part = ("gpu" if kind == "gpu-process" else "rest" if kind != "renderer"
                        else "main" if t.id == p.pid else "renderer")
                out[part] += t.user_time + t.system_time
    return out


def renice(procs: list[psutil.Process], nice: int) -> None:
    for p in procs:
        with contextlib.suppress(psutil.Error):
            p.nice(nice)


def server_runs(path: Path, skip: int) -> list[float]:
    """Wall seconds of each page run the server timed after line ``skip`` of its timing file."""
    return [wall for _, name, wall, _ in timing.records(path, skip) if name == "total"]


def tree_rss_mb(pid: int) -> float:
    """Resident memory of a process and its children (MB)."""
    total = 0
    for p in tree(pid):
        with contextlib.suppress(psutil.NoSuchProcess):
            total += p.memory_info().rss
    return total / 2**20


def targets(k: int) -> list[tuple[float, float]]:
    """The first person's ``k`` longest stays (distinct places: each click adds one)."""
    from lmdk_core.sample import load_sample
    from lmdk_core.stays import suggest_places

    s = load_sample()
    cands = suggest_places(s[s.uid == s.uid.iloc[0]])
    return [(float(r.lat), float(r.lon)) for r in cands.head(k).itertuples(index=False)]


async def session(browser, url: str, points: list[tuple[float, float]],
                  loaded: asyncio.Barrier, on_loaded=None, keep_open: bool = False
                  ) -> list[float]:
    """One person: open the app, wait for everyone to be loaded, click each point; the click
    latencies in seconds. ``on_loaded`` runs once, in the session that passes the barrier
    first (every session has loaded; no page run is in flight). ``keep_open``: leave the page
    open (its renderer's CPU time is read before the browser closes)."""
    ctx = await browser.new_context(viewport={"width": 1280, "height": 720})
    page = await ctx.new_page()
    try:
        await page.goto(url, timeout=180_000)
        await page.wait_for_function(READY, timeout=180_000, polling=50)
        # and its charts in view drawn (they draw after the script has stopped): their first
        # drawing is part of loading the page, not of the first click (those out of view wait)
        await page.wait_for_function(tb.CHARTS_SETTLED, timeout=180_000, polling=50)
        await loaded.wait()
        if on_loaded is not None:
            on_loaded()
        out = []
        for i, (lat, lon) in enumerate(points, start=1):
            box = await page.locator(tb.MAP).bounding_box()
            pt = await page.locator(tb.MAP).evaluate(
                "(el, ll) => { const p = el.lmdkMap.latLngToContainerPoint(ll);"
                " return [p.x, p.y, performance.now()]; }", [lat, lon])
            t0 = await page.evaluate("performance.now()")
            await page.mouse.click(box["x"] + pt[0], box["y"] + pt[1])
            await page.wait_for_function(CLICKED, arg=i, timeout=180_000, polling=20)
            out.append((await page.evaluate("performance.now()") - t0) / 1000)
        return out
    finally:
        if not keep_open:
            await ctx.close()


async def run_n(n: int, clicks: int, points: list[tuple[float, float]], nice: int) -> dict:
    tmp = Path(tempfile.mkdtemp())
    timing_file = tmp / "timing.tsv"
    proc = tb.start_server(port := tb.free_port(), tmp / "server.log",
                           env={"LMDK_TIMING": str(timing_file)})
    mark: dict = {}

    def at_click_phase() -> None:
        if mark:
            return
        timing_file.touch()
        mark.update(lines=len(timing_file.read_text(encoding="utf-8").splitlines()),
                    server=cpu_s(tree(proc.pid)), clients=client_parts(clients(proc.pid)))

    try:
        cold = tree_rss_mb(proc.pid)
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=tb.CHROMIUM, args=tb.CHROMIUM_ARGS)
            renice(clients(proc.pid), nice)
            # warm-up: one session loads the app once (imports, the sample, shared caches), so
            # "per session" below is what each further person costs
            await session(browser, f"http://127.0.0.1:{port}", [], asyncio.Barrier(1))
            before = tree_rss_mb(proc.pid)
            loaded = asyncio.Barrier(n)
            t = time.monotonic()
            lat = await asyncio.gather(*[session(browser, f"http://127.0.0.1:{port}", points,
                                                 loaded, at_click_phase, keep_open=True)
                                         for _ in range(n)])
            wall = time.monotonic() - t
            after = tree_rss_mb(proc.pid)  # sessions are still alive on the server
            server_cpu = cpu_s(tree(proc.pid)) - mark["server"]
            per = max(n * len(points), 1)
            parts = {k: (v - mark["clients"][k]) / per
                     for k, v in client_parts(clients(proc.pid)).items()}
            await browser.close()
        runs = sorted(server_runs(timing_file, mark["lines"]))
    finally:
        tb.stop_server(proc)
    flat = sorted(x for s in lat for x in s)
    return {"n": n, "median": statistics.median(flat), "p95": pct95(flat), "clicks": len(flat),
            "server": statistics.median(runs) if runs else float("nan"),
            "server_p95": pct95(runs) if runs else float("nan"), "runs": len(runs),
            "server_cpu": server_cpu / max(len(flat), 1),
            "client_cpu": sum(parts.values()), "parts": parts,
            "cold": cold, "before": before, "after": after,
            "per_session": (after - before) / n, "wall": wall}


def pct95(xs: list[float]) -> float:
    """95th percentile of sorted ``xs`` (nearest rank)."""
    return xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, nargs="+", default=[1, 4, 8])
    ap.add_argument("--clicks", type=int, default=3)
    ap.add_argument("--client-nice", type=int, default=19,
                    help="CPU priority of the browsers (19 lowest, 0 the server's)")
    args = ap.parse_args()
    points = targets(args.clicks)
    print(f"{psutil.cpu_count()} cores; each session clicks {len(points)} places; "
          "in the browser = click -> new place on the map and script stopped; on the server = "
          f"the click's page run; browsers at nice {args.client_nice}; load average "
          f"{os.getloadavg()[0]:.1f} at the start (other work on the machine slows every row)")
    rows = [asyncio.run(run_n(n, args.clicks, points, args.client_nice)) for n in args.sessions]
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    base = rows[0]["median"]
    print(f"{'sessions':>8} {'clicks':>6} {'median s':>9} {'p95 s':>7} {'x base':>7} "
          f"{'server s':>8} {'p95':>6} {'runs':>5} {'CPU s/click server':>18} {'browsers':>8} "
          f"{'server MB cold':>14} {'warm':>6} {'after':>7} {'MB/session':>10} {'wall s':>7}")
    for r in rows:
        print(f"{r['n']:>8} {r['clicks']:>6} {r['median']:>9.2f} {r['p95']:>7.2f} "
              f"{r['median'] / base:>7.2f} {r['server']:>8.2f} {r['server_p95']:>6.2f} "
              f"{r['runs']:>5} {r['server_cpu']:>18.2f} {r['client_cpu']:>8.2f} "
              f"{r['cold']:>14.0f} {r['before']:>6.0f} {r['after']:>7.0f} "
              f"{r['per_session']:>10.0f} {r['wall']:>7.1f}")
    print("browsers' CPU s/click by part (bench_load.client_parts): renderer main thread, "
          "renderer's other threads, GPU process, rest")
    for r in rows:
        print(f"{r['n']:>8} sessions: " + "  ".join(f"{k} {v:.2f}" for k, v in r["parts"].items()))
    own = rows[0]["median"] - rows[0]["server"]  # one unloaded browser's share of a click
    print(f"each browser on its own computer (estimate): the server's median run under N "
          f"sessions + what one browser adds to a click when it is alone with the server "
          f"({rows[0]['n']}-session row: in the browser {rows[0]['median']:.2f} s - on the "
          f"server {rows[0]['server']:.2f} s = {own:.2f} s)")
    for r in rows:
        print(f"{r['n']:>8} sessions: {r['server']:.2f} + {own:.2f} = {r['server'] + own:.2f} s")
    print(f"baseline: the {rows[0]['n']}-session row; target: 8 sessions, median ≤ 1.5 s, "
          "≤ 150 MB per session")


if __name__ == "__main__":
    main()
