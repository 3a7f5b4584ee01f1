#!/usr/bin/python3
"""Canary's retransmission delay: how long after a lost packet's block was sent it is re-issued, in round trips.

    /usr/bin/python3 analysis/fig_canary_retransmit.py [--small] [--out DIR] [--jobs N] [--resume]

canary-fgcs24 §6 "Retransmission delays": "If we assume a retransmission
timeout of 2·RTT ..., in the worst case a new reduction for a given block
will be re-issued after 3·RTT": the timer, then the request's way to the
leader (RTT/2) and its failure message's way back (RTT/2).
scenarios/canary/retransmit-3rtt.json: 16 hosts, a 64 KiB allreduce, 1 %
of frames lost on every link, the hosts' timer 2 RTT
(workload.canary.retransmit_timeout_rtts; the RTT is the longest idle
round trip of a block between a host and a leader, results'
workload.canary.leader_rtt_s). Two runs: one block in flight per host (the
scenario: the network stays as idle as the RTT the bound is stated in),
and 1 MiB with the default window of 1,024 blocks (its queues hold
blocks longer than a timer counted in idle round trips).

Panels, one bar per run, delays in RTT from the failed attempt's send to
the re-issue: the longest of the re-issues answered on this host's first
request (§6's case; a lost request or failure costs another timer
period), the mean and the longest of all; the share answered on the first
request; failures per block; the blocks that fell back to host-based
reduction.

--small: the same scenario (it is small already).
Writes OUT/fig_canary_retransmit.png and .csv (bars: panel = metric,
series = run) and keeps every run under OUT/sweeps/<name>/. Exit status:
0 ok; 1 a run failed or was not correct; 2 bad input.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from canaryfig import point, run_points  # noqa: E402

STEM = "fig_canary_retransmit"
SCENARIO = figscript.ROOT / "scenarios" / "canary" / "retransmit-3rtt.json"
CONFIGS = {"full": {"scenario": SCENARIO, "repetitions": 1}, "small": {"scenario": SCENARIO, "repetitions": 1}}
#: (run, overrides): the scenario's one block in flight, then 1 MiB with the default window.
RUNS = [("64 KiB, window 1", {}),
        ("1 MiB, window 1024", {"workload.bytes": 1 << 20, "workload.canary.window_blocks": 1024})]


def delays(run: dict) -> Dict[str, float]:
    """The run's re-issue delays in round trips and its recovery counters (results.json)."""
    c = json.loads((Path(run["dir"]) / "results.json").read_text())["workload"]["canary"]
    h, rtt, blocks = c["hosts"], c["leader_rtt_s"], c["blocks_per_iteration"]
    return {"first_max_rtt": h["reissue_first_request_delay_max_s"] / rtt, "mean_rtt": h["reissue_delay_mean_s"] / rtt,
            "max_rtt": h["reissue_delay_max_s"] / rtt,
            "first_pct": 100 * h["reissues_first_request"] / h["reissues_timed"] if h["reissues_timed"] else 0.0,
            "failures_per_block": c["leaders"]["failures"] / blocks,
            "fallback_pct": 100 * c["leaders"]["fallbacks"] / blocks, "rtt_us": rtt * 1e6,
            "reissues": h["reissues_timed"]}


def draw(fig):
    pts = [dict(point("canary", congested=False), **over) for _, over in RUNS]
    runs = {RUNS[r["point"]][0]: r for r in run_points(fig, pts)}
    table: List[Dict[str, object]] = []
    for name, _ in RUNS:
        d = delays(runs[name])
        table.append({"run": name, **d})
        print(f"{name:18s} RTT {d['rtt_us']:.3f} us; {d['reissues']} re-issues, {d['first_pct']:.1f} % on the first "
              f"request, the longest of those {d['first_max_rtt']:.3f} RTT; mean {d['mean_rtt']:.3f}, longest "
              f"{d['max_rtt']:.3f} RTT; {d['failures_per_block']:.2f} failures per block, "
              f"{d['fallback_pct']:.1f} % of blocks fell back")
    metrics = [("first_max_rtt", "longest re-issue, first request", "RTT"), ("mean_rtt", "mean re-issue", "RTT"),
               ("max_rtt", "longest re-issue", "RTT"), ("first_pct", "re-issued on the first request", "%"),
               ("failures_per_block", "failures per block", "failures"),
               ("fallback_pct", "blocks reduced by the hosts", "% of blocks")]
    return fig.bar_table(table, metrics, group="run", title=(
        f"Canary re-issue delay, timer {fig.base['workload']['canary']['retransmit_timeout_rtts']:g} RTT, "
        f"{100 * fig.base['faults']['loss_rate']:g} % loss per link ({fig.base['name']})"))


main = figscript.entry(STEM, __doc__, "the same scenario", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
