#!/usr/bin/python3
"""Where a run's queues and ECN marks are, by tier of the fabric.

    /usr/bin/python3 analysis/link_tiers.py RUN_DIR [RUN_DIR ...] [--window-us T] [--held N] [--csv OUT.csv]

Reads each run's links.csv (one row per link direction, written by every
`inasim run`) and groups the directions by tier: the names of the two ends
without their numbers (h -> edge is the hosts' NICs, edge -> h the hosts'
downlinks, edge -> agg, agg -> core, ... in a fat tree; h -> leaf, leaf ->
spine in a leaf-spine). Per tier: the directions, their mean utilisation,
the share of them that were idle (utilisation under 10 %, the first bin of
Canary's Fig. 7b / 10b), the ECN marks and their share of the run's, the PFC
pauses sent, and the largest queue any direction of the tier held and the
90th percentile of the directions' largest queues (KB).

--window-us T: the utilisation over the first T us instead of the whole
run, read from samples.csv's rows at time T (run with
outputs.sample_interval_us = T, so that the first sample covers [0, T]);
marks, pauses and queues stay the whole run's. Two
runs of different lengths compared over the same window: a longer run gives
a random traffic pattern more time to touch every link.

--held N: also lists the N link directions that flow control (PFC pauses,
or waiting for credit) held longest, as a share of the run (links.csv
paused_s over results.json's sim.end_time_s), with their mean frame size,
which tells a workload's frames from background ones (Canary and static-tree
frames are 1,085 B, the congestion's 1,514 B). A synchronous allreduce runs
at the pace of its most-held member.

Prints a table per run; --csv writes every run's rows (column `run`).
Exit status: 0 ok; 2 bad input (a directory without links.csv, or a
links.csv without the columns above; with --window-us, no samples.csv or no
sample at T).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Optional

COLUMNS = ("a", "b", "utilization", "ecn_marks", "pause_sent", "max_queue_bytes")
IDLE = 0.1  # utilisation under this is idle (Fig. 7b's first bin)


def tier_of(a: str, b: str) -> str:
    """'edge3', 'h17' -> 'edge -> h'."""
    return f"{re.sub(r'[0-9_]+$', '', a)} -> {re.sub(r'[0-9_]+$', '', b)}"


def window_utilization(run: Path, links, window_us: float):
    """Each links.csv row's utilisation over [0, window_us], from samples.csv."""
    import pandas as pd

    path = run / "samples.csv"
    if not path.is_file():
        raise ValueError(f"{run}: no samples.csv (run with outputs.sample_interval_us = {window_us:g})")
    samples = pd.read_csv(path)
    at = samples[(samples.time_s - window_us * 1e-6).abs() < 1e-12]
    if at.empty:
        raise ValueError(f"{path}: no sample at {window_us:g} us (its times: "
                         f"{', '.join(f'{t * 1e6:g}' for t in sorted(set(samples.time_s))[:4])}, ... us)")
    util = {(int(l), int(d)): u for l, d, u in zip(at.link, at.direction, at.utilization)}
    return [util[(int(l), 0 if d == "a->b" else 1)] for l, d in zip(links.link, links.direction)]


def held(run: Path, n: int):
    """The n link directions held longest by flow control (share of the run)."""
    import json

    import pandas as pd

    path = run / "results.json"
    if not path.is_file():
        raise ValueError(f"{run}: no results.json (--held needs the run's length, sim.end_time_s)")
    end = json.loads(path.read_text()).get("sim", {}).get("end_time_s")
    if not end:
        raise ValueError(f"{path}: no sim.end_time_s")
    links = pd.read_csv(run / "links.csv")
    out = pd.DataFrame({"a": links.a, "b": links.b, "tier": [tier_of(a, b) for a, b in zip(links.a, links.b)],
                        "held_share": links.paused_s / end, "utilization": links.utilization,
                        "mean_frame_bytes": (links.tx_bytes / links.tx_frames.where(links.tx_frames > 0)).round(0)})
    return out.sort_values(["held_share", "a", "b"], ascending=[False, True, True]).head(n).reset_index(drop=True)


def tiers(run: Path, window_us: Optional[float] = None):
    import pandas as pd

    path = run / "links.csv"
    if not path.is_file():
        raise ValueError(f"{run}: no links.csv (a run directory of `inasim run`?)")
    links = pd.read_csv(path)
    missing = [c for c in COLUMNS if c not in links.columns]
    if missing:
        raise ValueError(f"{path}: missing columns {', '.join(missing)}")
    if window_us is not None:
        links["utilization"] = window_utilization(run, links, window_us)
    links["tier"] = [tier_of(a, b) for a, b in zip(links.a, links.b)]
    links["idle"] = links.utilization < IDLE
    out = links.groupby("tier").agg(directions=("utilization", "size"), utilization=("utilization", "mean"),
                                    idle=("idle", "sum"), idle_share=("idle", "mean"),
                                    ecn_marks=("ecn_marks", "sum"), pauses=("pause_sent", "sum"),
                                    max_queue_kb=("max_queue_bytes", lambda q: q.max() / 1e3),
                                    p90_max_queue_kb=("max_queue_bytes", lambda q: q.quantile(0.9) / 1e3))
    total = out.ecn_marks.sum()
    out.insert(int(out.columns.get_loc("ecn_marks")) + 1, "marks_share", out.ecn_marks / total if total else 0.0)
    return out.reset_index()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="run directories (each with links.csv)")
    ap.add_argument("--window-us", type=float, help="utilisation over [0, T] from samples.csv (see above)")
    ap.add_argument("--held", type=int, metavar="N", help="also list the N directions flow control held longest")
    ap.add_argument("--csv", type=Path, help="write every run's rows here")
    args = ap.parse_args(argv)
    try:
        tables = [(run, tiers(run, args.window_us)) for run in args.runs]
        helds = {run: held(run, args.held) for run in args.runs} if args.held else {}
    except (OSError, ValueError) as e:  # a missing file, column or sample
        print(f"link_tiers: {e}", file=sys.stderr)
        return 2
    for run, t in tables:
        idle, n = int(t.idle.sum()), int(t.directions.sum())
        print(f"{run}: {idle} of {n} link directions idle ({100 * idle / n:.1f} %)"
              + (f" over [0, {args.window_us:g} us]" if args.window_us is not None else "")
              + f"\n{t.round(3).to_string(index=False)}\n")
        if run in helds:
            print(f"held longest by flow control:\n{helds[run].round(3).to_string(index=False)}\n")
    if args.csv:
        import pandas as pd

        pd.concat([t.assign(run=str(run)) for run, t in tables]).to_csv(args.csv, index=False)
        print(f"wrote {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
