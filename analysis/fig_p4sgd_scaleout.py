#!/usr/bin/python3
"""P4SGD Fig. 12 and Fig. 13: scale-out throughput and epoch time vs workers.

    /usr/bin/python3 analysis/fig_p4sgd_scaleout.py [--small] [--out DIR] [--jobs N] [--resume]

Model-parallel training on one 100 Gb/s switch, FPGA workers with 8 engines,
timing-only arithmetic (scenarios/p4sgd/fig12-scaleout.json: rcv1-sized,
20,242 samples; --small: fig12-scaleout-small.json, 1,024 samples).

  (a) Fig. 12: throughput (samples/s) with W workers over the throughput
      with one, for W in {1, 2, 4, 8, 16, 32} (--small: up to 8) and models
      of 5,000 (gisette), 47,236 (rcv1) and 1,000,000 (avazu) features,
      mini-batch 64; the linear ideal dashed.
  (b) Fig. 13: epoch time vs W for mini-batch sizes 16, 64, 256 and 1,024
      (rcv1-sized; --small: 16 and 256).

Writes OUT/fig_p4sgd_scaleout.png and .csv and keeps every run under
OUT/sweeps/. Exit status: 0 ok; 1 a run failed or was not correct; 2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from figscript import num  # noqa: E402

STEM = "fig_p4sgd_scaleout"
CONFIGS = figscript.scenario_configs(
    "p4sgd/fig12-scaleout",
    full={"workers": [1, 2, 4, 8, 16, 32], "features": [5000, 47236, 1000000], "minibatch": [16, 64, 256, 1024]},
    small={"workers": [1, 2, 4, 8], "features": [5000, 47236, 1000000], "minibatch": [16, 256]})


def draw(fig):
    cfg = fig.cfg
    ws = cfg["workers"]
    pts_a = [{"topology.hosts": w, "workload.p4sgd.features": f} for f in cfg["features"] for w in ws]
    rows_a = fig.sweep(f"{fig.base['name']}-fig12", points=pts_a)
    pts_b = [{"topology.hosts": w, "workload.p4sgd.minibatch": b} for b in cfg["minibatch"] for w in ws]
    rows_b = fig.sweep(f"{fig.base['name']}-fig13", points=pts_b)
    for p, r in list(zip(pts_a, rows_a)) + list(zip(pts_b, rows_b)):
        fig.check(r, str(p))

    fa = fig.plot.Figure("Fig. 12: scale-out", "workers", "throughput / 1 worker", "FPGAs", "x", logx=2, logy=2,
                         legend_loc="upper left")
    fa.bound(ws, ws, "linear", legend="linear")
    tput = {}
    for f in cfg["features"]:
        ys = []
        for w in ws:
            r = rows_a[pts_a.index({"topology.hosts": w, "workload.p4sgd.features": f})]
            tput[(f, w)] = num(r.get("workload.p4sgd.throughput_samples_per_s"))
        ys = [tput[(f, w)] / tput[(f, ws[0])] for w in ws]
        fa.line(ws, ys, f"{f:,} features", columns={"workers": ws, "features": [f] * len(ws),
                                                    "samples_per_s": [tput[(f, w)] for w in ws]})
        print(f"{f:>9,} features: " + "  ".join(f"W={w}: x{y:5.2f}" for w, y in zip(ws, ys)))
    fa.xticks(ws)

    fb = fig.plot.Figure("Fig. 13: epoch time", "workers", "epoch time", "FPGAs", "ms", logx=2, logy=True,
                         legend_loc="upper right")
    for b in cfg["minibatch"]:
        ys = []
        for w in ws:
            r = rows_b[pts_b.index({"topology.hosts": w, "workload.p4sgd.minibatch": b})]
            ys.append(num(r.get("workload.p4sgd.epoch_time_s")) * 1e3)
        fb.line(ws, ys, f"B = {b}", columns={"workers": ws, "minibatch": [b] * len(ws)})
        print(f"B={b:<5d} epoch time: " + "  ".join(f"W={w}: {y:8.3f} ms" for w, y in zip(ws, ys)))
    fb.xticks(ws)

    return fig.save_panels(
        [fa, fb],
        title=f"P4SGD model-parallel scale-out ({fig.base['workload']['p4sgd']['samples']:,} samples, 8 engines, "
              f"{fig.base['links']['host_rate_gbps']:g} Gb/s)")


main = figscript.entry(STEM, __doc__, "1,024 samples, up to 8 workers (seconds)", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
