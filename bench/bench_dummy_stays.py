"""Dummy stays against the audit's run-length attack, on the bundled sample (issue 24, finding 2).

For alice with Home (39.9925, 116.3395, 100 m) and Clinic (39.9820, 116.3564, 100 m), every fix
and one fix per 5 minutes, at the page's default ε = 1 and ε_sel = 0.1, this prints per
generator (greedy = the thesis's, bernoulli = the old default, stays = the new one, plus stays at
larger ε_sel):

* AUC — the audit's classifier (lmdk_core.dummies.run_length_auc): each moment of L' scored by
  the length of its run in L' (Skip's public file shows L' as runs of repeated points); the ROC
  AUC of real against dummy moments, mean ± sd over the draws (0.5 = chance);
* dummies — expected |L' \\ L| (exact) of the ordinary moments, and the realised mean;
* shown ordinary — the share of ordinary moments left out of L', i.e. revealed as ordinary (the
  δ-like quantity: Bernoulli's 1 - e^-ε_sel), mean and largest per moment (stays: exact);
* L' = T — the share of draws in which every moment is a landmark (Skip then releases nothing);
* ε per stay — the bound for a stay of 1 moment, of K moments, and of the longest real stay
  (nan for greedy: no bound holds for every pair);
* Skip's mean error (m) with ε_scheme = ε - ε_sel on L', over draws that release something,
  against Skip on L with the whole ε.

Seeded simulations (noise="fast"), not private releases. Run: python bench/bench_dummy_stays.py
[--runs 100]  (≈ 10 s at 100 runs). No timing targets: this measures privacy and cost.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

import lmdk_core as lm
from lmdk_core import dummies as d
from lmdk_core.metrics import mae_metres

PLACES = [(39.9925, 116.3395, 100), (39.9820, 116.3564, 100)]
EPSILON = 1.0
RADIUS_M = 200.0


def longest_run(mask: np.ndarray) -> int:
    return int(d.run_length_scores(mask).max(initial=0))


def stay_bound(gen: str, eps_sel: float, k: int, n: int) -> float:
    if gen == "bernoulli":
        return k * eps_sel
    if gen == "greedy":
        return math.nan  # no bound for every pair (docs/dummy-landmarks.md §6)
    return d.stay_epsilon(k, epsilon_select=eps_sel, stay_moments=d.default_stay_moments(n))


def row(traj, mask: np.ndarray, gen: str, eps_sel: float, runs: int) -> dict[str, float]:
    n, ordinary = mask.size, int((~mask).sum())
    aucs, counts, full, errors = [], [], [], []
    eps_scheme = d.split_budget(EPSILON, epsilon_select=eps_sel)
    for seed in range(runs):
        h = d.hide_landmarks(mask, epsilon_select=eps_sel, generator=gen, rng=seed)
        aucs.append(d.run_length_auc(mask, h.mask))
        counts.append(h.n_dummies)
        full.append(bool(h.mask.all()))
        if not h.mask.all():
            rel = lm.release_locations(traj, h.mask, epsilon=eps_scheme, scheme="skip",
                                       radius_m=RADIUS_M, rng=seed, noise="fast")
            errors.append(mae_metres(traj, rel))
    expected = d.expected_dummies(mask, epsilon_select=eps_sel, generator=gen)
    if gen == "stays":
        worst = 1.0 - float(d.dummy_probabilities(mask, epsilon_select=eps_sel)[~mask].min())
    elif gen == "bernoulli":
        worst = 1.0 - d.bernoulli_probability(eps_sel)
    else:
        worst = math.nan
    k_real = longest_run(mask)
    return {
        "auc": float(np.mean(aucs)), "auc_sd": float(np.std(aucs)),
        "expected": expected, "mean": float(np.mean(counts)), "ordinary": ordinary,
        "shown_ordinary": 1.0 - expected / ordinary, "worst": worst,
        "full": float(np.mean(full)),
        "eps1": stay_bound(gen, eps_sel, 1, n),
        "epsK": stay_bound(gen, eps_sel, d.default_stay_moments(n), n),
        "eps_real": stay_bound(gen, eps_sel, k_real, n), "k_real": k_real,
        "K": d.default_stay_moments(n),
        "mae": float(np.mean(errors)) if errors else math.nan,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()
    traj = lm.select_user(lm.load_sample(), "alice").reset_index(drop=True)
    L = np.asarray(lm.landmark_mask(traj, PLACES))
    iv = lm.release_interval(traj, L, interval_s=300)
    cases = [("every fix", traj, L), ("5 min", iv.trajectory, np.asarray(iv.landmarks))]
    settings = [("greedy", 0.1), ("bernoulli", 0.1), ("stays", 0.1), ("stays", 0.3),
                ("stays", 0.5)]
    for name, tr, mask in cases:
        plain = np.mean([mae_metres(tr, lm.release_locations(
            tr, mask, epsilon=EPSILON, scheme="skip", radius_m=RADIUS_M, rng=s, noise="fast"))
            for s in range(args.runs)])
        print(f"\n{name}: T = {mask.size:,}, |L| = {int(mask.sum()):,}, "
              f"ordinary = {int((~mask).sum()):,}, longest real stay = {longest_run(mask):,} "
              f"moments, K = {d.default_stay_moments(mask.size)}; ε = {EPSILON}, r = "
              f"{RADIUS_M:.0f} m, {args.runs} draws")
        print(f"  Skip without dummies (ε = {EPSILON}): mean error {plain:,.0f} m")
        full_col = "L'=T"
        print(f"  {'generator':<20}{'AUC':>13}{'dummies exp/mean':>20}{'shown ordinary':>18}"
              f"{full_col:>7}{'ε: 1 / K / longest':>22}{'Skip error':>13}")
        for gen, eps_sel in settings:
            r = row(tr, mask, gen, eps_sel, args.runs)
            label = f"{gen} ε_sel={eps_sel:g}"
            worst = "(—)" if math.isnan(r["worst"]) else f"(≤{r['worst']:.1%})"
            print(f"  {label:<20}{r['auc']:>7.3f} ±{r['auc_sd']:.3f}"
                  f"{r['expected']:>10,.0f} /{r['mean']:>7,.0f}"
                  f"{r['shown_ordinary']:>9.1%} {worst:<8}"
                  f"{r['full']:>7.0%}"
                  f"{r['eps1']:>7.2f} /{r['epsK']:>5.2f} /{r['eps_real']:>7.2f}"
                  f"{r['mae']:>10,.0f} m")


if __name__ == "__main__":
    main()
