#!/usr/bin/python3
"""Canary Fig. 11: goodput vs host noise (a packet held back 1 us with probability p) for several timeouts.

    /usr/bin/python3 analysis/fig_canary_fig11.py [--small] [--out DIR] [--jobs N] [--resume]

canary-fgcs24 Sec. 5.2.5: 512 random hosts run a 4 MiB allreduce; every
reduce packet a host sends waits 1 us first with probability p
(workload.send_noise, 0.01 % .. 10 %); Canary with switch timeouts 1, 2 and
3 us against four static trees, with and without the other 512 hosts
congesting (scenarios/canary/fig11-noise.json), 5 seeds per point. Panels:
(a) no congestion, (b) congestion. The paper: at most 30 % between the
timeouts across a 3x range; with congestion Canary beats the static trees at
every noise level. The script prints the spread between timeouts (max / min
goodput - 1) per noise level, and writes it as the column timeout_spread of
every Canary row.

--small: scenarios/canary/fig11-noise-small.json (64 of 128 hosts, 512 KiB,
128 KiB congestion messages), p in {0.1 %, 10 %}, timeouts 1 and 3 us, one
seed: 12 runs.

Writes OUT/fig_canary_fig11.png and .csv (protocol, timeout_us, congested,
noise_probability, goodput_gbps and its min/max, runs, noise_delayed_packets,
packets_sent, stragglers, drops_buffer, timeout_spread) and keeps every run under OUT/sweeps/<name>/.
Exit status: 0 ok; 1 a run failed or was not correct; 2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from canaryfig import (mean, placements, point, print_point, run_points, summarize)  # noqa: E402

STEM = "fig_canary_fig11"
CONFIGS = figscript.scenario_configs(
    "canary/fig11-noise",
    full={"repetitions": 5, "noise": [1e-4, 1e-3, 1e-2, 1e-1], "timeouts": [1, 2, 3]},
    small={"repetitions": 1, "noise": [1e-3, 1e-1], "timeouts": [1, 3]})


def timeout_spread(stats, timeouts, congested: bool, p: float) -> float:
    """How much more goodput Canary's best timeout gets than its worst at
    noise p: max / min - 1 (Fig. 11's "at most 30 %"; the CSV column
    timeout_spread of every Canary row)."""
    g = [stats[("canary", t, congested, p)]["goodput_gbps"] for t in timeouts]
    return max(g) / min(g) - 1


def draw(fig):
    cfg, plot, base = fig.cfg, fig.plot, fig.base
    noise, timeouts = cfg["noise"], cfg["timeouts"]
    series = [("canary", t) for t in timeouts] + [("st4", None)]
    points = []
    for c in (False, True):
        for proto, t in series:
            for p in noise:
                extra = {"workload__send_noise__probability": p}
                if t is not None:
                    extra["workload__canary__timeout_us"] = t
                points.append(dict(point(proto, congested=c, **extra), **{"x.congested": c, "x.timeout": t,
                                                                          "x.noise": p}))
    runs = run_points(fig, points)
    key = lambda r: (r["protocol"], r["meta"]["x.timeout"], r["meta"]["x.congested"], r["meta"]["x.noise"])
    stats = summarize(runs, key)
    panels = []
    xs = [p * 100 for p in noise]
    for c in (False, True):
        f = plot.Figure(f"{'congestion' if c else 'no congestion'} (Fig. 11)", "noise probability", "goodput", "%",
                        "Gb/s", logx=10, legend_loc="lower left")
        spread = {p: timeout_spread(stats, timeouts, c, p) for p in noise}
        for proto, t in series:
            label = f"Canary timeout {t} us" if t is not None else "4 static trees"
            pts = [stats[(proto, t, c, p)] for p in noise]
            for p, st in zip(noise, pts):
                print_point(label, f"p={p * 100:g} %, {'congestion' if c else 'none'}", st)
            f.line(xs, [s["goodput_gbps"] for s in pts], label, columns={
                "protocol": [proto] * len(noise), "timeout_us": [t] * len(noise), "congested": [c] * len(noise),
                "noise_probability": noise, "goodput_gbps": [s["goodput_gbps"] for s in pts],
                "goodput_min_gbps": [s["goodput_min_gbps"] for s in pts],
                "goodput_max_gbps": [s["goodput_max_gbps"] for s in pts], "runs": [s["runs"] for s in pts],
                "noise_delayed_packets": [mean([r["noise_delayed_packets"] for r in runs if key(r) == (proto, t, c, p)])
                                          for p in noise],
                "packets_sent": [mean([r["packets_sent"] for r in runs if key(r) == (proto, t, c, p)]) for p in noise],
                "stragglers": [mean([r["stragglers"] for r in runs if key(r) == (proto, t, c, p)]) for p in noise],
                "drops_buffer": [s["drops_buffer"] for s in pts],
                "timeout_spread": [spread[p] if proto == "canary" else "" for p in noise]})
        f.xticks(xs)
        f.ylim(bottom=0)
        panels.append(f)
        for p in noise:
            print(f"spread between timeouts at p={p * 100:g} %, {'congestion' if c else 'no congestion'}: "
                  f"{spread[p] * 100:5.1f} % (paper: at most 30 %)")
    return fig.save_panels(
        panels,
        title=f"{int(base['workload']['hosts']['count'])} hosts, {int(base['workload']['bytes']) // 1024} KiB, "
              f"packets held back {float(base['workload']['send_noise']['delay_us']):g} us with probability p "
              f"({placements(cfg)})")


main = figscript.entry(STEM, __doc__, "the reduced sweep (12 runs, ~10 s)", CONFIGS, draw, repetitions=True)


if __name__ == "__main__":
    sys.exit(main())
