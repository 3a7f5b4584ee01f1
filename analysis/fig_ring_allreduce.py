#!/usr/bin/python3
"""Ring allreduce time vs hosts and message size, against the analytic bound.

    /usr/bin/python3 analysis/fig_ring_allreduce.py [--small] [--out DIR] [--jobs N] [--resume]

Sweeps the host ring allreduce on one 100 Gb/s rack
(scenarios/figures/ring-allreduce.json): hosts n in {4, 8, 16, 32} x message
sizes S in {256 KiB, 1 MiB, 4 MiB, 16 MiB} (--small: the -small scenario,
n in {4, 8} x S in {64 KiB, 256 KiB}, a few seconds), and draws

  (a) time vs message size, one line per host count, with the bound
      2(n-1)/n * S/B (B = host link rate) dashed in the same colour;
  (b) time vs hosts at the largest size, with the bound.

The bound is computed here from the scenario's link rate and cross-checked
against the simulator's `workload.ring.analytic_bound_s`.

Writes OUT/fig_ring_allreduce.png and .csv (plot.py conventions: one row per
plotted point: panel, series, kind, x, y, ..., plus hosts, bytes, time_s,
bound_s, ratio) and keeps every run under OUT/sweeps/<scenario name>/ (the
sweep's sweep.csv and each run's results.json). OUT defaults to out/figures
(out/figures/small with --small), relative to the working directory.

Prints one line per point (time, bound, time/bound). Exit status: 0 ok;
1 a run failed, was not correct, or disagrees with the bound; 2 bad input.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from figscript import ROOT  # noqa: E402

KiB, MiB = 1024, 1024 * 1024
CONFIGS = {
    "full": {
        "scenario": ROOT / "scenarios" / "figures" / "ring-allreduce.json",
        "hosts": [4, 8, 16, 32],
        "bytes": [256 * KiB, 1 * MiB, 4 * MiB, 16 * MiB],
    },
    "small": {
        "scenario": ROOT / "scenarios" / "figures" / "ring-allreduce-small.json",
        "hosts": [4, 8],
        "bytes": [64 * KiB, 256 * KiB],
    },
}
STEM = "fig_ring_allreduce"


def us(seconds: float) -> float:
    """Seconds -> microseconds (the y unit), rounded to 12 significant digits
    so the CSV shows 41.27776 rather than 41.277759999999994."""
    return float(f"{seconds * 1e6:.12g}")


def human_bytes(b: int) -> str:
    if b >= MiB and b % MiB == 0:
        return f"{b // MiB} MiB"
    if b >= KiB and b % KiB == 0:
        return f"{b // KiB} KiB"
    return f"{b} B"


def ring_bound_s(n: int, size_bytes: int, rate_gbps: float) -> float:
    """2(n-1)/n * S / B: the bandwidth-optimal ring's payload time per rank."""
    return 2.0 * (n - 1) / n * size_bytes * 8.0 / (rate_gbps * 1e9)


def draw(fig):
    rate = float(fig.base["links"]["host_rate_gbps"])
    hosts, sizes = fig.cfg["hosts"], fig.cfg["bytes"]
    rows = fig.sweep(grid={"topology.hosts": hosts, "workload.bytes": sizes})
    points = check_points(fig, rows, rate)
    panels = [time_vs_size(fig.plot, points, hosts, sizes, rate), time_vs_hosts(fig.plot, points, hosts, sizes, rate)]
    return fig.save_panels(
        panels,
        title=f"Ring allreduce on one {rate:g} Gb/s rack vs the bound 2(n−1)/n·S/B (dashed)")


def check_points(fig, rows, rate):
    """One record per (hosts, bytes): time, bound, correct; checked against the
    bound and the simulator's own, and printed."""
    points = {}
    for row in rows:
        n, size = int(row["topology.hosts"]), int(row["workload.bytes"])
        t = row.get("workload.mean_duration_s")
        t = float("nan") if t is None else float(t)
        reported = float(row.get("workload.ring.analytic_bound_s", float("nan")))
        bound = ring_bound_s(n, size, rate)
        where = f"hosts={n}, bytes={size}"
        correct = fig.check(row, where)
        if row.get("workload.ranks") != n or row.get("workload.bytes") != size:
            fig.fail(f"{where}: ran {row.get('workload.ranks')} ranks, {row.get('workload.bytes')} bytes")
        if not math.isclose(reported, bound, rel_tol=1e-9):
            fig.fail(f"{where}: simulator's analytic bound {reported!r} s != 2(n-1)/n*S/B = {bound!r} s")
        if math.isfinite(t) and t < bound * (1 - 1e-12):
            fig.fail(f"{where}: time {t!r} s is below the bound {bound!r} s")
        points[(n, size)] = {"time_s": t, "bound_s": bound, "correct": correct}
        status = "correct" if correct else "NOT CORRECT"
        print(f"hosts={n:<3d} size={human_bytes(size):>8}: time {t * 1e6:10.3f} us  "
              f"bound {bound * 1e6:10.3f} us  time/bound {t / bound:6.3f}  {status}")
    return points


def measured_columns(pts):
    """The CSV columns of simulated points: time, bound and their ratio."""
    return {"time_s": [p["time_s"] for p in pts], "bound_s": [p["bound_s"] for p in pts],
            "ratio": [p["time_s"] / p["bound_s"] for p in pts]}


def time_vs_size(plot, points, hosts, sizes, rate):
    """(a) time vs message size, one line per host count; the bounds after the
    simulated lines so a 2-column legend puts each next to its line."""
    fa = plot.Figure("time vs message size", "message size", "allreduce time", "MiB", "µs",
                     logx=2, logy=True, legend_cols=2, legend_loc="upper left")
    colors = {}
    for n in hosts:
        pts = [points[(n, s)] for s in sizes]
        colors[n] = fa.line([s / MiB for s in sizes], [us(p["time_s"]) for p in pts], f"{n} hosts",
                            columns={"hosts": [n] * len(sizes), "bytes": sizes, **measured_columns(pts)})
    for n in hosts:
        bounds = [ring_bound_s(n, s, rate) for s in sizes]
        fa.bound([s / MiB for s in sizes], [us(b) for b in bounds], f"bound {n} hosts", color=colors[n],
                 legend=f"{n} hosts, bound",
                 columns={"hosts": [n] * len(sizes), "bytes": sizes, "bound_s": bounds})
    fa.xticks([s / MiB for s in sizes])
    return fa


def time_vs_hosts(plot, points, hosts, sizes, rate):
    """(b) time vs hosts at the largest size, with the bound."""
    big = max(sizes)
    fb = plot.Figure(f"time vs hosts at {human_bytes(big)}", "hosts", "allreduce time", "count", "µs",
                     logx=2, legend_loc="lower right")
    pts = [points[(n, big)] for n in hosts]
    c = fb.line(hosts, [us(p["time_s"]) for p in pts], f"ring {human_bytes(big)}",
                columns={"hosts": hosts, "bytes": [big] * len(hosts), **measured_columns(pts)})
    bounds = [ring_bound_s(n, big, rate) for n in hosts]
    fb.bound(hosts, [us(b) for b in bounds], f"bound {human_bytes(big)}", color=c,
             legend="2(n−1)/n·S/B",
             columns={"hosts": hosts, "bytes": [big] * len(hosts), "bound_s": bounds})
    fb.xticks(hosts)
    fb.ylim(bottom=0)
    return fb


main = figscript.entry(STEM, __doc__, "the reduced sweep (4 points, a few seconds)", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
