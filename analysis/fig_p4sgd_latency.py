#!/usr/bin/python3
"""P4SGD Fig. 8: latency of an allreduce of 8 x int32 across 8 workers.

    /usr/bin/python3 analysis/fig_p4sgd_latency.py [--small] [--out DIR] [--jobs N] [--resume]

One 100 Gb/s switch, 8 hosts (scenarios/p4sgd/fig8-latency.json: 1,000
sequential operations; --small: fig8-latency-small.json, 100). Four
configurations on the same network:

  P4SGD                   FPGA workers with their send and receive paths
                          (300 ns each, see scenarios/p4sgd/README.md), one
                          switch pass (520 ns), 64-byte load header over UDP;
  P4SGD (network only)    the same with the FPGA paths set to 0;
  SwitchML (256 B)        p4app-switchML's worker protocol and switch program
                          with 64-element (256 B) packets, the 8 elements in
                          one packet (two pipeline passes: CONSUME, HARVEST);
  Ring                    ring allreduce of the same 32 bytes (2(n-1) steps),
                          each forwarded packet one 520 ns switch pass.

ns-3 hosts have no software or PCIe latency, so the last three are the
network path alone: the paper's CPU/GPU and SwitchML numbers include their
host stacks, which we do not model.

Writes OUT/fig_p4sgd_latency.png and .csv (bars: mean, p50, p99 and max-min
of the per-operation latency; for P4SGD every result at every worker, for
SwitchML each tensor's mean TAT, for the ring each iteration's duration)
and keeps every run under OUT/sweeps/. Exit status: 0 ok; 1 a run failed
or was not correct; 2 bad input.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402

STEM = "fig_p4sgd_latency"
CONFIGS = figscript.scenario_configs("p4sgd/fig8-latency")


def configurations(ops):
    """(label, overrides, how to read its latencies) in plot order."""
    other = {"workload.p4sgd": None, "workload.bytes": 32, "workload.iterations": ops}
    return [
        ("P4SGD", {}, "p4sgd"),
        ("P4SGD (network only)", {"workload.p4sgd.fpga_tx_ns": 0, "workload.p4sgd.fpga_rx_ns": 0}, "p4sgd"),
        ("SwitchML (256 B)", {**other, "workload.protocol": "switchml",
                              "workload.switchml.elements_per_packet": 64}, "switchml"),
        # A plain forwarded packet takes one pipeline pass too (the INA
        # programs' passes are inside their models, 520 ns each).
        ("Ring", {**other, "workload.protocol": "ring", "switch.forwarding_latency_ns": 520}, "ring"),
    ]


def latencies_us(row, kind):
    """[(latency in us, how many results)] of one run."""
    import pandas as pd

    d = row["cache_dir"]
    if kind == "p4sgd":  # a histogram: every result at every worker
        h = pd.read_csv(d / "p4sgd_latency.csv")
        return list(zip(h["latency_ns"] / 1e3, h["results"]))
    col = "tat_mean_s" if kind == "switchml" else "duration_s"
    return [(v, 1) for v in pd.read_csv(d / "collectives.csv")[col] * 1e6]


def stats(weighted):
    v = sorted(weighted)
    n = sum(c for _, c in v)

    def q(p):
        rank, seen = max(1, math.ceil(p * n)), 0
        for x, c in v:
            seen += c
            if seen >= rank:
                return x
        return v[-1][0]

    return {"mean_us": sum(x * c for x, c in v) / n, "p50_us": q(0.5), "p99_us": q(0.99), "min_us": v[0][0],
            "max_us": v[-1][0], "spread_us": v[-1][0] - v[0][0], "samples": n}


def draw(fig):
    ops = int(fig.base["workload"]["p4sgd"]["operations"])
    confs = configurations(ops)
    rows = fig.sweep(points=[c[1] for c in confs])
    table = []
    for (label, _, kind), row in zip(confs, rows):
        fig.check(row, label)
        s = stats(latencies_us(row, kind))
        table.append({"protocol": label, **s})
        print(f"{label:22s} mean {s['mean_us']:7.3f} us  p50 {s['p50_us']:7.3f}  p99 {s['p99_us']:7.3f}  "
              f"max-min {s['spread_us']:6.3f}  ({s['samples']} samples)")
    return fig.bar_table(
        table, [("mean_us", "mean", "µs"), ("p50_us", "p50", "µs"), ("p99_us", "p99", "µs"),
                ("spread_us", "max − min", "µs")],
        title=f"allreduce of 8 × int32, {int(fig.base['topology']['hosts'])} workers, "
              f"{fig.base['links']['host_rate_gbps']:g} Gb/s (paper: P4SGD ≈ 1.2 µs)")


main = figscript.entry(STEM, __doc__, "100 operations instead of 1,000 (seconds)", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
