#!/usr/bin/python3
"""P4SGD Fig. 15 style: training loss vs time, model- vs data-parallel.

    /usr/bin/python3 analysis/fig_p4sgd_loss.py [--small] [--out DIR] [--jobs N] [--resume]

Real logistic-regression training (fixed-point arithmetic of
protocols/p4sgd/glm/p4sgd-glm.h) of a synthetic gisette-sized problem on 8 FPGA workers
(scenarios/p4sgd/fig15-loss-time.json: 6,000 samples x 5,000 features, 10 %
non-zero, mini-batch 64, 10 epochs; --small: fig15-loss-time-small.json,
1,024 x 512, 4 epochs), model-parallel (P4SGD) and data-parallel through the
same switch. Each run's model is compared bit for bit with the same training
without a network (`workload.p4sgd.networkless_match`); the loss per epoch of that
networkless run is drawn dashed at the simulated epoch end times.

  (a) loss vs simulated time;  (b) loss vs epoch (statistical efficiency, Fig. 14).

Writes OUT/fig_p4sgd_loss.png and .csv and keeps every run under
OUT/sweeps/. Exit status: 0 ok; 1 a run failed, was not correct or differs
from the networkless run; 2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from p4sgdfig import MODES  # noqa: E402

STEM = "fig_p4sgd_loss"
CONFIGS = figscript.scenario_configs("p4sgd/fig15-loss-time")


def draw(fig):
    import pandas as pd

    rows = fig.sweep(points=[{"workload.p4sgd.parallelism": m} for m, _ in MODES])
    fa = fig.plot.Figure("loss vs time", "time", "training loss", "ms", "nats", legend_loc="upper right")
    fb = fig.plot.Figure("loss vs epoch", "epoch", "training loss", "epochs", "nats", legend_loc="upper right")
    for (m, label), row in zip(MODES, rows):
        fig.check(row, label)
        if row.get("workload.p4sgd.networkless_match") is not True:
            fig.fail(f"{label}: the trained model differs from the networkless run")
        ep = pd.read_csv(row["cache_dir"] / "p4sgd_epochs.csv")
        t_ms = list(ep["time_s"] * 1e3)
        c = fa.line(t_ms, list(ep["loss"]), label, columns={"epoch": list(ep["epoch"])})
        fa.bound(t_ms, list(ep["networkless_loss"]), f"{label}, networkless", color=c, legend=False)
        fb.line(list(ep["epoch"]), list(ep["loss"]), label)
        print(f"{label:24s} " + "  ".join(f"e{e}: {l:.4f} @ {t:.3f} ms" for e, l, t in
                                           zip(ep["epoch"], ep["loss"], t_ms)))
    p4 = fig.base["workload"]["p4sgd"]
    return fig.save_panels(
        [fa, fb],
        title=f"P4SGD logistic regression: {int(fig.base['topology']['hosts'])} workers, {p4['samples']:,} x "
              f"{p4['features']:,} synthetic, B = {p4['minibatch']}")


main = figscript.entry(STEM, __doc__, "1,024 x 512, 4 epochs (seconds)", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
