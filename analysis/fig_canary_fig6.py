#!/usr/bin/python3
"""Canary Fig. 6's setup: one switch aggregating two hosts' data at 128 B of payload per packet.

    /usr/bin/python3 analysis/fig_canary_fig6.py [--small] [--out DIR] [--jobs N] [--resume]

canary-fgcs24 §5.1: "we connected two hosts ... to the Tofino switch. We
emulate a leaf switch that receives the data to be reduced from the two
hosts, aggregates it, and forwards the aggregated result to the next
switch ... We benchmark a 4MiB allreduce and report the goodput in Fig. 6
... each packet contains 128 bytes of useful payload and 57 bytes of
headers", and §5.2: "We calibrated the simulator so that hosts can inject
packets into the network at line rate and so that the switches can
aggregate the data at the same speed as our Tofino prototype (as we show in
Fig. 6)". The prototype's goodput is only on the plot, so what can be
checked is the calibration: at line rate the goodput is the link rate
times the payload's share of each packet on the wire.
scenarios/canary/fig6-one-switch.json: three hosts on one switch (the
third is the leader the aggregate goes to), 4 MiB, 32 elements per packet.

Panels, one bar: goodput; the framing limit (link rate x payload / wire
bytes per packet, our UDP/IPv4 headers); goodput over that limit; the
bytes of headers and framing per packet (the paper's 57 is marked).

--small: the same scenario (it is small already).
Writes OUT/fig_canary_fig6.png and .csv (bars: panel = metric, series =
run) and keeps the run under OUT/sweeps/<name>/. Exit status: 0 ok; 1 the
run failed or was not correct; 2 bad input.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from canaryfig import point, run_points  # noqa: E402

STEM = "fig_canary_fig6"
SCENARIO = figscript.ROOT / "scenarios" / "canary" / "fig6-one-switch.json"
CONFIGS = {"full": {"scenario": SCENARIO, "repetitions": 1}, "small": {"scenario": SCENARIO, "repetitions": 1}}


def draw(fig):
    (run,) = run_points(fig, [point("canary", congested=False)])
    r = json.loads((Path(run["dir"]) / "results.json").read_text())
    c = r["workload"]["canary"]
    limit = r["scenario"]["links"]["host_rate_gbps"] * c["goodput_fraction_from_framing"]
    row = {"run": "simulator", "goodput_gbps": run["goodput_gbps"], "limit_gbps": limit,
           "over_limit": run["goodput_gbps"] / limit,
           "header_bytes": c["packet_wire_bytes"] - 4 * c["elements_per_packet"]}
    print(f"goodput {row['goodput_gbps']:.2f} Gb/s, framing limit {limit:.2f} Gb/s ({row['header_bytes']} B of headers "
          f"and framing per {4 * c['elements_per_packet']} B of payload): {row['over_limit']:.3f} of it")
    metrics = [("goodput_gbps", "goodput", "Gb/s"), ("limit_gbps", "framing limit", "Gb/s"),
               ("over_limit", "goodput / framing limit", "ratio"),
               ("header_bytes", "headers and framing per packet", "bytes")]
    return fig.bar_table([row], metrics, group="run", title=(
        f"Canary on one switch, {c['elements_per_packet']} elements per packet ({fig.base['name']})"))


main = figscript.entry(STEM, __doc__, "the same scenario", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
