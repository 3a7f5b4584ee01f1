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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from p4sgdfig import ROOT, correct, finish, num, start, sweep_points  # noqa: E402

CONFIGS = {
    "full": {"scenario": ROOT / "scenarios" / "p4sgd" / "fig9-model-vs-data.json",
             "minibatch": [16, 32, 64, 128, 256, 512, 1024]},
    "small": {"scenario": ROOT / "scenarios" / "p4sgd" / "fig9-model-vs-data-small.json",
              "minibatch": [16, 64, 256, 1024]},
}
MODES = (("model", "model-parallel (P4SGD)"), ("data", "data-parallel"))


def main(argv=None) -> int:
    ctx = start("fig_p4sgd_model_vs_data.py", __doc__, "1,024 samples, 4 mini-batch sizes (seconds)", argv, CONFIGS)
    if isinstance(ctx, int):
        return ctx
    bs = ctx.cfg["minibatch"]
    pts = [{"workload.p4sgd.parallelism": m, "workload.p4sgd.minibatch": b} for m, _ in MODES for b in bs]
    rows = sweep_points(ctx, "", pts)
    if isinstance(rows, int):
        return rows
    failures = [f"{p}: not correct" for p, r in zip(pts, rows) if not correct(r)]
    t = {(p["workload.p4sgd.parallelism"], p["workload.p4sgd.minibatch"]): num(r.get("workload.epoch_time_s"))
         for p, r in zip(pts, rows)}
    fa = ctx.plot.Figure("epoch time", "mini-batch size", "epoch time", "samples", "ms", logx=2, logy=True,
                         legend_loc="upper right")
    for m, label in MODES:
        fa.line(bs, [t[(m, b)] * 1e3 for b in bs], label, columns={"minibatch": bs, "parallelism": [m] * len(bs)})
    fa.xticks(bs)
    fb = ctx.plot.Figure("data- over model-parallel", "mini-batch size", "time ratio", "samples", "x", logx=2,
                         legend_loc="upper right")
    ratio = [t[("data", b)] / t[("model", b)] for b in bs]
    fb.line(bs, ratio, "data / model", columns={"minibatch": bs})
    fb.bound(bs, [1.0] * len(bs), "equal", legend="equal")
    fb.xticks(bs)
    for b, r in zip(bs, ratio):
        print(f"B={b:<5d} model {t[('model', b)] * 1e3:9.3f} ms  data {t[('data', b)] * 1e3:9.3f} ms  "
              f"data/model x{r:6.2f}")
    p4 = ctx.base["workload"]["p4sgd"]
    written = ctx.plot.save_panels(
        ctx.out / ctx.stem, [fa, fb],
        title=f"P4SGD model vs data parallelism: {int(ctx.base['topology']['hosts'])} workers, "
              f"{p4['samples']:,} samples x {p4['features']:,} features")
    return finish(ctx, written, failures)


if __name__ == "__main__":
    sys.exit(main())
