#!/usr/bin/python3
"""P4SGD Fig. 9: epoch time of model- vs data-parallel training vs mini-batch size.

    /usr/bin/python3 analysis/fig_p4sgd_model_vs_data.py [--small] [--out DIR] [--jobs N] [--resume]

4 FPGA workers with 8 engines each on one 100 Gb/s switch, timing-only
arithmetic (scenarios/p4sgd/fig9-model-vs-data.json: gisette-sized, 6,000
samples x 5,000 features; --small: fig9-model-vs-data-small.json, 1,024
samples). Mini-batch B in {16, 32, 64, 128, 256, 512, 1024} (--small: 16, 64,
256, 1024). Model-parallel (P4SGD): one 64-byte packet of 8 partial
activations per micro-batch, forward / communication / backward pipelined
(Fig. 2c). Data-parallel (the paper's FPGA baseline, §5.1): each worker
computes the gradient of B/4 samples over all features, then the workers
aggregate all 5,000 gradient words (625 packets) through the same switch
before the update. Both use the switch's paper protocol (ack round).

  (a) epoch time vs B for both;  (b) data- over model-parallel time.

Writes OUT/fig_p4sgd_model_vs_data.png and .csv and keeps every run under
OUT/sweeps/. Exit status: 0 ok; 1 a run failed or was not correct; 2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from figscript import num  # noqa: E402
from p4sgdfig import MODES  # noqa: E402

STEM = "fig_p4sgd_model_vs_data"
CONFIGS = figscript.scenario_configs(
    "p4sgd/fig9-model-vs-data",
    full={"minibatch": [16, 32, 64, 128, 256, 512, 1024]},
    small={"minibatch": [16, 64, 256, 1024]})


def draw(fig):
    bs = fig.cfg["minibatch"]
    pts = [{"workload.p4sgd.parallelism": m, "workload.p4sgd.minibatch": b} for m, _ in MODES for b in bs]
    rows = fig.sweep(points=pts)
    for p, r in zip(pts, rows):
        fig.check(r, str(p))
    t = {(p["workload.p4sgd.parallelism"], p["workload.p4sgd.minibatch"]): num(r.get("workload.p4sgd.epoch_time_s"))
         for p, r in zip(pts, rows)}
    fa = fig.plot.Figure("epoch time", "mini-batch size", "epoch time", "samples", "ms", logx=2, logy=True,
                         legend_loc="upper right")
    for m, label in MODES:
        fa.line(bs, [t[(m, b)] * 1e3 for b in bs], label, columns={"minibatch": bs, "parallelism": [m] * len(bs)})
    fa.xticks(bs)
    fb = fig.plot.Figure("data- over model-parallel", "mini-batch size", "time ratio", "samples", "x", logx=2,
                         legend_loc="upper right")
    ratio = [t[("data", b)] / t[("model", b)] for b in bs]
    fb.line(bs, ratio, "data / model", columns={"minibatch": bs})
    fb.bound(bs, [1.0] * len(bs), "equal", legend="equal")
    fb.xticks(bs)
    for b, r in zip(bs, ratio):
        print(f"B={b:<5d} model {t[('model', b)] * 1e3:9.3f} ms  data {t[('data', b)] * 1e3:9.3f} ms  "
              f"data/model x{r:6.2f}")
    p4 = fig.base["workload"]["p4sgd"]
    return fig.save_panels(
        [fa, fb],
        title=f"P4SGD model vs data parallelism: {int(fig.base['topology']['hosts'])} workers, "
              f"{p4['samples']:,} samples x {p4['features']:,} features")


main = figscript.entry(STEM, __doc__, "1,024 samples, 4 mini-batch sizes (seconds)", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
