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
max_job_goodput_gbps, hosts_per_job, runs, util_mean; panel b: protocol,
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
from canaryfig import (PROTOCOLS as LABELS, mean, point,  # noqa: E402
                       placements, run_points, status, utilization_line)

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
                                "hosts_per_job", "runs", "util_mean", "correct", "peak_descriptor_bytes")}
        for j in jobs:
            rs = [r for r in runs if r["protocol"] == proto and r["meta"]["x.jobs"] == j]
            g = mean([r["job_goodput_gbps"] for r in rs])
            lo = min(r["job_goodput_min_gbps"] for r in rs)
            hi = max(r["job_goodput_max_gbps"] for r in rs)
            ok = all(r["correct"] for r in rs)
            util = mean([r["util_mean"] for r in rs])
            peak = max(r["peak_descriptor_bytes"] for r in rs)
            for k, v in (("protocol", proto), ("jobs", j), ("goodput_gbps", g), ("min_job_goodput_gbps", lo),
                         ("max_job_goodput_gbps", hi), ("hosts_per_job", rs[0]["hosts"] / j), ("runs", len(rs)),
                         ("util_mean", util), ("correct", ok), ("peak_descriptor_bytes", peak)):
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
