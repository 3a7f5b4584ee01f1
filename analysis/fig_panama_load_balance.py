#!/usr/bin/python3
"""PANAMA Fig. 9: aggregation time vs long-flow load, 4 trees vs one tree per spine vs ring.

    /usr/bin/python3 analysis/fig_panama_load_balance.py [--small] [--out DIR] [--jobs N] [--resume]

One 8-worker job on the two-tier network of the paper's Fig. 3
(scenarios/panama/fig9-load-balance.json: 2 leaves x 4 spines, 10 Gb/s, 4
workers and 4 other hosts per leaf) aggregates 4 MiB of fp32 gradients per
iteration while m of the other hosts run 4 MiB DCTCP long flows among
themselves at 90 % load (m in {0, 2, 4, 6, 8}, racks alternating; --small:
fig9-load-balance-small.json, 1 MiB, m in {0, 4, 8}). The fabric sprays
end-host packets over the spines (the scenario's switch.forwarding; why:
scenarios/panama/README.md, Fig. 9). Configurations, as in
the paper: PANAMA (4 trees, one per spine), PANAMA-Agg1..4 (one tree, through
spine 0..3) and the ring allreduce. The y axis is the aggregation time (mean
duration of an iteration's allreduce, the paper's "aggregation latency").

Panels b-d: the 4-tree runs per tree (rank 0's window trace): the fraction
of its results ECN-marked, its mean window, its median round trip.
Panel e: panel a with ECMP (one path per flow) instead of spraying, each
point the mean of 3 seeds (--small: 2), the other reading.

Writes OUT/fig_panama_load_balance.png and .csv (columns long_flow_nodes,
config, aggregation_time_s), OUT/fig_panama_load_balance_trees.csv (per
4-tree run and tree, from rank 0's window trace: results, marked fraction,
mean and smallest window, round trip p50 / p99, last result) and keeps every
run under OUT/sweeps/<name>/.
Exit status: 0 ok; 1 a run failed or a result was not exact; 2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from figscript import ROOT, num  # noqa: E402

CONFIGS = {
    "full": {"scenario": ROOT / "scenarios" / "panama" / "fig9-load-balance.json", "nodes": [0, 2, 4, 6, 8],
             "ecmp_seeds": 3},
    "small": {"scenario": ROOT / "scenarios" / "panama" / "fig9-load-balance-small.json", "nodes": [0, 4, 8],
              "ecmp_seeds": 2},
}
STEM = "fig_panama_load_balance"
# The hosts that may run long flows, racks alternating (leaf 0: 4..7, leaf 1: 12..15).
LONG_FLOW_HOSTS = [4, 12, 5, 13, 6, 14, 7, 15]
SPINES = 4


def configurations():
    """(label, overrides) of every compared configuration, in plot order."""
    # The 4-tree runs log every result's window (panama_windows.csv) for the per-tree table.
    out = [("PANAMA (4 trees)", {"workload.panama.trees": 4, "workload.panama.window_trace": True})]
    for i in range(SPINES):
        out.append((f"PANAMA-Agg{i + 1}", {"workload.panama.trees": None,
                                           "workload.panama.tree_roots": [f"spine{i}"]}))
    out.append(("Ring-AllReduce", {"workload.protocol": "ring", "workload.panama": None}))
    return out


def points(nodes):
    pts, labels = [], []
    for m in nodes:
        bg = {"background.flows.hosts": LONG_FLOW_HOSTS[:m]} if m else {"background": None}
        for label, over in configurations():
            pts.append({**over, **bg})
            labels.append((m, label))
    return pts, labels


def tree_rows(m, run_dir, cols):
    """Per tree of a 4-tree run (rank 0's panama_windows.csv): its results'
    marked fraction, mean and smallest window, round-trip median and p99, and
    when its last result came: the evidence for which tree held the job."""
    import pandas as pd

    w = pd.read_csv(Path(run_dir) / "panama_windows.csv")
    for tree, t in w.groupby("tree"):
        for key, value in (("long_flow_nodes", m), ("tree", int(tree)), ("results", len(t)),
                           ("marked_fraction", t.ecn_marked.mean()), ("mean_cwnd", t.cwnd.mean()),
                           ("min_cwnd", t.cwnd.min()), ("rtt_p50_us", t.rtt_us.median()),
                           ("rtt_p99_us", t.rtt_us.quantile(0.99)), ("last_result_s", t.time_s.max())):
            cols.setdefault(key, []).append(value)


def tree_panels(plot, trees, nodes):
    """Panels b-d, the 4-tree runs per tree against m: the marked fraction of
    its results, its mean window and its median round trip (from tree_rows)."""
    out = []
    for key, title, ylabel, unit in (("marked_fraction", "4 trees: results ECN-marked", "marked", "fraction"),
                                     ("mean_cwnd", "4 trees: mean window", "window", "packets"),
                                     ("rtt_p50_us", "4 trees: median round trip", "round trip", "us")):
        panel = plot.Figure(title, "nodes generating long flows", ylabel, "hosts", unit, legend_loc="upper left")
        for tree in sorted(set(trees.get("tree", []))):
            ys = [v for m, t, v in zip(trees["long_flow_nodes"], trees["tree"], trees[key]) if t == tree]
            panel.line(nodes, ys, f"tree {tree} (spine {tree})")
        out.append(panel.xticks(nodes))
    return out


def ecmp_times(fig, pts, labels):
    """The other reading of where the long flows go: ECMP (one path per flow,
    the fabric's default) instead of the scenario's spraying, every point
    over `ecmp_seeds` seeds (a handful of 4 MB flows hashed onto 4 spines
    lands differently with each seed). Returns {(m, label): mean time}."""
    runs = {}
    ecmp = [{**p, "switch.forwarding": "ecmp"} for p in pts]
    for row in fig.sweep(f"{fig.base['name']}-ecmp", points=ecmp, repetitions=fig.cfg["ecmp_seeds"]):
        m, label = labels[int(row["point"])]
        fig.check(row, f"ECMP m={m} {label}")
        runs.setdefault((m, label), []).append(num(row.get("workload.mean_duration_s")))
    return {key: sum(v) / len(v) for key, v in runs.items()}


def time_panel(plot, title, times, nodes, cols=None):
    """Aggregation time (ms) of every configuration against m; `cols`, when
    given, collects the tidy table (long_flow_nodes, config, time in s)."""
    panel = plot.Figure(title, "nodes generating long flows", "aggregation time", "hosts", "ms",
                        legend_loc="upper left")
    for label, _ in configurations():
        panel.line(nodes, [times[(m, label)] * 1e3 for m in nodes], label)
        print(f"{title[:24]:24s} {label:18s} " + "  ".join(f"m={m}: {times[(m, label)] * 1e3:7.3f} ms" for m in nodes))
        for m in nodes if cols is not None else ():
            cols["long_flow_nodes"].append(m)
            cols["config"].append(label)
            cols["aggregation_time_s"].append(times[(m, label)])
    return panel.xticks(nodes)


def draw(fig):
    base, plot = fig.base, fig.plot
    pts, labels = points(fig.cfg["nodes"])
    times, trees = {}, {}
    for row in fig.sweep(points=pts):
        m, label = labels[int(row["point"])]
        fig.check(row, f"m={m} {label}")
        times[(m, label)] = num(row.get("workload.mean_duration_s"))
        if label == "PANAMA (4 trees)" and "cache_dir" in row:
            tree_rows(m, row["cache_dir"], trees)
    nodes = fig.cfg["nodes"]
    cols = {"long_flow_nodes": [], "config": [], "aggregation_time_s": []}
    panel = time_panel(plot, "aggregation time vs long-flow load", times, nodes, cols)
    seeds = fig.cfg["ecmp_seeds"]
    panel_e = time_panel(plot, f"ECMP instead of spraying (mean of {seeds} seeds)",
                         ecmp_times(fig, pts, labels), nodes)
    # The plot's CSV holds the series; the tidy tables go beside it too.
    return fig.save([panel] + tree_panels(plot, trees, nodes) + [panel_e], title=(
        f"PANAMA load balancing: {len(base['workload']['hosts'])} workers, "
        f"{int(base['workload']['bytes']) / 2**20:g} MiB fp32, {base['links']['host_rate_gbps']:g} Gb/s"),
        tables={"points": cols, "trees": trees})


main = figscript.entry(STEM, __doc__, "the reduced sweep (3 loads, a few seconds)", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
