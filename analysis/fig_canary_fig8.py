#!/usr/bin/python3
"""Canary Fig. 8: allreduce goodput vs the share of hosts in the allreduce, the others congesting.

    /usr/bin/python3 analysis/fig_canary_fig8.py [--small] [--out DIR] [--jobs N] [--resume]

canary-fgcs24 Sec. 5.2.2: a 4 MiB allreduce on 5 %..75 % of the 1,024 hosts
(randomly placed), every other host sending 1 MiB messages at line rate to
random, changing peers (scenarios/canary/fig8-goodput.json); Canary, one
static tree, four static trees and the ring. Each point is the mean of 5
seeds (5 random placements). The paper quotes how much congestion costs at
5 %: Canary 20 %, one tree 66 %, four trees 47 %; so the in-network
protocols also run once without congestion at the smallest share, and the
script prints and writes that loss.

--small: scenarios/canary/fig8-goodput-small.json (8 x 16 x 16 leaf-spine,
128 hosts, 512 KiB, 128 KiB congestion messages), shares 10 % and 50 %, one
seed: 14 runs of about a second.

Writes OUT/fig_canary_fig8.png and .csv (per point: protocol, share, hosts,
goodput_gbps and its min/max over the seeds, runs, time_s, util_mean,
drops_buffer; series "... no congestion" hold the uncongested runs and a
column loss_vs_uncongested), and keeps every run under OUT/sweeps/<name>/.
OUT defaults to out/figures (out/figures/small with --small).
Exit status: 0 ok; 1 a run failed or was not correct; 2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from figscript import paper_value  # noqa: E402
from canaryfig import (PROTOCOLS as LABELS, canary_columns, placements, point, print_point, run_points,  # noqa: E402
                       summarize)

STEM = "fig_canary_fig8"
CONFIGS = figscript.scenario_configs(
    "canary/fig8-goodput",
    full={"shares": [5, 10, 25, 50, 75], "repetitions": 5},
    small={"shares": [10, 50], "repetitions": 1})
PROTOCOLS = ["canary", "st1", "st4", "ring"]
INA = ["canary", "st1", "st4"]
#: canary-fgcs24 Sec. 5.2.2: goodput lost to congestion at 5 % of the hosts.
PAPER_LOSS_AT_5 = {p: 1 - paper_value("canary", f"fig8-5-loss-{c}")  # the claims give what is kept
                   for p, c in (("canary", "canary"), ("st1", "1-tree"), ("st4", "4-trees"))}


def hosts_for(share: int, total: int) -> int:
    """Hosts in the allreduce for a share in percent (at least 2)."""
    return max(2, round(total * share / 100))


def draw(fig):
    cfg, plot, base = fig.cfg, fig.plot, fig.base
    topo = base["topology"]
    total = int(topo["leaves"]) * int(topo["hosts_per_leaf"])
    shares = cfg["shares"]
    points = []
    for share in shares:
        n = hosts_for(share, total)
        for proto in PROTOCOLS:
            points.append(dict(point(proto, **{"workload__hosts__count": n}), **{"x.share": share,
                                                                                "x.congested": True}))
    for proto in INA:  # the uncongested reference at the smallest share
        points.append(dict(point(proto, congested=False, workload__hosts__count=hosts_for(shares[0], total)),
                           **{"x.share": shares[0], "x.congested": False}))
    runs = run_points(fig, points)
    stats = summarize(runs, lambda r: (r["protocol"], r["meta"]["x.share"], r["meta"]["x.congested"]))

    panel = plot.Figure("4 MiB allreduce goodput vs hosts (Fig. 8)" if not fig.small else
                        "allreduce goodput vs hosts (Fig. 8, reduced)", "hosts in the allreduce", "goodput",
                        "% of hosts", "Gb/s", legend_loc="best")
    for proto in PROTOCOLS:
        pts = [stats[(proto, s, True)] for s in shares]
        for s, st in zip(shares, pts):
            print_point(LABELS[proto][0], f"{s} % ({int(st['hosts'])} hosts)", st)
        panel.line(shares, [p["goodput_gbps"] for p in pts], LABELS[proto][0], columns=columns(proto, shares, pts))
    losses = {}
    for proto in INA:
        ref = stats[(proto, shares[0], False)]
        cong = stats[(proto, shares[0], True)]
        losses[proto] = 1 - cong["goodput_gbps"] / ref["goodput_gbps"]
        print_point(LABELS[proto][0], f"{shares[0]} % no congestion", ref)
        print(f"{LABELS[proto][0]:<16s} loses {losses[proto] * 100:5.1f} % to congestion at {shares[0]} % "
              f"(paper at 5 %: {PAPER_LOSS_AT_5[proto] * 100:.0f} %)")
        cols = columns(proto, [shares[0]], [ref])
        cols["loss_vs_uncongested"] = [losses[proto]]
        panel.line([shares[0]], [ref["goodput_gbps"]], f"{LABELS[proto][0]} no congestion", marker="x",
                   linestyle="none", columns=cols)
    panel.xticks(shares)
    panel.ylim(bottom=0)
    return fig.save_panels(
        [panel],
        title=f"{int(base['workload']['bytes']) // 1024} KiB allreduce, {total} hosts, the others congesting "
              f"({placements(cfg)})")


def columns(proto, shares, pts):
    """The CSV columns of one series: every number behind a plotted point."""
    return {"protocol": [proto] * len(pts), "share_pct": list(shares),
            "hosts": [int(p["hosts"]) for p in pts], "goodput_gbps": [p["goodput_gbps"] for p in pts],
            "goodput_min_gbps": [p["goodput_min_gbps"] for p in pts],
            "goodput_max_gbps": [p["goodput_max_gbps"] for p in pts], "runs": [p["runs"] for p in pts],
            "time_s": [p["duration_s"] for p in pts], "util_mean": [p["util_mean"] for p in pts],
            "drops_buffer": [p["drops_buffer"] for p in pts], "correct": [p["correct"] for p in pts],
            **canary_columns(pts)}


main = figscript.entry(STEM, __doc__, "the reduced sweep (14 runs, ~15 s)", CONFIGS, draw, repetitions=True)


if __name__ == "__main__":
    sys.exit(main())
