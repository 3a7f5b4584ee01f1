#!/usr/bin/python3
"""SwitchML Fig. 9 and App. C: TAT and per-packet RTT vs pool size, at 100 and 10 Gb/s.

    /usr/bin/python3 analysis/fig_switchml_pool.py [--small] [--out DIR] [--jobs N] [--resume]

Sweeps workload.switchml.pool_size s in {16, 32, 64, 128, 256, 512, 1024,
2048} on scenarios/switchml/fig9-pool.json (8 workers on one rack, 50 MB
int32 tensor, 256-element packets, the DPDK worker host: threads, bursts,
tx buffer and drain, a cost per packet; workload.switchml.backend) at 100
Gb/s (the paper's Fig. 9) and at 10 Gb/s (App. C's other pool size);
--small: fig9-pool-small.json, 4 workers, 4 MB, s in {16, 64, 256, 1024}.
Per rate, one more run with the ideal host at the smallest pool gives the
RTT without the host: wire (two host links: serialization of b and
propagation) plus the switch's passes (the rest of it).

Per rate two panels: TAT vs s with the framing bound (every packet at line
rate) dashed, and worker 0's per-packet RTT (p50 of its last tensor, and the
mean over every worker) with the window model max(RTT0, s*b*8/B). Both mark
where TAT stops improving (`pool_knee`: the smallest s whose TAT is within 2 %
of the sweep's best), the number App. C's "128 and 512 ... for 10 and 100
Gbps" is compared with. `rtt_host_at_knee_us` = RTT p50 at the knee minus the
ideal host's RTT: the host's processing, batching (tx buffer, drain) and the
queueing of a full window. `s_bdp` / `pool_chosen` keep the paper's rule (the
next power of two above ceil(BDP/b)) applied to the RTT at the smallest pool.

Writes OUT/fig_switchml_pool.png and .csv (plot.py conventions; per-point
columns rate_gbps, pool_size, tat_s, framing_bound_s, rtt_p50_us,
rtt_p99_us, rtt_mean_us, s_bdp, pool_chosen, pool_knee, rtt_wire_us,
rtt_switch_us, rtt_host_at_knee_us) and keeps every run under
OUT/sweeps/<scenario name>-<rate>g[-ideal]/. OUT defaults to out/figures
(out/figures/small with --small).

Prints per rate the knee and its RTT decomposition, then one line per point.
Exit status: 0 ok; 1 a run failed or was not correct (or its TAT is below the
framing bound); 2 bad input.
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
        "rates": [100, 10],
    },
    "small": {
        "scenario": ROOT / "scenarios" / "switchml" / "fig9-pool-small.json",
        "pools": [16, 64, 256, 1024],
        "rates": [100, 10],
    },
}
PACKET_WIRE_BYTES = switchml_wire_bytes(256)  # b = 1100: 256 int32 + 76 B of framing
STEM = "fig_switchml_pool"
#: "Stops improving": the smallest pool whose TAT is within this of the sweep's best.
KNEE_TOLERANCE = 0.02


def s_bdp(rate_gbps: float, rtt0_s: float, b: int = PACKET_WIRE_BYTES) -> int:
    """ceil(BDP / b), BDP = B x RTT0 in bytes."""
    return math.ceil(rate_gbps * 1e9 / 8.0 * rtt0_s / b)


def pool_chosen(sb: int) -> int:
    """The pool the paper's rule picks: the next power of two at or above
    s_BDP (App. C: 128 at 10 Gb/s, 512 at 100 Gb/s on its testbed)."""
    return 1 << max(0, (sb - 1).bit_length())


def pool_knee(res, pools) -> int:
    """The smallest pool whose TAT is within KNEE_TOLERANCE of the best: where TAT stops improving."""
    best = min(res[s]["tat"] for s in pools)
    return min(s for s in pools if res[s]["tat"] <= best * (1 + KNEE_TOLERANCE))


def wire_us(rate_gbps: float, delay_us: float) -> float:
    """A packet's RTT on the wire alone: two host links (worker -> switch -> worker), serialization + propagation."""
    return 2 * (PACKET_WIRE_BYTES * 8 / (rate_gbps * 1e9) * 1e6 + delay_us)


def rate_sweep(fig, rate, pools):
    """One rate's pool sweep (the DPDK host) and its ideal-host RTT at the smallest pool (wire + switch)."""
    rows = fig.sweep(f"{fig.base['name']}-{rate:g}g", grid={"workload.switchml.pool_size": pools},
                     sets=[f"links.host_rate_gbps={rate}"])
    res = {int(row["workload.switchml.pool_size"]): check_point(fig, row) for row in rows}
    ideal = fig.sweep(f"{fig.base['name']}-{rate:g}g-ideal", points=[{"workload.switchml.pool_size": min(pools)}],
                      sets=[f"links.host_rate_gbps={rate}", 'workload.switchml.backend="ideal"'])
    return res, check_point(fig, ideal[0])["p50"]


def draw(fig):
    pools = fig.cfg["pools"]
    size = int(fig.base["workload"]["bytes"])
    delay_us = float(fig.base["links"].get("host_delay_ns", 0)) * 1e-3
    panels_a, panels_b, knees = [], [], {}
    for rate in fig.cfg["rates"]:
        res, ideal_rtt0 = rate_sweep(fig, rate, pools)
        rtt0_us = res[min(pools)]["p50"]
        sb, knee = s_bdp(rate, rtt0_us * 1e-6), pool_knee(res, pools)
        wire = wire_us(rate, delay_us)
        switch = ideal_rtt0 - wire
        host = res[knee]["p50"] - ideal_rtt0
        knees[rate] = knee
        print(f"{rate:g} Gb/s: RTT p50 at pool {min(pools)} {rtt0_us:.3f} us (ideal host {ideal_rtt0:.3f} us); "
              f"s_BDP = {sb}; TAT stops improving at pool {knee}; RTT there {res[knee]['p50']:.3f} us = wire "
              f"{wire:.3f} + switch {switch:.3f} ({switch / 0.52:.1f} passes of 520 ns) + host {host:.3f} "
              f"(processing, batching, queueing)")
        for s in pools:
            p = res[s]
            print(f"  pool={s:<5d}: TAT {p['tat'] * 1e3:9.4f} ms  TAT/bound {p['tat'] / p['fb']:6.3f}  "
                  f"RTT p50 {p['p50']:8.3f} us  p99 {p['p99']:8.3f} us  mean {p['mean']:8.3f} us  "
                  f"{'correct' if p['correct'] else 'NOT CORRECT'}")
        n = len(pools)
        cols = {"rate_gbps": [rate] * n, "pool_size": pools, "tat_s": [res[s]["tat"] for s in pools],
                "framing_bound_s": [res[s]["fb"] for s in pools], "rtt_p50_us": [res[s]["p50"] for s in pools],
                "rtt_p99_us": [res[s]["p99"] for s in pools], "rtt_mean_us": [res[s]["mean"] for s in pools],
                "s_bdp": [sb] * n, "pool_chosen": [pool_chosen(sb)] * n, "pool_knee": [knee] * n,
                "rtt_wire_us": [wire] * n, "rtt_switch_us": [switch] * n, "rtt_host_at_knee_us": [host] * n}
        panels_a.append(tat_panel(fig.plot, res, pools, knee, cols, rate))
        panels_b.append(rtt_panel(fig.plot, res, pools, knee, cols, rtt0_us, rate))
    return fig.save_panels(
        panels_a + panels_b,
        title=f"SwitchML pool size: {int(fig.base['topology']['hosts'])} workers, {size / 1e6:g} MB, DPDK hosts "
              f"(TAT stops improving at " + ", ".join(f"{knees[r]} at {r:g} Gb/s" for r in knees) + ")")


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


def tat_panel(plot, res, pools, knee, cols, rate):
    """TAT vs pool size with the framing bound; where it stops improving marked."""
    fa = plot.Figure(f"TAT vs pool size, {rate:g} Gb/s", "pool size", "TAT", "slots", "ms", logx=2, logy=True,
                     legend_loc="upper right")
    c = fa.line(pools, [res[s]["tat"] * 1e3 for s in pools], f"TAT {rate:g} Gb/s", columns=cols)
    fa.bound(pools, [res[s]["fb"] * 1e3 for s in pools], "framing bound", color=c,
             legend="framing bound (line rate)", columns={"pool_size": pools,
                                                          "framing_bound_s": [res[s]["fb"] for s in pools]})
    tmin = min(res[s]["fb"] for s in pools) * 1e3
    tmax = max(res[s]["tat"] for s in pools) * 1e3
    fa.bound([knee, knee], [tmin * 0.8, tmax * 1.25], "knee", legend=f"TAT stops improving: {knee}",
             columns={"pool_size": [knee, knee], "pool_knee": [knee, knee]})
    fa.xticks(pools)
    return fa


def rtt_panel(plot, res, pools, knee, cols, rtt0_us, rate):
    """Per-packet RTT vs pool size with the window model; the knee marked."""
    fb = plot.Figure(f"per-packet RTT vs pool size, {rate:g} Gb/s", "pool size", "RTT", "slots", "µs", logx=2,
                     logy=True, legend_loc="upper left")
    c1 = fb.line(pools, [res[s]["p50"] for s in pools], f"RTT p50 worker 0 {rate:g} Gb/s", columns=cols)
    fb.line(pools, [res[s]["mean"] for s in pools], f"RTT mean {rate:g} Gb/s", columns=cols)
    model = [max(rtt0_us, s * PACKET_WIRE_BYTES * 8 / (rate * 1e9) * 1e6) for s in pools]
    fb.bound(pools, model, "window model", color=c1, legend="max(RTT₀, s·b/B)",
             columns={"pool_size": pools, "rtt_model_us": model})
    lo = min(min(res[s]["p50"], res[s]["mean"]) for s in pools)
    hi = max(max(res[s]["p50"], res[s]["mean"]) for s in pools)
    fb.bound([knee, knee], [lo * 0.8, hi * 1.25], "knee", legend=f"TAT stops improving: {knee}",
             columns={"pool_size": [knee, knee], "pool_knee": [knee, knee]})
    fb.xticks(pools)
    return fb


main = figscript.entry(STEM, __doc__, "the reduced sweep (4 points, a few seconds)", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
