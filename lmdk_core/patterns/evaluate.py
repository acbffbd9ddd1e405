"""Evaluation protocol for pattern-level PPMs — OUR OWN protocol, not the paper's.

Gu et al.'s tables are not available (only abstracts and seed notes), so this protocol is ours:

* data: the deterministic T-Drive-shaped taxi set (:mod:`lmdk_core.patterns.taxi`; ``--taxis``,
  ``--days``) and/or trajectory files (``--trajectories``, any format lmdk reads); events = a taxi
  *enters* a hotspot (300 m discs) or, with ``--grid-m``, a grid cell; ticks coarsened to a
  public ``--tick-s`` grid. The first day is the *history* (it chooses the patterns and the
  Adaptive PPM's budgets, and is treated as public); the remaining days are released and scored;
* private pattern of length m ∈ {2..5}: a chain of regions that starts with the history's most
  frequent consecutive pair and follows each region's most frequent successor (for the taxi set:
  enter H0 → H1 → … along the generator's preferred chain), window m × 45 min; public patterns:
  the 4 most frequent region-to-region pairs of the history other than the private pattern's own
  steps, window 1 h (patterns are public choices; the released period plays no part in them);
* mechanisms: Uniform PPM (instance reading = pattern-level ε-DP), Uniform PPM under the
  single-event reading (ε per event: a weaker guarantee, shown for reference), Adaptive PPM,
  event-level RR on every type, w-event BD/BA on each user's series of each type (ε/|F_P| per
  type, so each user's private occurrence costs ≤ ε), landmark Uniform/Skip/Adaptive with the
  private events as landmarks (utility references; see :mod:`lmdk_core.patterns.baselines`);
* ε ∈ {0.1, 0.5, 1, 2, 4, 8}, α ∈ {0.25, 0.5, 0.75}, ``--seeds`` seeds (100 by default; the
  per-user baselines — w-event and landmark, one release per user (and type) — use
  ``--baseline-seeds``); Q and MRE = (Q_ord − Q)/Q_ord with
  Q_ord = 1 (the unprotected stream against itself), mean ± standard deviation over seeds.

Seeds here are simulation seeds: this command evaluates mechanisms, it releases nothing.
Run ``python -m lmdk_core.patterns.evaluate --help``.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._deprecation import renamed
from ..errors import LmdkError
from ..noise.source import simulation_rng
from ..times import NS_PER_DAY, utc_midnight_ns
from . import baselines as bl
from .extract import region_events
from .match import Pattern, match_all
from .ppm import adaptive_allocation, event_rr, release_with_allocation, uniform_ppm
from .quality import confusion
from .regions import GridRegions, PlaceRegions
from .stream import NS_PER_S, EventStream
from .taxi import hotspot_regions, taxi_trajectories

__all__ = [
    "MECHANISMS",
    "Setup",
    "choose_patterns",
    "compare",
    "evaluate",
    "event_shares",
    "main",
    "markdown_tables",
    "mechanism_runners",
    "prepare",
    "summarise",
]

EPSILONS = (0.1, 0.5, 1.0, 2.0, 4.0, 8.0)
ALPHAS = (0.25, 0.5, 0.75)
LENGTHS = (2, 3, 4, 5)
MECHANISMS = ("uniform", "uniform-event", "adaptive", "event-rr", "bd", "ba",
              "lm-uniform", "lm-skip", "lm-adaptive")
"""Mechanism keys of the table (see the module docstring)."""
PER_USER = {"bd", "ba", "lm-uniform", "lm-skip", "lm-adaptive"}
"""Mechanisms with one release_values call per user (and type): run with ``baseline_seeds``."""


@dataclass(frozen=True)
class Setup:
    """History and evaluation streams (same ticks grid and types) and the region definitions."""

    history: EventStream
    stream: EventStream
    regions: object
    source: str


@renamed(seed="rng")
def prepare(*, taxis: int = 300, days: float = 2.0, tick_s: float = 300.0,
            grid_m: float | None = None, trajectories: Sequence[str] = (),
            rng: int = 2008) -> Setup:
    """Build the history (first day) and evaluation (the rest) event streams (``rng``: the
    integer seed of the synthetic taxis and their hotspots)."""
    frames = []
    if taxis:
        frames.append(taxi_trajectories(taxis, days=days, rng=rng))
    if trajectories:
        from ..readers import read_trajectories

        for path in trajectories:
            df = read_trajectories(path)
            frames.append(df[[c for c in ("uid", "time", "lat", "lon") if c in df.columns]])
    if not frames:
        raise LmdkError("no data: give --taxis > 0 or --trajectories FILE")
    traj = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if len(frames) > 1:
        traj["uid"] = traj["uid"].astype(str)
    regions: GridRegions | PlaceRegions
    if grid_m:
        regions = GridRegions.covering(traj["lat"], traj["lon"], grid_m)
    else:
        regions = hotspot_regions(rng=rng)
    events = region_events(traj, regions).coarsen(tick_s)
    t0 = int(events.tick_time.min()) if events.n_ticks else 0
    split = utc_midnight_ns(t0) + NS_PER_DAY  # midnight after the first tick
    source = f"{taxis} synthetic taxis x {days:g} days" if taxis else ""
    if trajectories:
        source += (" + " if source else "") + ", ".join(trajectories)
    return Setup(events.time_slice(stop=split), events.time_slice(start=split), regions, source)


def _pair_counts(stream: EventStream, window_ns: int) -> pd.Series:
    """How often each ordered pair of types follows within ``window_ns`` (consecutive events),
    most frequent first (ties: by type codes), indexed by (first type, second type)."""
    t, c, u = stream.time, stream.etype.astype(np.int64), stream.uid
    ok = (u[1:] == u[:-1]) & (t[1:] > t[:-1]) & (t[1:] - t[:-1] <= window_ns) & (c[1:] != c[:-1])
    n_types = len(stream.types)
    keys, counts = np.unique(c[:-1][ok] * n_types + c[1:][ok], return_counts=True)
    order = np.lexsort((keys, -counts))
    keys, counts = keys[order], counts[order]
    index = pd.MultiIndex.from_arrays([keys // n_types, keys % n_types])
    return pd.Series(counts, index=index)


def choose_patterns(history: EventStream, m: int) -> list[Pattern]:
    """Private seq of length m (a frequent chain) + 4 frequent public pairs, from the history."""
    counts = _pair_counts(history, 3600 * NS_PER_S)
    if counts.empty:
        raise LmdkError("the history holds no consecutive events: cannot choose patterns")
    succ: dict[int, int] = {}
    for (a, b), _ in counts.items():
        succ.setdefault(int(a), int(b))
    chain = [int(counts.index[0][0])]
    while len(chain) < m:  # follow the most frequent successor, avoiding repeats
        nxt = succ.get(chain[-1])
        if nxt is None or nxt in chain:
            nxt = next(int(b) for (a, b), _ in counts.items() if int(b) not in chain)
        chain.append(nxt)
    names = history.types
    private = Pattern(tuple(names[c] for c in chain), m * 45 * 60, private=True,
                      name=f"private m={m}")
    own = set(itertools.pairwise(chain))
    public: list[Pattern] = []
    for (a, b), _ in counts.items():
        if (int(a), int(b)) in own:
            continue
        public.append(Pattern((names[a], names[b]), 3600, name=f"public {len(public) + 1}"))
        if len(public) == 4:
            break
    return [private, *public]


@renamed(positional=("epsilon",))
def mechanism_runners(stream: EventStream, patterns: Sequence[Pattern], *, epsilon: float,
                      allocation: dict | None = None, types: Sequence[str] | None = None,
                      regions: object = None) -> dict[str, Callable[[object], EventStream]]:
    """One function ``rng -> released stream`` per mechanism key of :data:`MECHANISMS`.

    ``allocation``: the Adaptive PPM's per-position budgets (from a disjoint history; without it
    "adaptive" is left out); ``types``: the types the stream-wide baselines perturb (default:
    the patterns' types — other types change no match).
    """
    s, eps, pats = stream, epsilon, list(patterns)
    ty = sorted({t for p in pats for t in p.types}) if types is None else list(types)
    run: dict[str, Callable[[object], EventStream]] = {
        "uniform": lambda r: uniform_ppm(s, pats, epsilon=eps, regions=regions, rng=r).stream,
        "uniform-event": lambda r: uniform_ppm(s, pats, epsilon=eps, neighbour="event",
                                               regions=regions, rng=r).stream,
        "event-rr": lambda r: event_rr(s, pats, epsilon=eps, types=ty, regions=regions,
                                       rng=r).stream,
    }
    if allocation is not None:
        run["adaptive"] = lambda r: release_with_allocation(
            s, pats, allocation, epsilon=eps, regions=regions, rng=r,
            mechanism="adaptive").stream
    for scheme in bl.WEVENT_SCHEMES:
        run[scheme] = (lambda sc: lambda r: bl.wevent(s, pats, epsilon=eps, scheme=sc, types=ty,
                                                      regions=regions, rng=r).stream)(scheme)
    for scheme in bl.LANDMARK_SCHEMES:
        run[f"lm-{scheme}"] = (lambda sc: lambda r: bl.landmark(
            s, pats, epsilon=eps, scheme=sc, types=ty, regions=regions, rng=r).stream)(scheme)
    return {k: run[k] for k in MECHANISMS if k in run}


def compare(stream: EventStream, patterns: Sequence[Pattern], *, epsilons: Sequence[float],
            mechanisms: Sequence[str] = MECHANISMS, history: EventStream | None = None,
            seeds: int = 10, baseline_seeds: int | None = None, adaptive_alpha: float = 0.5,
            seed_base: Sequence[int] = (), types: Sequence[str] | None = None,
            progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """TP/FP/FN of the public patterns, one row per (ε, mechanism, seed).

    Simulation seeds ``[seed, *seed_base, round(1000 ε)]``. "adaptive" needs ``history`` (a
    period disjoint from ``stream``); it is skipped without one.
    """
    public = [p for p in patterns if not p.private]
    truth = match_all(stream, public)
    b_seeds = seeds if baseline_seeds is None else min(seeds, baseline_seeds)
    rows = []
    for eps in epsilons:
        alloc = None
        if history is not None and "adaptive" in mechanisms:
            alloc = adaptive_allocation(history, patterns, epsilon=eps, alpha=adaptive_alpha)
        runners = mechanism_runners(stream, patterns, epsilon=eps, allocation=alloc,
                                    types=types)
        for name in mechanisms:
            if name not in runners:
                continue
            n_seeds = b_seeds if name in PER_USER else seeds
            t0 = time.perf_counter()
            for seed in range(n_seeds):
                rng = simulation_rng([seed, *seed_base, round(eps * 1000)])
                answers = match_all(runners[name](rng), public)
                tp = fp = fn = 0
                for t, a in zip(truth, answers, strict=True):
                    x, y, z = confusion(t, a)
                    tp, fp, fn = tp + x, fp + y, fn + z
                rows.append((eps, name, seed, tp, fp, fn))
            if progress:
                progress(f"eps={eps:g} {name}: {n_seeds} seeds "
                         f"in {time.perf_counter() - t0:.1f} s")
    return pd.DataFrame(rows, columns=["epsilon", "mechanism", "seed", "tp", "fp", "fn"])


def event_shares(stream: EventStream, patterns: Sequence[Pattern], *, epsilons: Sequence[float],
                 mechanisms: Sequence[str] = ("bd", "ba"), seeds: int = 1,
                 types: Sequence[str] | None = None, seed_base: Sequence[int] = ()
                 ) -> pd.DataFrame:
    """How many of each user's cells (ticks × perturbed types; default: the patterns' types) a
    release shows as events: one row per (ε, mechanism, seed, user) with ``share`` and the
    unprotected stream's ``true`` share. Seeds as in :func:`compare`; "adaptive" is left out
    (it needs a history)."""
    ty = sorted({t for p in patterns for t in p.types}) if types is None else list(types)
    codes = np.array(sorted({stream.type_code(t) for t in ty}))
    cells = np.maximum(np.diff(stream.user_tick_ranges(), axis=1).ravel() * codes.size, 1)

    def share(s: EventStream) -> np.ndarray:
        hits = s.tick[np.isin(s.etype, codes)]
        return np.bincount(s.tick_uid[hits], minlength=len(s.users)) / cells

    true = share(stream)
    users = np.arange(len(stream.users))
    parts = []
    for eps in epsilons:
        runners = mechanism_runners(stream, patterns, epsilon=eps, types=ty)
        for name in mechanisms:
            if name not in runners:
                continue
            for seed in range(seeds):
                rng = simulation_rng([seed, *seed_base, round(eps * 1000)])
                parts.append(pd.DataFrame({"epsilon": eps, "mechanism": name, "seed": seed,
                                           "user": users, "share": share(runners[name](rng)),
                                           "true": true}))
    return pd.concat(parts, ignore_index=True)


def evaluate(setup: Setup, *, lengths: Sequence[int] = LENGTHS,
             epsilons: Sequence[float] = EPSILONS, seeds: int = 100, baseline_seeds: int = 10,
             mechanisms: Sequence[str] = MECHANISMS, adaptive_alpha: float = 0.5,
             progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Long table: one row per (m, ε, mechanism, seed) with TP, FP, FN."""
    parts = []
    for m in lengths:
        patterns = choose_patterns(setup.history, m)
        say = None if progress is None else (lambda s, m=m: progress(f"m={m} {s}"))
        runs = compare(setup.stream, patterns, epsilons=epsilons, mechanisms=mechanisms,
                       history=setup.history, seeds=seeds, baseline_seeds=baseline_seeds,
                       adaptive_alpha=adaptive_alpha, seed_base=(m,), progress=say)
        parts.append(runs.assign(m=m))
    out = pd.concat(parts, ignore_index=True)
    return out[["m", "epsilon", "mechanism", "seed", "tp", "fp", "fn"]]


def summarise(runs: pd.DataFrame, alphas: Sequence[float] = ALPHAS) -> pd.DataFrame:
    """Mean and std over seeds of Prec, Rec, Q and MRE per (α, [m,] ε, mechanism)."""
    out = []
    tp, fp, fn = runs["tp"].to_numpy(), runs["fp"].to_numpy(), runs["fn"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        prec = np.where(tp + fp > 0, tp / (tp + fp), np.where(fn == 0, 1.0, 0.0))
        rec = np.where(tp + fn > 0, tp / (tp + fn), np.where(fp == 0, 1.0, 0.0))
    keys = ["alpha", *(["m"] if "m" in runs.columns else []), "epsilon", "mechanism"]
    for a in alphas:
        q = a * prec + (1 - a) * rec
        df = runs.assign(alpha=a, prec=prec, rec=rec, q=q, mre=1.0 - q)
        g = df.groupby(keys, sort=False)
        agg = g.agg(prec=("prec", "mean"), rec=("rec", "mean"), q=("q", "mean"),
                    q_std=("q", "std"), mre=("mre", "mean"), seeds=("seed", "size"))
        out.append(agg.reset_index())
    return pd.concat(out, ignore_index=True)


def format_table(summary: pd.DataFrame) -> str:
    """Per α: rows (m, mechanism), columns ε, cells ``Q (MRE)``."""
    lines = []
    for a, block in summary.groupby("alpha", sort=False):
        lines.append(f"\nα = {a:g}   cells: Q (MRE)   mean over seeds")
        cell = block.assign(c=[f"{q:.3f} ({e:.3f})" for q, e in zip(block.q, block.mre,
                                                                      strict=True)])
        wide = cell.pivot_table(index=["m", "mechanism"], columns="epsilon", values="c",
                                aggfunc="first", sort=False)
        wide.columns = [f"ε={e:g}" for e in wide.columns]
        lines.append(wide.to_string())
    return "\n".join(lines)


def markdown_tables(summary: pd.DataFrame, *, alpha: float = 0.5) -> str:
    """The docs' tables (docs/pattern-level-dp.md §9): mean Q at ``alpha`` per (m, mechanism) and
    ε, then Q averaged over m at every other α of ``summary``; Markdown, 3 decimals."""
    def table(block: pd.DataFrame, index: list[str]) -> list[str]:
        wide = block.pivot_table(index=index, columns="epsilon", values="q", aggfunc="mean",
                                 sort=False)
        head = [*(("α" if i == "alpha" else i) for i in index), *(f"ε={e:g}" for e in wide.columns)]
        rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for key, vals in wide.iterrows():
            keys = key if isinstance(key, tuple) else (key,)
            rows.append("| " + " | ".join([*(f"{k:g}" if isinstance(k, float) else str(k)
                                              for k in keys), *(f"{v:.3f}" for v in vals)])
                        + " |")
        return rows
    main_rows = table(summary[summary.alpha == alpha], ["m", "mechanism"])
    lines = [f"Q at α = {alpha:g}:", "", *main_rows]
    others = summary[summary.alpha != alpha]
    if len(others):
        lines += ["", "Q averaged over m at α = " + " and ".join(
            f"{a:g}" for a in others.alpha.unique()) + ":", "",
            *table(others, ["alpha", "mechanism"])]
    return "\n".join(lines)


def _floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x.strip()]


def _print_event_shares(setup: Setup, args: argparse.Namespace) -> int:
    print(f"Released event shares — our own protocol\ndata: {setup.source}; evaluation stream "
          f"{len(setup.stream):,} events on {setup.stream.n_ticks:,} ticks of {args.tick_s:g} s; "
          f"seeds {min(args.seeds, args.baseline_seeds)}")
    for m in args.lengths:
        patterns = choose_patterns(setup.history, m)
        df = event_shares(setup.stream, patterns, epsilons=args.epsilons,
                          mechanisms=[x for x in args.mechanisms if x != "adaptive"],
                          seeds=min(args.seeds, args.baseline_seeds), seed_base=(m,))
        wide = df.pivot_table(index="mechanism", columns="epsilon", values="share",
                              aggfunc="mean", sort=False)
        wide.columns = [f"ε={e:g}" for e in wide.columns]
        print(f"\nm = {m}: share of cells released as events, mean over users; true share "
              f"{df['true'].groupby(df['user']).first().mean():.4f}")
        print(wide.to_string(float_format=lambda v: f"{v:.4f}"))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m lmdk_core.patterns.evaluate",
        description="Print Q and MRE per mechanism (our own protocol; see the module docs).")
    ap.add_argument("--taxis", type=int, default=300, help="synthetic taxis (0: none)")
    ap.add_argument("--days", type=float, default=2.0,
                    help="days of taxi data; the first is the history (default 2)")
    ap.add_argument("--trajectories", nargs="*", default=[], help="trajectory files to add")
    ap.add_argument("--grid-m", type=float, default=None,
                    help="grid cells of this size (m) instead of the hotspots")
    ap.add_argument("--tick-s", type=float, default=300.0, help="public tick grid (s)")
    ap.add_argument("--seeds", type=int, default=100, help="seeds per setting (default 100)")
    ap.add_argument("--baseline-seeds", type=int, default=10,
                    help="seeds for the per-user baselines, w-event and landmark (default 10)")
    ap.add_argument("--epsilons", type=_floats, default=list(EPSILONS))
    ap.add_argument("--alphas", type=_floats, default=list(ALPHAS))
    ap.add_argument("--lengths", type=lambda s: [int(x) for x in s.split(",")],
                    default=list(LENGTHS), help="private pattern lengths m")
    ap.add_argument("--mechanisms", type=lambda s: s.split(","), default=list(MECHANISMS))
    ap.add_argument("--csv", default=None, help="also write the summary table to this CSV")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    ap.add_argument("--event-shares", action="store_true",
                    help="print the share of cells each mechanism releases as events (mean over "
                         "users and --baseline-seeds seeds) against the true share, not Q")
    ap.add_argument("--markdown", action="store_true",
                    help="print the docs' Markdown tables instead of the text table")
    args = ap.parse_args(argv)
    bad = [m for m in args.mechanisms if m not in MECHANISMS]
    if bad:
        ap.error(f"unknown mechanism(s) {bad}; choose from {', '.join(MECHANISMS)}")
    try:
        t0 = time.perf_counter()
        setup = prepare(taxis=args.taxis, days=args.days, tick_s=args.tick_s,
                        grid_m=args.grid_m, trajectories=args.trajectories)
        say = None if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
        if args.event_shares:
            return _print_event_shares(setup, args)
        runs = evaluate(setup, lengths=args.lengths, epsilons=args.epsilons, seeds=args.seeds,
                        baseline_seeds=args.baseline_seeds, mechanisms=args.mechanisms,
                        progress=say)
        summary = summarise(runs, args.alphas)
    except LmdkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"Pattern-level PPM evaluation — our own protocol (not the paper's tables)\n"
          f"data: {setup.source}; evaluation stream {len(setup.stream):,} events on "
          f"{setup.stream.n_ticks:,} ticks of {args.tick_s:g} s; history "
          f"{len(setup.history):,} events; seeds {args.seeds} "
          f"(per-user baselines {min(args.seeds, args.baseline_seeds)}); "
          f"{time.perf_counter() - t0:.0f} s")
    print(markdown_tables(summary) if args.markdown else format_table(summary))
    if args.csv:
        summary.to_csv(args.csv, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
