#!/usr/bin/python3
"""Canary recovering from a switch failure: the allreduce with and without a spine dying mid-run.

    /usr/bin/python3 analysis/fig_canary_recovery.py [--small] [--out DIR] [--jobs N] [--resume]

canary-fgcs24 Table 1 and §1: Canary "can autonomously detect and recover
from switch failures without re-starting the entire reduction from scratch
... CANARY requires only the retransmission of the small fraction of data
that was stored in the switch when it failed" (§3.3's timers, failure
messages and re-issues). scenarios/canary/switch-failure.json: 512 of the
1,024 hosts run a 4 MiB allreduce on the paper's network; spine22 (the
spine the idle run uses most) fails 120 us in, about a third of the idle
run; the hosts' retransmission timer is 100 us. Two runs: the failure
removed (faults.switches = []) and the failure.

Panels, one bar per run: time, goodput, the blocks the leaders re-issued
(share of all blocks), the final results they resent to single hosts (a
broadcast copy lost), the frames lost on the failed switch's links, and
the time with the failure over "timer + the whole idle allreduce": a
restart from scratch cannot end before the lost blocks' timers expire and
a whole allreduce runs again, so under 1 means no restart.

--small: scenarios/canary/switch-failure-small.json (16 hosts, 1 MiB,
spine1 fails 40 us in).
Writes OUT/fig_canary_recovery.png and .csv (bars: panel = metric, series
= run) and keeps every run under OUT/sweeps/<name>/. Exit status: 0 ok; 1 a
run failed or was not correct; 2 bad input.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from canaryfig import point, run_points  # noqa: E402

STEM = "fig_canary_recovery"
CONFIGS = figscript.scenario_configs("canary/switch-failure", full={"repetitions": 1}, small={"repetitions": 1})
#: (run, overrides): the failure removed, then the scenario's own.
RUNS = [("no failure", {"faults.switches": []}), ("switch failure", {})]


def own_counters(run: dict) -> Dict[str, float]:
    """The run's Canary recovery counters and link-down drops (results.json)."""
    r = json.loads((Path(run["dir"]) / "results.json").read_text())
    c = r["workload"]["canary"]
    return {"reissued": c["leaders"]["failures"], "blocks": c["blocks_per_iteration"],
            "resent": c["leaders"]["retransmissions"], "lost": r["network"]["drops_link_down"],
            "timer_s": r["scenario"]["workload"]["canary"]["retransmit_timeout_us"] * 1e-6}


def draw(fig):
    pts = [dict(point("canary", congested=False), **over) for _, over in RUNS]
    runs = {RUNS[r["point"]][0]: r for r in run_points(fig, pts)}
    idle = runs["no failure"]
    table: List[Dict[str, object]] = []
    for name, _ in RUNS:
        r, c = runs[name], own_counters(runs[name])
        table.append({"run": name, "time_us": r["duration_s"] * 1e6, "goodput_gbps": r["goodput_gbps"],
                      "reissued_pct": 100 * c["reissued"] / c["blocks"], "resent": c["resent"], "lost": c["lost"],
                      "over_restart": r["duration_s"] / (c["timer_s"] + idle["duration_s"])})
        print(f"{name:15s} {r['duration_s'] * 1e6:8.1f} us  {r['goodput_gbps']:6.2f} Gb/s  re-issued "
              f"{c['reissued']} of {c['blocks']} blocks, {c['resent']} results resent, {c['lost']} frames lost; "
              f"time / (timer + idle run) {table[-1]['over_restart']:.3f}")
    metrics = [("time_us", "time", "us"), ("goodput_gbps", "goodput", "Gb/s"),
               ("reissued_pct", "blocks re-issued", "% of blocks"), ("resent", "results resent to one host", "results"),
               ("lost", "frames lost on down links", "frames"),
               ("over_restart", "time / (timer + idle allreduce)", "ratio")]
    return fig.bar_table(table, metrics, group="run", title=(
        f"Canary, {fig.base['faults']['switches'][0]['switch']} failing "
        f"{fig.base['faults']['switches'][0]['down_at_us']:g} us into {fig.base['name']}"))


main = figscript.entry(STEM, __doc__, "16 hosts, 1 MiB (a second)", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
