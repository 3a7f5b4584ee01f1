#!/usr/bin/python3
"""Canary Fig. 7a/7b: Canary vs 1..8 static trees with and without congestion, and link utilisation.

    /usr/bin/python3 analysis/fig_canary_fig7.py [--small] [--out DIR] [--jobs N] [--resume]

canary-fgcs24 Sec. 5.2.1: 512 random hosts run a 4 MiB allreduce, the other
512 send 1 MiB messages at line rate to random, changing peers
(scenarios/canary/fig7-static-trees.json); Canary and 1, 2, 4, 8 static
trees (blocks round robin over the trees, PANAMA style), each with and
without the congestion, 5 seeds (placements) per point. Three panels:

  (a) Fig. 7a: goodput per protocol, with and without congestion;
  (b) Fig. 7b: distribution of link utilisation (busy time over the run,
      every link direction, host links included: links.csv of each run,
      summed over the seeds) for Canary, 1 and 4 trees under congestion;
  (c) the same without congestion.

The paper's mean utilisations under congestion (Canary 40.2 %, 4 trees
29.5 %, 1 tree 20.9 %) are printed next to ours.

--small: scenarios/canary/fig7-static-trees-small.json (128 hosts, 64 in a
512 KiB allreduce, 128 KiB congestion messages), one seed: 10 runs.

Writes OUT/fig_canary_fig7.png and .csv (panel a: protocol, congested,
goodput_gbps, min/max, runs, time_s, util_mean, drops_buffer; panels b, c:
protocol, congested, bin_low_pct, links, fraction, util_mean) and keeps every
run under OUT/sweeps/<name>/. Exit status: 0 ok; 1 a run failed or was not
correct (or its links.csv is missing); 2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from figscript import paper_value  # noqa: E402
from canaryfig import (PROTOCOLS as LABELS, canary_columns, point, print_point,  # noqa: E402
                       placements, run_points, summarize, utilization_line)

STEM = "fig_canary_fig7"
CONFIGS = figscript.scenario_configs("canary/fig7-static-trees", full={"repetitions": 5},
                                     small={"repetitions": 1})
PROTOCOLS = ["canary", "st1", "st2", "st4", "st8"]
UTILIZATION_PROTOCOLS = ["canary", "st1", "st4"]  # the paper's Fig. 7b shows these three
#: canary-fgcs24 Sec. 5.2.1: mean link utilisation under congestion.
PAPER_UTIL = {p: paper_value("canary", f"fig7b-util-{c}") / 100
              for p, c in (("canary", "canary"), ("st4", "4-trees"), ("st1", "1-tree"))}


def draw(fig):
    cfg, plot, base = fig.cfg, fig.plot, fig.base
    points = [dict(point(proto, congested=c), **{"x.congested": c}) for c in (False, True) for proto in PROTOCOLS]
    runs = run_points(fig, points)
    stats = summarize(runs, lambda r: (r["protocol"], r["meta"]["x.congested"]))

    # (a) goodput per protocol.
    xs = list(range(len(PROTOCOLS)))
    fa = plot.Figure("goodput (Fig. 7a)", "algorithm", "goodput", "ST: static trees", "Gb/s", legend_loc="lower right")
    for congested, label in ((False, "no congestion"), (True, "congestion")):
        pts = [stats[(p, congested)] for p in PROTOCOLS]
        for proto, st in zip(PROTOCOLS, pts):
            print_point(LABELS[proto][0], label, st)
        fa.line(xs, [s["goodput_gbps"] for s in pts], label, columns={
            "protocol": PROTOCOLS, "congested": [congested] * len(xs),
            "goodput_gbps": [s["goodput_gbps"] for s in pts],
            "goodput_min_gbps": [s["goodput_min_gbps"] for s in pts],
            "goodput_max_gbps": [s["goodput_max_gbps"] for s in pts], "runs": [s["runs"] for s in pts],
            "time_s": [s["duration_s"] for s in pts], "util_mean": [s["util_mean"] for s in pts],
            "drops_buffer": [s["drops_buffer"] for s in pts], **canary_columns(pts)})
    fa.xticks(xs, ["Canary", "1 ST", "2 ST", "4 ST", "8 ST"])
    fa.ylim(bottom=0)

    # (b), (c) utilisation histograms, summed over the seeds.
    panels = []
    for congested in (True, False):
        f = plot.Figure(f"link utilisation, {'congestion' if congested else 'no congestion'} (Fig. 7b)",
                        "link utilisation", "share of link directions", "%", "%", legend_loc="upper right")
        for proto in UTILIZATION_PROTOCOLS:
            rs = [r for r in runs if r["protocol"] == proto and r["meta"]["x.congested"] == congested]
            mean_util = stats[(proto, congested)]["util_mean"]
            utilization_line(fig, f, proto, rs, "", mean_util, congested=congested)
            if congested:
                print(f"{LABELS[proto][0]:<16s} mean link utilisation under congestion {mean_util * 100:5.1f} % "
                      f"(paper {PAPER_UTIL[proto] * 100:.1f} %)")
        f.ylim(bottom=0)
        panels.append(f)

    return fig.save_panels(
        [fa] + panels,
        title=f"{int(base['workload']['hosts']['count'])} hosts allreduce {int(base['workload']['bytes']) // 1024} KiB, "
              f"the other hosts congest ({placements(cfg)})")


main = figscript.entry(STEM, __doc__, "the reduced sweep (10 runs, ~10 s)", CONFIGS, draw, repetitions=True)


if __name__ == "__main__":
    sys.exit(main())
