#!/usr/bin/python3
"""Canary Fig. 10a/10b: average goodput of many concurrent allreduces, and link utilisation.

    /usr/bin/python3 analysis/fig_canary_fig10.py [--small] [--out DIR] [--jobs N] [--resume]

canary-fgcs24 Sec. 5.2.4: the 1,024 hosts split at random into 1..32 equal
groups (workload.jobs), each running its own 4 MiB allreduce at the same
time, no other traffic (scenarios/canary/fig10-jobs.json); Canary (one
application id per job), 1 or 4 static trees per job (4096 -> 256 slots
per tree, the hosts' window, so that a leaf in every job's trees holds them
all) and the ring (one per job), 5 seeds per point. Panels:

  (a) Fig. 10a: goodput per job, averaged over the jobs, vs the number of jobs;
  (b) Fig. 10b: distribution of link utilisation (every link direction,
      links.csv, summed over the seeds) at 20 jobs (16 with --small).

The paper: Canary holds ~80 Gb/s per job up to 32 jobs, static trees lose
40 %, the ring gains as its groups shrink, then loses to the congestion
beyond ten jobs; mean utilisation at 20 jobs Canary 67.2 %, 4 trees 62.9 %,
1 tree 21.8 %.

--small: scenarios/canary/fig10-jobs-small.json (128 hosts, 512 KiB per
job), 1, 4 and 16 jobs, one seed: 12 runs.

Writes OUT/fig_canary_fig10.png and .csv (panel a: protocol, jobs,
goodput_gbps (mean over jobs and seeds), min_job_goodput_gbps,
max_job_goodput_gbps, hosts_per_job, runs, util_mean, peak_descriptor_bytes,
collisions (the most over the seeds, Canary), jobs_without_collisions (the
jobs, where no seed had a collision, else 0: Sec. 5.1), links_70_90_pct (the share of
link directions at 70-90 % utilisation, Sec. 5.2.4), frames_out_per_in
(frames a switch sends per frame it receives, the mean over the switches and
seeds, Sec. 4.2); panel b: protocol,
jobs, bin_low_pct, links, fraction, util_mean) and keeps every run under
OUT/sweeps/<name>/. Exit status: 0 ok; 1 a run failed or was not correct;
2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from figscript import paper_value  # noqa: E402
from canaryfig import (BINS, PROTOCOLS as LABELS, mean, point,  # noqa: E402
                       placements, run_points, status, utilization_histogram, utilization_line)

STEM = "fig_canary_fig10"
CONFIGS = figscript.scenario_configs(
    "canary/fig10-jobs",
    full={"repetitions": 5, "jobs": [1, 2, 4, 8, 16, 20, 32], "utilization_jobs": 20},
    small={"repetitions": 1, "jobs": [1, 4, 16], "utilization_jobs": 16})
PROTOCOLS = ["canary", "st1", "st4", "ring"]
UTILIZATION_PROTOCOLS = ["canary", "st1", "st4"]  # the paper's Fig. 10b
#: Slots per tree per switch for the static trees: the hosts' window (256 blocks).
SLOTS_PER_TREE = 256
#: canary-fgcs24 Sec. 5.2.4: mean link utilisation at 20 concurrent allreduces.
PAPER_UTIL = {p: paper_value("canary", f"fig10b-util-{c}") / 100
              for p, c in (("canary", "canary"), ("st4", "4-trees"), ("st1", "1-tree"))}


def collisions(run_dir: Path) -> float:
    """Descriptor collisions summed over the switches (Canary's
    workload.canary.switches.collisions; NaN for the other protocols)."""
    import json

    workload = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))["workload"]
    return float(workload.get("canary", {}).get("switches", {}).get("collisions", float("nan")))


def share_in_bins(runs, low_pct: int, high_pct: int) -> float:
    """The share (%) of link directions whose utilisation lies in
    [low_pct, high_pct) %, over the runs' links.csv (summed over the seeds)."""
    counts = [0] * BINS
    for r in runs:
        counts = [a + b for a, b in zip(counts, utilization_histogram(Path(r["dir"]), BINS) or [0] * BINS)]
    lo, hi = low_pct * BINS // 100, high_pct * BINS // 100
    return 100 * sum(counts[lo:hi]) / sum(counts) if sum(counts) else float("nan")


def frames_out_per_in(run_dir: Path) -> float:
    """Frames a switch sends per frame it receives (links.csv: the frames of
    each link direction, its sender first), averaged over the switches that
    canary_switches.csv lists (Sec. 4.2: "the switch forwards, on average,
    one packet for each packet it receives"); NaN without that file."""
    import csv

    try:
        with open(run_dir / "canary_switches.csv", newline="", encoding="utf-8") as f:
            switches = sorted({r["switch"] for r in csv.DictReader(f)})  # a fixed order: the same sum every run
        with open(run_dir / "links.csv", newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError:
        return float("nan")
    sent = {s: 0 for s in switches}
    received = {s: 0 for s in switches}
    for r in rows:
        if r["a"] in sent:
            sent[r["a"]] += int(r["tx_frames"])
        if r["b"] in received:
            received[r["b"]] += int(r["tx_frames"])
    return mean([sent[s] / received[s] for s in switches if received[s]])


def draw(fig):
    cfg, plot, base = fig.cfg, fig.plot, fig.base
    jobs = cfg["jobs"]
    points = []
    for proto in PROTOCOLS:
        for j in jobs:
            extra = {"workload__jobs": j}
            if proto.startswith("st"):
                extra["workload__static_tree__slots_per_tree"] = SLOTS_PER_TREE
            points.append(dict(point(proto, **extra), **{"x.jobs": j}))
    runs = run_points(fig, points)
    fa = plot.Figure("goodput per allreduce (Fig. 10a)", "concurrent allreduces", "goodput per allreduce", "jobs",
                     "Gb/s", logx=2, legend_loc="lower left")
    for proto in PROTOCOLS:
        cols = {k: [] for k in ("protocol", "jobs", "goodput_gbps", "min_job_goodput_gbps", "max_job_goodput_gbps",
                                "hosts_per_job", "runs", "util_mean", "correct", "peak_descriptor_bytes",
                                "collisions", "jobs_without_collisions", "links_70_90_pct", "frames_out_per_in")}
        for j in jobs:
            rs = [r for r in runs if r["protocol"] == proto and r["meta"]["x.jobs"] == j]
            g = mean([r["job_goodput_gbps"] for r in rs])
            lo = min(r["job_goodput_min_gbps"] for r in rs)
            hi = max(r["job_goodput_max_gbps"] for r in rs)
            ok = all(r["correct"] for r in rs)
            util = mean([r["util_mean"] for r in rs])
            peak = max(r["peak_descriptor_bytes"] for r in rs)
            collided = max(collisions(Path(r["dir"])) for r in rs)
            out_per_in = mean([frames_out_per_in(Path(r["dir"])) for r in rs])
            for k, v in (("protocol", proto), ("jobs", j), ("goodput_gbps", g), ("min_job_goodput_gbps", lo),
                         ("max_job_goodput_gbps", hi), ("hosts_per_job", rs[0]["hosts"] / j), ("runs", len(rs)),
                         ("util_mean", util), ("correct", ok), ("peak_descriptor_bytes", peak),
                         ("collisions", collided), ("jobs_without_collisions", j if collided == 0 else 0),
                         ("links_70_90_pct", share_in_bins(rs, 70, 90)),
                         ("frames_out_per_in", out_per_in)):
                cols[k].append(v)
            print(f"{LABELS[proto][0]:<16s} {j:3d} jobs: {g:7.2f} Gb/s per job (min {lo:6.2f}, max {hi:6.2f}), "
                  f"util {util * 100:5.1f} %  {status(ok)}")
        fa.line(jobs, cols["goodput_gbps"], LABELS[proto][0], columns=cols)
    fa.xticks(jobs)
    fa.ylim(bottom=0)

    uj = cfg["utilization_jobs"]
    fb = plot.Figure(f"link utilisation, {uj} jobs (Fig. 10b)", "link utilisation", "share of link directions", "%",
                     "%", legend_loc="upper right")
    for proto in UTILIZATION_PROTOCOLS:
        rs = [r for r in runs if r["protocol"] == proto and r["meta"]["x.jobs"] == uj]
        util = mean([r["util_mean"] for r in rs])
        utilization_line(fig, fb, proto, rs, f"{uj} jobs, ", util, jobs=uj)
        print(f"{LABELS[proto][0]:<16s} mean link utilisation at {uj} jobs {util * 100:5.1f} % "
              f"(paper at 20 jobs: {PAPER_UTIL[proto] * 100:.1f} %)")
    fb.ylim(bottom=0)
    return fig.save_panels(
        [fa, fb],
        title=f"concurrent {int(base['workload']['bytes']) // 1024} KiB allreduces on "
              f"{int(base['topology']['leaves']) * int(base['topology']['hosts_per_leaf'])} hosts "
              f"({placements(cfg)})")


main = figscript.entry(STEM, __doc__, "the reduced sweep (12 runs, ~12 s)", CONFIGS, draw, repetitions=True)


if __name__ == "__main__":
    sys.exit(main())
