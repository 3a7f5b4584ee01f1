#!/usr/bin/python3
"""PANAMA Fig. 9: aggregation time vs long-flow load, 4 trees vs one tree per spine vs ring.

    /usr/bin/python3 analysis/fig_panama_load_balance.py [--small] [--out DIR] [--jobs N] [--resume]

One 8-worker job on the two-tier network of the paper's Fig. 3
(scenarios/panama/fig9-load-balance.json: 2 leaves x 4 spines, 10 Gb/s, 4
workers and 4 other hosts per leaf) aggregates 4 MiB of fp32 gradients per
iteration while m of the other hosts run 4 MiB DCTCP long flows among
themselves at 90 % load (m in {0, 2, 4, 6, 8}, racks alternating; --small:
fig9-load-balance-small.json, 1 MiB, m in {0, 4, 8}). Configurations, as in
the paper: PANAMA (4 trees, one per spine), PANAMA-Agg1..4 (one tree, through
spine 0..3) and the ring allreduce. The y axis is the aggregation time (mean
duration of an iteration's allreduce, the paper's "aggregation latency").

Writes OUT/fig_panama_load_balance.png and .csv (columns long_flow_nodes,
config, aggregation_time_s) and keeps every run under OUT/sweeps/<name>/.
Exit status: 0 ok; 1 a run failed or a result was not exact; 2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT / "python", ROOT / "build" / "python"):
    if str(p) not in sys.path:
        sys.path.append(str(p))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from figscript import num, parse_figure_args  # noqa: E402

CONFIGS = {
    "full": {"scenario": ROOT / "scenarios" / "panama" / "fig9-load-balance.json", "nodes": [0, 2, 4, 6, 8],
             "out": Path("out") / "figures"},
    "small": {"scenario": ROOT / "scenarios" / "panama" / "fig9-load-balance-small.json", "nodes": [0, 4, 8],
              "out": Path("out") / "figures" / "small"},
}
STEM = "fig_panama_load_balance"
# The hosts that may run long flows, racks alternating (leaf 0: 4..7, leaf 1: 12..15).
LONG_FLOW_HOSTS = [4, 12, 5, 13, 6, 14, 7, 15]
SPINES = 4


def configurations():
    """(label, overrides) of every compared configuration, in plot order."""
    out = [("PANAMA (4 trees)", {"workload.panama.trees": 4})]
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


def main(argv=None) -> int:
    args = parse_figure_args("fig_panama_load_balance.py", __doc__, "the reduced sweep (3 loads, a few seconds)",
                             sys.argv[1:] if argv is None else argv)
    try:
        import inasim
        from inasim import plot
        from inasim.sweep import SweepError, SweepRunError, run_sweep
    except ImportError as e:
        print(f"fig_panama_load_balance: cannot import inasim ({e}); set PYTHONPATH=python:build/python",
              file=sys.stderr)
        return 2
    cfg = CONFIGS["small" if args.small else "full"]
    out = args.out if args.out is not None else cfg["out"]
    try:
        base = inasim.validate(cfg["scenario"])
    except inasim.ScenarioError as e:
        print(f"fig_panama_load_balance: {cfg['scenario']}: {e}", file=sys.stderr)
        return 2
    pts, labels = points(cfg["nodes"])
    sweep = {"name": base["name"], "description": f"analysis/{STEM}.py{' --small' if args.small else ''}",
             "scenario": str(cfg["scenario"]), "points": pts}
    try:
        df = run_sweep(sweep, out=out / "sweeps" / base["name"], jobs=args.jobs, resume=args.resume)
    except SweepError as e:
        print(f"fig_panama_load_balance: {e}", file=sys.stderr)
        return 2
    except SweepRunError as e:
        print(f"fig_panama_load_balance: {e}", file=sys.stderr)
        return 1

    failures = []
    times = {}
    for row in df.to_dict("records"):
        m, label = labels[int(row["point"])]
        if not (row.get("correct") is True and row.get("workload.correct") is True):
            failures.append(f"m={m} {label}: not correct")
        times[(m, label)] = num(row.get("workload.mean_duration_s"))
    nodes = cfg["nodes"]
    cols = {"long_flow_nodes": [], "config": [], "aggregation_time_s": []}
    fig = plot.Figure("aggregation time vs long-flow load", "nodes generating long flows", "aggregation time",
                      "hosts", "ms", legend_loc="upper left")
    for label, _ in configurations():
        ys = [times[(m, label)] * 1e3 for m in nodes]
        for m in nodes:
            cols["long_flow_nodes"].append(m)
            cols["config"].append(label)
            cols["aggregation_time_s"].append(times[(m, label)])
        fig.line(nodes, ys, label)
        print(f"{label:18s} " + "  ".join(f"m={m}: {times[(m, label)] * 1e3:7.3f} ms" for m in nodes))
    fig.xticks(nodes)
    png, csv_path = plot.save_panels(out / STEM, [fig], title=(
        f"PANAMA load balancing: {len(base['workload']['hosts'])} workers, "
        f"{int(base['workload']['bytes']) / 2**20:g} MiB fp32, {base['links']['host_rate_gbps']:g} Gb/s"))
    # The plot's CSV holds the series; the tidy table goes beside it too.
    import csv
    with open(out / f"{STEM}_points.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols.keys())
        w.writerows(zip(*cols.values()))
    print(f"wrote {png} and {csv_path}")
    for msg in failures:
        print(f"fig_panama_load_balance: {msg}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
