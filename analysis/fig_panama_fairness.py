#!/usr/bin/python3
"""PANAMA Fig. 10: bandwidth of an aggregation flow and a DCTCP flow sharing one bottleneck, with and without PANAMA's congestion control.

    /usr/bin/python3 analysis/fig_panama_fairness.py [--small] [--out DIR] [--jobs N] [--resume]

scenarios/panama/fig10-fairness.json (--small: fig10-fairness-small.json):
one rack at 10 Gb/s; a DCTCP flow h2 -> h0 starts at 0; a 2-worker
aggregation job (h0, h1; 1,500-byte packets, as the paper's) starts later;
the ToR's port to h0 carries the flow's data and the job's results. Three
runs, panels a-d (panel e: their steady-state means, x = 1..4 in this order): (a)
PANAMA's congestion control with an additive increase in every window, marked
or not (`increase: "every_window"`, the other reading, an option), (b) Fig. 5
as printed (grows only in windows without a mark, the default: it is also
what DCTCP does in ns-3 and Linux, whose window does not grow in the CWR
window a mark starts, ns-3.37 tcp-socket-base.cc:2108-2118; §4.2.2 says the
mechanism "matches that of DCTCP"; the paper's Fig. 10a, and the rule Fig. 8
runs), (c) a fixed window (no congestion control, the paper's Fig. 10b:
SwitchML's pool of 128 packets at 10 Gb/s, workload.panama.fixed_pool), (d) Fig. 5 with DCTCP's CWR (`cut:
"once_per_flight"`: after a cut, the results of packets already in flight
neither cut again nor grow; an option, run to measure how much of (b)'s gap
Fig. 5's second cut per congestion episode makes).

Each flow's throughput per sampling interval is read from samples.csv, in
frame bytes on its sender's host link: the DCTCP flow's on h2 -> ToR, the
aggregation's on h1 -> ToR (h1 sends only the job's packets, one per result
it gets back; h0's link also carries the flow's ACKs). The summary (printed,
and in the CSV) is the mean rate of each in the steady state: from SETTLE_S
after the job starts (Fig. 5 starts every window at alpha = 1 and needs
~10 ms here to converge) until the first of the two ends, with Jain's index
and each rate's deviation from the fair share (their mean).

Writes OUT/fig_panama_fairness.png and .csv (per series: time_s, gbps) and
OUT/fig_panama_fairness_summary.csv. Exit status: 0 ok; 1 a run failed or was
not exact; 2 bad input.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from figscript import ROOT  # noqa: E402

CONFIGS = {
    "full": {"scenario": ROOT / "scenarios" / "panama" / "fig10-fairness.json"},
    "small": {"scenario": ROOT / "scenarios" / "panama" / "fig10-fairness-small.json"},
}
STEM = "fig_panama_fairness"
RUNS = [("PANAMA, increase in every window", {"workload.panama.congestion_control": True,
                                          "workload.panama.increase": "every_window"}),
        ("PANAMA, Fig. 5 as printed (default)", {"workload.panama.congestion_control": True,
                                            "workload.panama.increase": "unmarked_windows"}),
        ("no congestion control (fixed window)", {"workload.panama.congestion_control": False}),
        ("PANAMA, Fig. 5 with DCTCP's CWR", {"workload.panama.congestion_control": True,
                                             "workload.panama.increase": "unmarked_windows",
                                             "workload.panama.cut": "once_per_flight"})]
# Steady state begins this long after the job starts.
SETTLE_S = 0.010


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


def steady_means(t, agg, tcp, from_s, to_s):
    """Mean of both series over the intervals ending in (from_s, to_s]; Jain's
    index; the larger deviation of either from their mean (the fair share)."""
    both = [(a, b) for ti, a, b in zip(t, agg, tcp) if from_s < ti <= to_s]
    if not both:
        return float("nan"), float("nan"), float("nan"), float("nan")
    ma = sum(a for a, _ in both) / len(both)
    mb = sum(b for _, b in both) / len(both)
    jain = (ma + mb) ** 2 / (2 * (ma * ma + mb * mb))
    fair = (ma + mb) / 2
    return ma, mb, jain, max(abs(ma - fair), abs(mb - fair)) / fair


def run_ends(run_dir: Path):
    """(job end, DCTCP flow end) in seconds (inf for one that did not end)."""
    with open(run_dir / "results.json") as f:
        res = json.load(f)
    ends = [c["end_s"] for c in res["workload"].get("collectives", []) if c.get("end_s") is not None]
    job_end = max(ends) if ends else float("inf")
    flow_end = float("inf")
    with open(run_dir / "flows.csv", newline="") as f:
        for r in csv.DictReader(f):
            if r["end_s"]:
                flow_end = float(r["end_s"])
    return job_end, flow_end


def steady_state_panel(fig, summary):
    """Panel e: each run's steady-state means (x = the run, 1..4), so the
    paper-claims file can point at them (fig10a-equal-share, ...)."""
    runs = list(range(1, len(summary) + 1))
    panel = fig.plot.Figure("steady-state means", "configuration", "throughput", "run", "Gb/s", legend_loc="lower right")
    panel.line(runs, [r["aggregation_gbps"] for r in summary], "aggregation", linestyle="none",
               columns={"run": [r["run"] for r in summary]})
    panel.line(runs, [r["dctcp_gbps"] for r in summary], "DCTCP flow", linestyle="none",
               columns={"run": [r["run"] for r in summary]})
    return panel.xticks(runs, ["every window", "Fig. 5 (default)", "fixed window", "Fig. 5 + CWR"])


def draw(fig):
    base = fig.base
    start_s = float(base["workload"]["start_us"]) * 1e-6
    panels, summary = [], []
    for row in fig.sweep(points=[o for _, o in RUNS]):
        label = RUNS[int(row["point"])][0]
        fig.check(row, label)
        run_dir = row["cache_dir"]
        t, agg = host_link_rates(run_dir, "h1")
        _, tcp = host_link_rates(run_dir, "h2")
        job_end, flow_end = run_ends(run_dir)
        from_s, to_s = start_s + SETTLE_S, min(job_end, flow_end)
        ma, mb, jain, dev = steady_means(t, agg, tcp, from_s, to_s)
        summary.append({"run": label, "from_s": from_s, "to_s": to_s, "aggregation_gbps": ma, "dctcp_gbps": mb,
                        "jain_index": jain, "max_deviation_from_fair": dev})
        print(f"{label:38s}: steady state ({from_s * 1e3:.0f}-{to_s * 1e3:.0f} ms), aggregation {ma:5.2f} Gb/s, "
              f"DCTCP flow {mb:5.2f} Gb/s, Jain's index {jain:.3f}, {100 * dev:.1f} % from the fair share")
        panel = fig.plot.Figure(label, "time", "throughput", "ms", "Gb/s", legend_loc="lower right")
        panel.line([x * 1e3 for x in t], agg, "aggregation (h1's packets)", columns={"time_s": t, "gbps": agg})
        panel.line([x * 1e3 for x in t], tcp, "DCTCP flow (h2 -> h0)", columns={"time_s": t, "gbps": tcp})
        panels.append(panel)
    panels.append(steady_state_panel(fig, summary))
    return fig.save(panels, title=(f"PANAMA fairness on one {base['links']['host_rate_gbps']:g} Gb/s bottleneck "
                                   f"(aggregation starts at {start_s * 1e3:g} ms)"),
                    tables={"summary": {k: [r[k] for r in summary] for k in summary[0]}})


main = figscript.entry(STEM, __doc__, "the reduced runs (about a second)", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
