#!/usr/bin/python3
"""Canary Fig. 9: allreduce runtime vs message size, 20 % of the hosts in the allreduce, 80 % congesting.

    /usr/bin/python3 analysis/fig_canary_fig9.py [--small] [--out DIR] [--jobs N] [--resume]

canary-fgcs24 Sec. 5.2.3: 205 random hosts (20 % of 1,024) run an allreduce
of 1 KiB .. 4 MiB, the other 819 send 1 MiB messages at line rate to random,
changing peers (scenarios/canary/fig9-sizes.json); Canary, one and four
static trees and the ring, with and without the congestion, 5 seeds per
point. Two panels: (a) with congestion, (b) without; runtime on log axes.
The paper: Canary is slower for small messages (every switch holds a block
for its timeout), faster for large ones.

--small: scenarios/canary/fig9-sizes-small.json (26 of 128 hosts, 128 KiB
congestion messages), sizes 1 KiB and 512 KiB, one seed: 16 runs.

Writes OUT/fig_canary_fig9.png and .csv (protocol, congested, bytes,
time_us, time_min_us, time_max_us, goodput_gbps, runs, drops_buffer) and
keeps every run under OUT/sweeps/<name>/. Exit status: 0 ok; 1 a run failed
or was not correct; 2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from canaryfig import (PROTOCOLS as LABELS, canary_columns, placements, point, print_point, run_points,  # noqa: E402
                       summarize)

STEM = "fig_canary_fig9"
KIB = 1024
CONFIGS = figscript.scenario_configs(
    "canary/fig9-sizes",
    full={"repetitions": 5, "sizes": [1 * KIB, 16 * KIB, 256 * KIB, 1024 * KIB, 4096 * KIB]},
    small={"repetitions": 1, "sizes": [1 * KIB, 512 * KIB]})
PROTOCOLS = ["canary", "st1", "st4", "ring"]


def draw(fig):
    cfg, plot, base = fig.cfg, fig.plot, fig.base
    sizes = cfg["sizes"]
    points = [dict(point(proto, congested=c, workload__bytes=b), **{"x.congested": c})
              for c in (True, False) for proto in PROTOCOLS for b in sizes]
    runs = run_points(fig, points)
    stats = summarize(runs, lambda r: (r["protocol"], r["meta"]["x.congested"], int(r["bytes"])))
    panels = []
    xs = [b / KIB for b in sizes]
    for congested in (True, False):
        f = plot.Figure(f"runtime, {'congestion' if congested else 'no congestion'} (Fig. 9)", "message size",
                        "allreduce time", "KiB", "us", logx=2, logy=True, legend_loc="upper left")
        for proto in PROTOCOLS:
            pts = [stats[(proto, congested, b)] for b in sizes]
            for b, st in zip(sizes, pts):
                print_point(LABELS[proto][0], f"{b // KIB} KiB, {'congestion' if congested else 'none'}", st)
            times = [runs_time(proto, congested, b, runs) for b in sizes]
            f.line(xs, [p["duration_s"] * 1e6 for p in pts], LABELS[proto][0], columns={
                "protocol": [proto] * len(sizes), "congested": [congested] * len(sizes), "bytes": sizes,
                "time_us": [p["duration_s"] * 1e6 for p in pts], "time_min_us": [min(t) * 1e6 for t in times],
                "time_max_us": [max(t) * 1e6 for t in times], "goodput_gbps": [p["goodput_gbps"] for p in pts],
                "runs": [p["runs"] for p in pts], "drops_buffer": [p["drops_buffer"] for p in pts],
                **canary_columns(pts)})
        f.xticks(xs)
        panels.append(f)
    return fig.save_panels(
        panels,
        title=f"{int(base['workload']['hosts']['count'])} hosts (20 %) allreduce, the others congest "
              f"({placements(cfg)})")


def runs_time(proto, congested, nbytes, runs):
    """The durations of one point's seeds."""
    return [r["duration_s"] for r in runs
            if r["protocol"] == proto and r["meta"]["x.congested"] == congested and int(r["bytes"]) == nbytes]


main = figscript.entry(STEM, __doc__, "the reduced sweep (16 runs, ~10 s)", CONFIGS, draw, repetitions=True)


if __name__ == "__main__":
    sys.exit(main())
