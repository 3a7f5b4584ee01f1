#!/usr/bin/python3
"""PANAMA Fig. 8's claims at two scales of its one scaling rule: do they move?

    /usr/bin/python3 analysis/fig_panama_fig8_scales.py [--small] [--out DIR] [--jobs N] [--resume]

Runs the 80 % aggregation-load point of analysis/fig_panama_fig8.py (its
configurations and its Ideal runs) at two values of the rule's factor s
(scenarios/panama/README.md "Scaling": every workload size and duration
times s, the network unchanged): s = 0.005, the figure's, and 0.0025
(--small: the reduced cluster, fig8-cluster-small.json, at s = 0.0002 and
0.0001 with the same rule). At each s the rule sets
workload.panama.cluster.scale and background.flows.size_scale to s and the
arrival window and the flows' stop to s x the paper's 10 s.

Panels against s: (a) short-flow p99 FCT, (b) long-flow mean throughput,
(c) mean JCT, per configuration as in Fig. 8; (d, e) the ratios Fig. 8's
claims are made of (d: the flows', e: the jobs'), the two-scale check itself.
Writes OUT/fig_panama_fig8_scales.png and .csv, OUT/fig_panama_fig8_scales_ratios.csv
(ratio, value at each s, change from the smaller s in %) and keeps every run
under OUT/sweeps/<name>/. Exit status: 0 ok; 1 a run failed or a result was
not exact; 2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from figscript import ROOT, num  # noqa: E402
from fig_panama_fig8 import LABELS, RUNS  # noqa: E402

CONFIGS = {
    "full": {"scenario": ROOT / "scenarios" / "panama" / "fig8-cluster-rule.json", "scales": [0.0025, 0.005],
             "load": 0.8},
    "small": {"scenario": ROOT / "scenarios" / "panama" / "fig8-cluster-small.json", "scales": [0.0001, 0.0002],
              "load": 0.8},
}
STEM = "fig_panama_fig8_scales"
PAPER_WINDOW_US = 10e6  # §7: jobs arrive over 10 s; the background flows stop with them
# The claims' ratios: (name, numerator (config, metric), denominator (config, metric)).
RATIOS = [
    ("ring / PANAMA, short p99", ("Ring-AllReduce", "p99"), ("PANAMA", "p99")),
    ("SwitchML* / PANAMA, short p99", ("SwitchML*", "p99"), ("PANAMA", "p99")),
    ("PANAMA / Ideal, short p99", ("PANAMA", "p99"), ("Ideal", "p99")),
    ("PANAMA / ring, long throughput", ("PANAMA", "long"), ("Ring-AllReduce", "long")),
    ("PANAMA / SwitchML*, long throughput", ("PANAMA", "long"), ("SwitchML*", "long")),
    ("ring / PANAMA, JCT", ("Ring-AllReduce", "jct"), ("PANAMA", "jct")),
    ("PANAMA / SwitchML*, JCT", ("PANAMA", "jct"), ("SwitchML*", "jct")),
    ("PANAMA-0.88 / PANAMA, JCT", ("PANAMA-0.88", "jct"), ("PANAMA", "jct")),
    ("PANAMA-0.94 / PANAMA, JCT", ("PANAMA-0.94", "jct"), ("PANAMA", "jct")),
]


def rule(s, over):
    """The scaling rule's overrides at factor s for a run with overrides
    `over`: every workload size and duration of what the run has (the runs
    of one traffic class alone have no jobs, or no background)."""
    out = {}
    if "background" not in over:
        out.update({"background.flows.size_scale": s, "background.flows.stop_us": PAPER_WINDOW_US * s})
    if "workload" not in over:
        out.update({"workload.panama.cluster.scale": s, "workload.panama.cluster.window_us": PAPER_WINDOW_US * s})
    return out


def points(scales, load):
    pts, labels = [], []
    for s in scales:
        for name, over in RUNS:
            pt = {**over, **rule(s, over)}
            if "workload" not in over:
                pt["workload.panama.cluster.load"] = load
            pts.append(pt)
            labels.append((s, name))
    return pts, labels


def config_metrics(runs, s, label):
    """{p99, long, jct} of one configuration at scale s; Ideal from the runs
    of each traffic class alone, as Fig. 8."""
    ideal = label == "Ideal"
    return {"p99": num(runs[(s, "short_alone" if ideal else label)].get("background.flows.fct.short.fct_s.p99")),
            "long": num(runs[(s, "long_alone" if ideal else label)].get(
                "background.flows.fct.long_flow_throughput_gbps.mean")),
            "jct": num(runs[(s, "agg_alone" if ideal else label)].get("workload.panama.cluster.mean_jct_s"))}


def draw(fig):
    scales, plot = fig.cfg["scales"], fig.plot
    pts, labels = points(scales, fig.cfg["load"])
    runs = {}
    for row in fig.sweep(points=pts):
        s, name = labels[int(row["point"])]
        if row.get("correct") is not True:
            fig.fail(f"s = {s} {name}: not correct (correct={row.get('correct')}, stopped_by={row.get('sim.stopped_by')})")
        runs[(s, name)] = row
    m = {(s, label): config_metrics(runs, s, label) for s in scales for label in LABELS}
    load = round(100 * fig.cfg["load"])
    panels = [plot.Figure(f"short flows, {load} % load", "scale factor s", "99th-percentile FCT", "x", "ms"),
              plot.Figure(f"long flows, {load} % load", "scale factor s", "mean throughput", "x", "Gb/s"),
              plot.Figure(f"training jobs, {load} % load", "scale factor s", "mean job completion time", "x", "ms"),
              plot.Figure("Fig. 8's claims: flows' ratios", "scale factor s", "ratio", "x", "x"),
              plot.Figure("Fig. 8's claims: jobs' ratios", "scale factor s", "ratio", "x", "x")]
    for label in LABELS:
        for panel, key, unit in ((panels[0], "p99", 1e3), (panels[1], "long", 1), (panels[2], "jct", 1e3)):
            panel.line(scales, [m[(s, label)][key] * unit for s in scales], label)
    table = {"ratio": [], **{f"s_{s:g}": [] for s in scales}, "change_pct": []}
    for name, (nc, nk), (dc, dk) in RATIOS:
        values = [m[(s, nc)][nk] / m[(s, dc)][dk] for s in scales]
        panels[4 if name.endswith("JCT") else 3].line(scales, values, name)
        table["ratio"].append(name)
        for s, v in zip(scales, values):
            table[f"s_{s:g}"].append(v)
        table["change_pct"].append(100 * (values[-1] / values[0] - 1))
        print(f"{name:38s} " + "  ".join(f"s={s:g}: {v:7.3f}" for s, v in zip(scales, values))
              + f"  ({table['change_pct'][-1]:+.1f} %)")
    for p in panels:
        p.xticks(scales)
    return fig.save(panels, title=f"PANAMA Fig. 8 at two scales of one rule ({fig.base['name']})",
                    tables={"ratios": table})


main = figscript.entry(STEM, __doc__, "the reduced cluster at s = 0.0001 and 0.0002 (about a minute)", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
