#!/usr/bin/python3
"""PANAMA Fig. 8: a shared cluster, short-flow p99 FCT, long-flow throughput and job completion time vs aggregation load.

    /usr/bin/python3 analysis/fig_panama_fig8.py [--small] [--out DIR] [--jobs N] [--resume]

The shared cluster of panama-mlsys21 §7 under one scaling rule (scenarios/
panama/fig8-cluster-rule.json: a k = 8 fat tree, 128 hosts at 10 Gb/s, the
paper's jobs of 16..96 workers, every workload size and duration x 0.005;
scenarios/panama/README.md "Scaling"; --small: fig8-cluster-small.json, 16
hosts): DNN training jobs arrive as a Poisson
process for a fixed window at an arrival rate that offers the given
aggregation load, next to 20 % load of DCTCP data-mining flows. Loads: 0.2,
0.4, 0.6, 0.8 (--small: 0.4, 0.8). Configurations, as in the paper:

  Ideal           every traffic class on its own network: the short flows
                  alone (8a), the long flows alone (8b), the PANAMA jobs
                  alone (8c); the same draws as the shared runs
                  (background.flows.only)
  Ring-AllReduce  every job a host ring (workload.panama.cluster.allreduce)
  SwitchML*       PANAMA's multi-tenant, load-balanced accelerators without
                  congestion control (workload.panama.congestion_control false)
  PANAMA          Fig. 5 congestion control over 4 trees
  PANAMA-0.88/94  the same, each accelerator summing a vector once that
                  fraction of the job's workers below it sent theirs
                  (workload.panama.quorum)

Panels: (a) 99th-percentile FCT of short flows (< 40 MB, scaled with the
flow sizes), (b) mean throughput of long flows, (c) mean job completion time
(arrival to the end of the last iteration, waiting for hosts included).

Writes OUT/fig_panama_fig8.png and .csv (panel a's rows also carry the
short flows' mean FCT, column short_mean_fct_s), OUT/fig_panama_fig8_points.csv
(columns load, config, short_p99_fct_s, long_throughput_gbps, mean_jct_s,
jobs, partial_aggregations) and keeps every run under OUT/sweeps/<name>/. Every aggregation result
is checked bit for bit by the simulator; a run that is not correct fails
the script. Exit status: 0 ok; 1 a run failed or a result was not exact;
2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from figscript import ROOT, num  # noqa: E402

CONFIGS = {
    "full": {"scenario": ROOT / "scenarios" / "panama" / "fig8-cluster-rule.json", "loads": [0.2, 0.4, 0.6, 0.8]},
    "small": {"scenario": ROOT / "scenarios" / "panama" / "fig8-cluster-small.json", "loads": [0.4, 0.8]},
}
STEM = "fig_panama_fig8"
LABELS = ["Ideal", "Ring-AllReduce", "SwitchML*", "PANAMA", "PANAMA-0.88", "PANAMA-0.94"]
# Runs per load: (run name, overrides). Ideal takes its short flows from
# "short_alone", its long flows from "long_alone" and its jobs from "agg_alone".
RUNS = [
    ("short_alone", {"workload": {"type": "none"}, "background.flows.only": "short"}),
    ("long_alone", {"workload": {"type": "none"}, "background.flows.only": "long"}),
    ("agg_alone", {"background": None}),
    ("Ring-AllReduce", {"workload.panama.cluster.allreduce": "ring"}),
    ("SwitchML*", {"workload.panama.congestion_control": False}),
    ("PANAMA", {}),
    ("PANAMA-0.88", {"workload.panama.quorum": 0.88}),
    ("PANAMA-0.94", {"workload.panama.quorum": 0.94}),
]


def points(loads):
    pts, labels = [], []
    for load in loads:
        for name, over in RUNS:
            pt = dict(over)
            if name not in ("short_alone", "long_alone"):
                pt["workload.panama.cluster.load"] = load
            pts.append(pt)
            labels.append((load, name))
    return pts, labels


def draw(fig):
    base, plot, loads = fig.base, fig.plot, fig.cfg["loads"]
    pts, labels = points(loads)
    runs = {}
    for row in fig.sweep(points=pts):
        load, name = labels[int(row["point"])]
        if row.get("correct") is not True:  # the runs without a workload have no workload.correct
            fig.fail(f"load {load} {name}: not correct (correct={row.get('correct')}, "
                     f"stopped_by={row.get('sim.stopped_by')})")
        runs[(load, name)] = row

    def metrics(load, label):
        ideal = label == "Ideal"
        short = runs[(load, "short_alone" if ideal else label)]
        long_ = runs[(load, "long_alone" if ideal else label)]
        agg = runs[(load, "agg_alone" if ideal else label)]
        return (num(short.get("background.flows.fct.short.fct_s.p99")),
                num(long_.get("background.flows.fct.long_flow_throughput_gbps.mean")),
                num(agg.get("workload.panama.cluster.mean_jct_s")),
                num(agg.get("workload.panama.cluster.finished_jobs")),
                num(agg.get("workload.panama.cluster.partial_aggregations")),
                num(short.get("background.flows.fct.short.fct_s.mean")))

    cols = {"load": [], "config": [], "short_p99_fct_s": [], "long_throughput_gbps": [], "mean_jct_s": [],
            "jobs": [], "partial_aggregations": []}
    xs = [round(100 * x) for x in loads]
    split_mb = 40 * float(base["background"]["flows"].get("size_scale", 1))  # the 40 MB split, scaled
    panels = [plot.Figure(f"short flows (< {split_mb:g} MB)", "aggregation load", "99th-percentile FCT", "%", "ms",
                          legend_loc="upper left"),
              plot.Figure(f"long flows (>= {split_mb:g} MB)", "aggregation load", "mean throughput", "%", "Gb/s",
                          legend_loc="lower left"),
              plot.Figure("training jobs", "aggregation load", "mean job completion time", "%", "ms",
                          legend_loc="upper left")]
    for label in LABELS:
        series = [metrics(load, label) for load in loads]
        for load, (fct, thr, jct, jobs, partial, _) in zip(loads, series):
            cols["load"].append(load)
            cols["config"].append(label)
            cols["short_p99_fct_s"].append(fct)
            cols["long_throughput_gbps"].append(thr)
            cols["mean_jct_s"].append(jct)
            cols["jobs"].append(jobs)
            cols["partial_aggregations"].append(partial)
        panels[0].line(xs, [m[0] * 1e3 for m in series], label, columns={"short_mean_fct_s": [m[5] for m in series]})
        panels[1].line(xs, [m[1] for m in series], label)
        panels[2].line(xs, [m[2] * 1e3 for m in series], label)
        print(f"{label:15s} " + "  ".join(f"{round(100 * l)}%: p99 {m[0] * 1e3:8.3f} ms, long {m[1]:6.2f} Gb/s, "
                                         f"JCT {m[2] * 1e3:8.3f} ms" for l, m in zip(loads, series)))
    for f in panels:
        f.xticks(xs)
    return fig.save(panels, title=(
        f"PANAMA shared cluster: {base['name']}, {base['links']['host_rate_gbps']:g} Gb/s, "
        f"background {base['background']['flows']['size_distribution']} at "
        f"{100 * base['background']['flows']['load']:g} %"), tables={"points": cols})


main = figscript.entry(STEM, __doc__, "the reduced sweep (16 hosts, 2 loads, about a minute)", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
