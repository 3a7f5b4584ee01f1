#!/usr/bin/python3
"""SwitchML Fig. 9: TAT and per-packet RTT vs pool size at 100 Gb/s.

    /usr/bin/python3 analysis/fig_switchml_pool.py [--small] [--out DIR] [--jobs N] [--resume]

Sweeps workload.switchml.pool_size s in {16, 32, 64, 128, 256, 512, 1024,
2048} on scenarios/switchml/fig9-pool.json (8 workers on one 100 Gb/s rack,
50 MB int32 tensor, 256-element packets; --small: fig9-pool-small.json, 4
workers, 4 MB, s in {16, 64, 256, 1024}, a few seconds). Two panels (the
paper draws one with a second y axis):

  (a) TAT vs s, with the framing bound (every packet of the tensor at line
      rate, `framing_bound_s`) dashed;
  (b) per-packet RTT vs s: the p50 of worker 0's last tensor
      (`workload.switchml.rtt_worker0_last_tensor_us.p50`) and the mean over every
      worker (`rtt_mean_us` of collectives.csv), with the model
      max(RTT0, s*b*8/B) dashed: a window of s packets of b bytes queues
      behind itself once it exceeds the bandwidth-delay product.

Both panels mark the BDP-derived pool size s_BDP = ceil(BDP / b) with a
vertical dashed line (appendix C: s*b must cover the bandwidth-delay product;
the optimum is ceil(BDP/b)). b = 1100 B is the packet on the wire (1024 B of
payload + 76 B of framing, the paper's "1100 bytes"); BDP = B x RTT0 with B
the host link rate and RTT0 the unloaded RTT, taken as worker 0's p50 RTT at
the smallest pool size swept (16 packets in flight: too few to queue, so the
RTT is propagation, serialization and the switch's 9 pipeline passes). Below
s_BDP the workers cannot fill the link (TAT ~ s_BDP/s x the bound); above it
the TAT stays at the bound and the extra packets only wait in the queues (RTT
~ s*b*8/B). The paper's hosts add their processing time to the RTT, hence its
larger choice (512 at 100 Gb/s, 128 at 10 Gb/s).

Writes OUT/fig_switchml_pool.png and .csv (plot.py conventions; per-point
columns pool_size, tat_s, framing_bound_s, rtt_p50_us, rtt_p99_us,
rtt_mean_us, s_bdp, pool_chosen: the next power of two, the paper's rule) and keeps every run under OUT/sweeps/<scenario name>/.
OUT defaults to out/figures (out/figures/small with --small).

Prints RTT0 and s_BDP, then one line per point. Exit status: 0 ok; 1 a run
failed or was not correct (or its TAT is below the framing bound); 2 bad input.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from figscript import ROOT, num, switchml_wire_bytes  # noqa: E402

CONFIGS = {
    "full": {
        "scenario": ROOT / "scenarios" / "switchml" / "fig9-pool.json",
        "pools": [16, 32, 64, 128, 256, 512, 1024, 2048],
    },
    "small": {
        "scenario": ROOT / "scenarios" / "switchml" / "fig9-pool-small.json",
        "pools": [16, 64, 256, 1024],
    },
}
PACKET_WIRE_BYTES = switchml_wire_bytes(256)  # b = 1100: 256 int32 + 76 B of framing
STEM = "fig_switchml_pool"


def s_bdp(rate_gbps: float, rtt0_s: float, b: int = PACKET_WIRE_BYTES) -> int:
    """ceil(BDP / b), BDP = B x RTT0 in bytes."""
    return math.ceil(rate_gbps * 1e9 / 8.0 * rtt0_s / b)


def pool_chosen(sb: int) -> int:
    """The pool the paper's rule picks: the next power of two at or above
    s_BDP (App. C: 128 at 10 Gb/s, 512 at 100 Gb/s on its testbed)."""
    return 1 << max(0, (sb - 1).bit_length())


def draw(fig):
    pools = fig.cfg["pools"]
    rate = float(fig.base["links"]["host_rate_gbps"])
    size = int(fig.base["workload"]["bytes"])
    res = {int(row["workload.switchml.pool_size"]): check_point(fig, row)
           for row in fig.sweep(grid={"workload.switchml.pool_size": pools})}
    smin = min(pools)
    rtt0_us = res[smin]["p50"]
    sb = s_bdp(rate, rtt0_us * 1e-6)
    print(f"unloaded RTT (worker 0 p50 at pool {smin}) {rtt0_us:.3f} us; BDP {rate:g} Gb/s x RTT0 = "
          f"{rate * 1e9 / 8 * rtt0_us * 1e-6:.0f} B; s_BDP = ceil(BDP / {PACKET_WIRE_BYTES} B) = {sb}")
    for s in pools:
        p = res[s]
        status = "correct" if p["correct"] else "NOT CORRECT"
        print(f"pool={s:<5d}: TAT {p['tat'] * 1e3:9.4f} ms  TAT/bound {p['tat'] / p['fb']:6.3f}  "
              f"RTT p50 {p['p50']:8.3f} us  p99 {p['p99']:8.3f} us  mean {p['mean']:8.3f} us  {status}")
    cols = {"pool_size": pools, "tat_s": [res[s]["tat"] for s in pools],
            "framing_bound_s": [res[s]["fb"] for s in pools], "rtt_p50_us": [res[s]["p50"] for s in pools],
            "rtt_p99_us": [res[s]["p99"] for s in pools], "rtt_mean_us": [res[s]["mean"] for s in pools],
            "s_bdp": [sb] * len(pools), "pool_chosen": [pool_chosen(sb)] * len(pools)}
    panels = [tat_panel(fig.plot, res, pools, sb, cols), rtt_panel(fig.plot, res, pools, sb, cols, rtt0_us, rate)]
    return fig.save_panels(
        panels,
        title=f"SwitchML pool size: {int(fig.base['topology']['hosts'])} workers, {rate:g} Gb/s, "
              f"{size / 1e6:g} MB (RTT₀ {rtt0_us:.2f} µs, b = {PACKET_WIRE_BYTES} B)")


def check_point(fig, row):
    """One pool size's TAT, framing bound and RTTs, checked."""
    import pandas as pd

    s = int(row["workload.switchml.pool_size"])
    where = f"pool={s}"
    correct = fig.check(row, where)
    # What the run reports it ran (the sweep's row shows the swept value under the same name).
    ran = json.loads((row["cache_dir"] / "results.json").read_text())["workload"]["switchml"]
    if ran["pool_size"] != s:
        fig.fail(f"{where}: ran pool {ran['pool_size']}")
    tat = num(row.get("workload.switchml.tat_mean_s"))
    coll = None
    try:
        coll = pd.read_csv(row["cache_dir"] / "collectives.csv")
    except OSError as e:
        fig.fail(f"{where}: no collectives.csv ({e})")
    fb = float(coll["framing_bound_s"].iloc[-1]) if coll is not None else float("nan")
    rtt_mean = float(coll["rtt_mean_us"].iloc[-1]) if coll is not None else float("nan")
    if math.isfinite(tat) and tat < fb * (1 - 1e-12):
        fig.fail(f"{where}: TAT {tat!r} s is below the framing bound {fb!r} s")
    rtt = "workload.switchml.rtt_worker0_last_tensor_us"
    return {"tat": tat, "fb": fb, "p50": num(row.get(f"{rtt}.p50")), "p99": num(row.get(f"{rtt}.p99")),
            "mean": rtt_mean, "correct": correct}


def tat_panel(plot, res, pools, sb, cols):
    """(a) TAT vs pool size with the framing bound; s_BDP marked."""
    fa = plot.Figure("TAT vs pool size", "pool size", "TAT", "slots", "ms", logx=2, logy=True,
                     legend_loc="upper right")
    c = fa.line(pools, [res[s]["tat"] * 1e3 for s in pools], "TAT", columns=cols)
    fa.bound(pools, [res[s]["fb"] * 1e3 for s in pools], "framing bound", color=c,
             legend="framing bound (line rate)", columns={"pool_size": pools,
                                                          "framing_bound_s": [res[s]["fb"] for s in pools]})
    tmin = min(res[s]["fb"] for s in pools) * 1e3
    tmax = max(res[s]["tat"] for s in pools) * 1e3
    fa.bound([sb, sb], [tmin * 0.8, tmax * 1.25], "s_BDP", legend=f"⌈BDP/b⌉ = {sb}",
             columns={"pool_size": [sb, sb], "s_bdp": [sb, sb]})
    fa.xticks(pools)
    return fa


def rtt_panel(plot, res, pools, sb, cols, rtt0_us, rate):
    """(b) per-packet RTT vs pool size with the window model; s_BDP marked."""
    fb = plot.Figure("per-packet RTT vs pool size", "pool size", "RTT", "slots", "µs", logx=2, logy=True,
                     legend_loc="upper left")
    c1 = fb.line(pools, [res[s]["p50"] for s in pools], "RTT p50 worker 0", columns=cols)
    fb.line(pools, [res[s]["mean"] for s in pools], "RTT mean", columns=cols)
    model = [max(rtt0_us, s * PACKET_WIRE_BYTES * 8 / (rate * 1e9) * 1e6) for s in pools]
    fb.bound(pools, model, "window model", color=c1, legend="max(RTT₀, s·b/B)",
             columns={"pool_size": pools, "rtt_model_us": model})
    lo = min(min(res[s]["p50"], res[s]["mean"]) for s in pools)
    hi = max(max(res[s]["p50"], res[s]["mean"]) for s in pools)
    fb.bound([sb, sb], [lo * 0.8, hi * 1.25], "s_BDP", legend=f"⌈BDP/b⌉ = {sb}",
             columns={"pool_size": [sb, sb], "s_bdp": [sb, sb]})
    fb.xticks(pools)
    return fb


main = figscript.entry(STEM, __doc__, "the reduced sweep (4 points, a few seconds)", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
