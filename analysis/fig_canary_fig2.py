#!/usr/bin/python3
"""Canary Fig. 2: in-network allreduce vs the ring on 1 % and 75 % of the hosts, with and without congestion.

    /usr/bin/python3 analysis/fig_canary_fig2.py [--small] [--out DIR] [--jobs N] [--resume]

canary-fgcs24 Sec. 1 (Fig. 2): a 4 MiB allreduce on 1 % (10) and 75 % (768)
of the 1,024 hosts, first alone, then with every other host sending 1 MiB
messages at line rate to random, changing peers
(scenarios/canary/fig2-motivation.json); Canary, one static tree (SHARP,
SwitchML, ATP) and the ring, 5 seeds per point. The paper: without
congestion every in-network allreduce is ~2x the ring; with congestion the
static tree can fall below the ring while Canary holds.

--small: scenarios/canary/fig2-motivation-small.json (128 hosts: 4 and 96 in
a 512 KiB allreduce, 128 KiB congestion messages), one seed: 12 runs.

Writes OUT/fig_canary_fig2.png and .csv (one panel per host share; x = 0 no
congestion, 1 congestion; columns protocol, share_pct, hosts, congested,
goodput_gbps and its min/max, runs, over_ring, drops_buffer) and keeps every
run under OUT/sweeps/<name>/. Exit status: 0 ok; 1 a run failed or was not
correct; 2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from canaryfig import (PROTOCOLS as LABELS, canary_columns, placements, point, print_point, run_points,  # noqa: E402
                       summarize)

STEM = "fig_canary_fig2"
CONFIGS = figscript.scenario_configs(
    "canary/fig2-motivation",
    full={"repetitions": 5, "hosts": {1: 10, 75: 768}},
    small={"repetitions": 1, "hosts": {3: 4, 75: 96}})
PROTOCOLS = ["canary", "st1", "ring"]


def draw(fig):
    cfg, plot, base = fig.cfg, fig.plot, fig.base
    shares = cfg["hosts"]
    points = [dict(point(proto, congested=c, workload__hosts__count=n), **{"x.share": share, "x.congested": c})
              for share, n in shares.items() for c in (False, True) for proto in PROTOCOLS]
    runs = run_points(fig, points)
    stats = summarize(runs, lambda r: (r["protocol"], r["meta"]["x.share"], r["meta"]["x.congested"]))
    panels = []
    for share, n in shares.items():
        f = plot.Figure(f"{share} % of the hosts ({n}) (Fig. 2)", "congestion", "goodput", "0 no, 1 yes", "Gb/s",
                        legend_loc="best")
        for proto in PROTOCOLS:
            pts = [stats[(proto, share, c)] for c in (False, True)]
            ring = [stats[("ring", share, c)]["goodput_gbps"] for c in (False, True)]
            for c, st, rg in zip(("no congestion", "congestion"), pts, ring):
                print_point(LABELS[proto][0], f"{share} % ({n} hosts), {c}", st)
                if proto != "ring":
                    print(f"{'':<16s} {st['goodput_gbps'] / rg:5.2f} x the ring")
            f.line([0, 1], [p["goodput_gbps"] for p in pts], LABELS[proto][0], columns={
                "protocol": [proto] * 2, "share_pct": [share] * 2, "hosts": [n] * 2, "congested": [False, True],
                "goodput_gbps": [p["goodput_gbps"] for p in pts],
                "goodput_min_gbps": [p["goodput_min_gbps"] for p in pts],
                "goodput_max_gbps": [p["goodput_max_gbps"] for p in pts], "runs": [p["runs"] for p in pts],
                "over_ring": [p["goodput_gbps"] / r for p, r in zip(pts, ring)],
                "drops_buffer": [p["drops_buffer"] for p in pts], **canary_columns(pts)})
        f.xticks([0, 1], ["no congestion", "congestion"])
        f.ylim(bottom=0)
        panels.append(f)
    return fig.save_panels(
        panels,
        title=f"{int(base['workload']['bytes']) // 1024} KiB allreduce; congestion: the other hosts "
              f"({placements(cfg)})")


main = figscript.entry(STEM, __doc__, "the reduced sweep (12 runs, ~10 s)", CONFIGS, draw, repetitions=True)


if __name__ == "__main__":
    sys.exit(main())
