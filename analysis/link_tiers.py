#!/usr/bin/python3
"""Where a run's queues and ECN marks are, by tier of the fabric.

    /usr/bin/python3 analysis/link_tiers.py RUN_DIR [RUN_DIR ...] [--csv OUT.csv]

Reads each run's links.csv (one row per link direction, written by every
`inasim run`) and groups the directions by tier: the names of the two ends
without their numbers (h -> edge is the hosts' NICs, edge -> h the hosts'
downlinks, edge -> agg, agg -> core, ... in a fat tree; h -> leaf, leaf ->
spine in a leaf-spine). Per tier: the directions, their mean utilisation,
the ECN marks and their share of the run's, the PFC pauses sent, and the
largest queue any direction of the tier held and the 90th percentile of the
directions' largest queues (KB).

Prints a table per run; --csv writes every run's rows (column `run`).
Exit status: 0 ok; 2 bad input (a directory without links.csv, or a
links.csv without the columns above).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

COLUMNS = ("a", "b", "utilization", "ecn_marks", "pause_sent", "max_queue_bytes")


def tier_of(a: str, b: str) -> str:
    """'edge3', 'h17' -> 'edge -> h'."""
    return f"{re.sub(r'[0-9_]+$', '', a)} -> {re.sub(r'[0-9_]+$', '', b)}"


def tiers(run: Path):
    import pandas as pd

    path = run / "links.csv"
    if not path.is_file():
        raise ValueError(f"{run}: no links.csv (a run directory of `inasim run`?)")
    links = pd.read_csv(path)
    missing = [c for c in COLUMNS if c not in links.columns]
    if missing:
        raise ValueError(f"{path}: missing columns {', '.join(missing)}")
    links["tier"] = [tier_of(a, b) for a, b in zip(links.a, links.b)]
    out = links.groupby("tier").agg(directions=("utilization", "size"), utilization=("utilization", "mean"),
                                    ecn_marks=("ecn_marks", "sum"), pauses=("pause_sent", "sum"),
                                    max_queue_kb=("max_queue_bytes", lambda q: q.max() / 1e3),
                                    p90_max_queue_kb=("max_queue_bytes", lambda q: q.quantile(0.9) / 1e3))
    total = out.ecn_marks.sum()
    out.insert(3, "marks_share", out.ecn_marks / total if total else 0.0)
    return out.reset_index()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="run directories (each with links.csv)")
    ap.add_argument("--csv", type=Path, help="write every run's rows here")
    args = ap.parse_args(argv)
    try:
        tables = [(run, tiers(run)) for run in args.runs]
    except ValueError as e:
        print(f"link_tiers: {e}", file=sys.stderr)
        return 2
    for run, t in tables:
        print(f"{run}:\n{t.round(3).to_string(index=False)}\n")
    if args.csv:
        import pandas as pd

        pd.concat([t.assign(run=str(run)) for run, t in tables]).to_csv(args.csv, index=False)
        print(f"wrote {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
