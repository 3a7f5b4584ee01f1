#!/usr/bin/python3
"""Canary under congestion: where the goodput goes, at Fig. 8's 5 % point, for the paper's setup and each suspect changed alone (and two combined).

    /usr/bin/python3 analysis/fig_canary_congestion.py [--small] [--out DIR] [--jobs N] [--resume]

canary-fgcs24 §5.2.2 quotes what congestion costs at 5 % of the hosts
(Canary 20 %, one static tree 66 %, four trees 47 %); ours costs about
twice that (scenarios/canary/README.md). This script runs that point (51 of
the 1,024 hosts in a 4 MiB allreduce, the others congesting;
scenarios/canary/fig8-goodput.json) for Canary, one and four static trees,
under these variants, each one change from the first:

  paper setup       the figures' network: PFC, PAUSE above 32 KiB per ingress
  credit 32 KiB     credit-based link-level flow control instead of PFC
                    (switch.credit, as SST's routers: 32 KiB per ingress)
  permutation       congestion peers as one random permutation per round
                    (background.congestion.peers), the other reading of §5.2
  timeout 3 us      Canary's switch timeout 3 us instead of 1 (Fig. 11's
                    range; Canary only)
  permutation + 3 us  the two that help Canary, together (Canary only)
  no congestion     the congesting hosts idle: the loss's reference

Panels, one row per variant: each protocol's goodput and its loss against
its own uncongested run; for Canary: the leader packets per block (one is
the ideal), the stragglers per block, the peak descriptors of the busiest
switch, and the fraction of the run that flow control held (PFC paused, or
out of credit, with a frame waiting) the allreduce hosts' uplinks, the
congesting hosts' uplinks, the leaf -> spine and the spine -> leaf link
directions (links.csv's paused_s over the run; a host is an allreduce host
when its uplink's mean frame is under 1,300 B: Canary frames are 1,109 B,
the congestion's 1,514 B).

--small: fig8-goodput-small.json (128 hosts) at 10 % (13 hosts).
Writes OUT/fig_canary_congestion.png and .csv (bars: panel = metric,
series = variant) and keeps every run under OUT/sweeps/<name>/. Exit
status: 0 ok; 1 a run failed or was not correct; 2 bad input.
"""

from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from canaryfig import point, run_points  # noqa: E402

STEM = "fig_canary_congestion"
CONFIGS = figscript.scenario_configs("canary/fig8-goodput", full={"hosts": 51, "repetitions": 1},
                                     small={"hosts": 13, "repetitions": 1})
PROTOCOLS = {"canary": "Canary", "st1": "one tree", "st4": "four trees"}
#: (variant, overrides, protocols it runs).
VARIANTS = [
    ("paper setup", {}, ("canary", "st1", "st4")),
    ("credit 32 KiB", {"switch.pfc.enabled": False, "switch.credit.enabled": True, "switch.credit.bytes": 32768},
     ("canary", "st1", "st4")),
    ("permutation", {"background.congestion.peers": "permutation"}, ("canary", "st1", "st4")),
    ("timeout 3 us", {"workload.canary.timeout_us": 3}, ("canary",)),
    ("permutation + 3 us", {"background.congestion.peers": "permutation", "workload.canary.timeout_us": 3},
     ("canary",)),
    ("no congestion", None, ("canary", "st1", "st4")),
]
ALLREDUCE_FRAME_MAX = 1300  # B: Canary and static-tree frames are 1,109 B, the congestion's 1,514 B
HELD = [("held_allreduce_up", "allreduce hosts' uplinks"), ("held_congestion_up", "congesting hosts' uplinks"),
        ("held_leaf_spine", "leaf -> spine"), ("held_spine_leaf", "spine -> leaf")]


def held_fractions(run_dir: Path, duration_s: float) -> Dict[str, float]:
    """Mean fraction of the run that flow control held each group of link
    directions (links.csv paused_s / the allreduce's duration)."""
    groups: Dict[str, List[float]] = {k: [] for k, _ in HELD}
    with open(run_dir / "links.csv", newline="") as f:
        for r in csv.DictReader(f):
            a, b = r["a"].rstrip("0123456789"), r["b"].rstrip("0123456789")
            share = float(r["paused_s"]) / duration_s
            if a == "h":
                frames = int(r["tx_frames"])
                small = frames > 0 and int(r["tx_bytes"]) / frames < ALLREDUCE_FRAME_MAX
                groups["held_allreduce_up" if small else "held_congestion_up"].append(share)
            elif (a, b) == ("leaf", "spine"):
                groups["held_leaf_spine"].append(share)
            elif (a, b) == ("spine", "leaf"):
                groups["held_spine_leaf"].append(share)
    return {k: (sum(v) / len(v) if v else math.nan) for k, v in groups.items()}


def draw(fig):
    pts, labels = [], []
    for variant, over, protos in VARIANTS:
        for proto in protos:
            extra = {"workload.hosts.count": fig.cfg["hosts"]}
            if over is not None:
                extra.update(over)
            p = point(proto, congested=over is not None)
            p.update(extra)
            pts.append(p)
            labels.append((variant, proto))
    runs = {labels[r["point"]]: r for r in run_points(fig, pts)}
    table = []
    for variant, _, _ in VARIANTS:
        row: Dict[str, object] = {"variant": variant}
        for proto in PROTOCOLS:
            r, idle = runs.get((variant, proto)), runs[("no congestion", proto)]
            row[f"{proto}_goodput"] = r["goodput_gbps"] if r else math.nan
            row[f"{proto}_loss"] = 100 * (1 - r["goodput_gbps"] / idle["goodput_gbps"]) if r else math.nan
        c = runs[(variant, "canary")]
        own = json.loads((Path(c["dir"]) / "results.json").read_text())["workload"]["canary"]
        row["packets_per_block"] = c["packets_per_block"]
        row["stragglers_per_block"] = c["stragglers"] / own["blocks_per_iteration"]
        row["peak_descriptors"] = own["peak_descriptors"]["max_per_switch"]
        row.update({k: 100 * v for k, v in held_fractions(Path(c["dir"]), c["duration_s"]).items()})
        table.append(row)
        print(f"{variant:18s} " + "  ".join(f"{PROTOCOLS[p]} {row[p + '_goodput']:6.2f} Gb/s "
                                            f"({row[p + '_loss']:5.1f} %)" for p in PROTOCOLS)
              + f"  leader pkts/block {row['packets_per_block']:.2f}, stragglers/block "
              f"{row['stragglers_per_block']:.2f}, held: " + ", ".join(f"{row[k]:.1f} %" for k, _ in HELD))
    metrics = ([(f"{p}_goodput", f"{name}: goodput", "Gb/s") for p, name in PROTOCOLS.items()]
               + [(f"{p}_loss", f"{name}: loss to congestion", "%") for p, name in PROTOCOLS.items()]
               + [("packets_per_block", "Canary: leader packets per block", "packets"),
                  ("stragglers_per_block", "Canary: stragglers per block", "packets"),
                  ("peak_descriptors", "Canary: peak descriptors, busiest switch", "descriptors")]
               + [(k, f"Canary: held by flow control, {name}", "% of the run") for k, name in HELD])
    return fig.bar_table(table, metrics, group="variant", title=(
        f"Canary under congestion: {fig.cfg['hosts']} hosts of {fig.base['name']}, each suspect changed alone, two together"))


main = figscript.entry(STEM, __doc__, "the reduced network, 13 of 128 hosts (about a minute)", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
