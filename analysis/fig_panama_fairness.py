#!/usr/bin/python3
"""PANAMA Fig. 10: bandwidth of an aggregation flow and a DCTCP flow sharing one bottleneck, with and without PANAMA's congestion control.

    /usr/bin/python3 analysis/fig_panama_fairness.py [--small] [--out DIR] [--jobs N] [--resume]

scenarios/panama/fig10-fairness.json (--small: fig10-fairness-small.json):
one rack at 10 Gb/s; a DCTCP flow h2 -> h0 starts at 0; a 2-worker
aggregation job (h0, h1) starts later; the ToR's port to h0 carries the
flow's data and the job's results. Two runs: (a) PANAMA's Fig. 5 congestion
control, (b) a fixed window of 64 packets per tree (no congestion control).

Each flow's throughput per sampling interval is read from samples.csv: the
DCTCP flow's on its sender's host link (h2 -> ToR), the aggregation's on the
bottlenecked worker's host link (h0 -> ToR: h0 sends a packet per result it
gets back, so this is the rate the job aggregates at). Both in frame bytes.
The summary (printed, and in the CSV) is the mean rate of each while both
run, and Jain's fairness index of the two.

Writes OUT/fig_panama_fairness.png and .csv (per series: time_s, gbps) and
OUT/fig_panama_fairness_summary.csv. Exit status: 0 ok; 1 a run failed or was
not exact; 2 bad input.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT / "python", ROOT / "build" / "python"):
    if str(p) not in sys.path:
        sys.path.append(str(p))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from figscript import parse_figure_args  # noqa: E402

CONFIGS = {
    "full": {"scenario": ROOT / "scenarios" / "panama" / "fig10-fairness.json", "out": Path("out") / "figures"},
    "small": {"scenario": ROOT / "scenarios" / "panama" / "fig10-fairness-small.json",
              "out": Path("out") / "figures" / "small"},
}
STEM = "fig_panama_fairness"
RUNS = [("PANAMA congestion control", {"workload.panama.congestion_control": True}),
        ("no congestion control (fixed window)", {"workload.panama.congestion_control": False})]


def host_link_rates(run_dir: Path, host: str):
    """(times_s, Gb/s) of host -> ToR per sampling interval, from samples.csv."""
    link = None
    with open(run_dir / "links.csv", newline="") as f:
        for r in csv.DictReader(f):
            if r["a"] == host and r["direction"] == "a->b":
                link = r["link"]
    if link is None:
        raise ValueError(f"{run_dir}: no link from {host}")
    pts = []
    with open(run_dir / "samples.csv", newline="") as f:
        for r in csv.DictReader(f):
            if r["link"] == link and r["direction"] == "0":
                pts.append((float(r["time_s"]), int(r["tx_bytes"])))
    times, rates = [], []
    for (t0, b0), (t1, b1) in zip(pts, pts[1:]):
        times.append(t1)
        rates.append((b1 - b0) * 8 / (t1 - t0) / 1e9)
    return times, rates


def overlap_means(t, agg, tcp, start_s):
    """Mean of both series over the intervals where both flows are sending."""
    both = [(a, b) for ti, a, b in zip(t, agg, tcp) if ti > start_s and a > 0.05 and b > 0.05]
    if not both:
        return float("nan"), float("nan"), float("nan")
    ma = sum(a for a, _ in both) / len(both)
    mb = sum(b for _, b in both) / len(both)
    jain = (ma + mb) ** 2 / (2 * (ma * ma + mb * mb))
    return ma, mb, jain


def main(argv=None) -> int:
    args = parse_figure_args("fig_panama_fairness.py", __doc__, "the reduced runs (about a second)",
                             sys.argv[1:] if argv is None else argv)
    try:
        import inasim
        from inasim import plot
        from inasim.sweep import SweepError, SweepRunError, run_sweep
    except ImportError as e:
        print(f"fig_panama_fairness: cannot import inasim ({e}); set PYTHONPATH=python:build/python", file=sys.stderr)
        return 2
    cfg = CONFIGS["small" if args.small else "full"]
    out = args.out if args.out is not None else cfg["out"]
    try:
        base = inasim.validate(cfg["scenario"])
    except inasim.ScenarioError as e:
        print(f"fig_panama_fairness: {cfg['scenario']}: {e}", file=sys.stderr)
        return 2
    sweep_out = out / "sweeps" / base["name"]
    sweep = {"name": base["name"], "description": f"analysis/{STEM}.py{' --small' if args.small else ''}",
             "scenario": str(cfg["scenario"]), "points": [o for _, o in RUNS]}
    try:
        df = run_sweep(sweep, out=sweep_out, jobs=args.jobs, resume=args.resume)
    except SweepError as e:
        print(f"fig_panama_fairness: {e}", file=sys.stderr)
        return 2
    except SweepRunError as e:
        print(f"fig_panama_fairness: {e}", file=sys.stderr)
        return 1

    start_s = float(base["workload"]["start_us"]) * 1e-6
    failures, panels, summary = [], [], []
    for row in sorted(df.to_dict("records"), key=lambda r: int(r["point"])):
        label = RUNS[int(row["point"])][0]
        if not (row.get("correct") is True and row.get("workload.correct") is True):
            failures.append(f"{label}: not correct")
        run_dir = sweep_out / "cache" / row["key"]
        t, agg = host_link_rates(run_dir, "h0")
        _, tcp = host_link_rates(run_dir, "h2")
        ma, mb, jain = overlap_means(t, agg, tcp, start_s)
        summary.append({"run": label, "aggregation_gbps": ma, "dctcp_gbps": mb, "jain_index": jain})
        print(f"{label:38s}: while both run, aggregation {ma:5.2f} Gb/s, DCTCP flow {mb:5.2f} Gb/s, "
              f"Jain's index {jain:.3f}")
        fig = plot.Figure(label, "time", "throughput", "ms", "Gb/s", legend_loc="lower right")
        fig.line([x * 1e3 for x in t], agg, "aggregation (h0's packets)",
                 columns={"time_s": t, "gbps": agg})
        fig.line([x * 1e3 for x in t], tcp, "DCTCP flow (h2 -> h0)", columns={"time_s": t, "gbps": tcp})
        panels.append(fig)
    png, csv_path = plot.save_panels(out / STEM, panels, title=(
        f"PANAMA fairness on one {base['links']['host_rate_gbps']:g} Gb/s bottleneck "
        f"(aggregation starts at {start_s * 1e3:g} ms)"))
    with open(out / f"{STEM}_summary.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(summary[0].keys()))
        w.writeheader()
        w.writerows(summary)
    print(f"wrote {png} and {csv_path}")
    for msg in failures:
        print(f"fig_panama_fairness: {msg}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
