"""What the Canary figure scripts (analysis/fig_canary_*.py) share on top of
figscript.py: the protocols the paper compares, running their points, and
reading and summarising each run.

    import figscript
    from canaryfig import PROTOCOLS, point, run_points, summarize
    def draw(fig):
        points = [dict(point("canary", workload__hosts__count=64), **{"x.share": 50})]
        runs = run_points(fig, points)
        stats = summarize(runs, lambda r: (r["protocol"], r["meta"]["x.share"]))
    main = figscript.entry(STEM, __doc__, "the reduced sweep (...)", CONFIGS, draw, repetitions=True)

A point is a dict of `--set` overrides (protocol + whatever the figure
varies) plus bookkeeping keys starting with "x." (kept out of the sweep,
handed back with each run as `meta`); every point runs the configuration's
`repetitions` times (--repetitions overrides it) with seeds seed, seed + 1, ...
(each seed is another random placement of the allreduce hosts: the paper's
"5 random placements per point").
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from figscript import FigureRun, correct, num


def _static_trees(n: int) -> Tuple[str, Dict[str, object]]:
    return (f"{n} static tree" + ("s" if n > 1 else ""),
            {"workload.protocol": "static_tree", "workload.canary": None, "workload.static_tree.trees": n,
             "workload.static_tree.roots": "random"})


#: The allreduce algorithms of canary-fgcs24 Sec. 5.2, as overrides of a
#: Canary base scenario: label and overrides. Static trees are rooted at
#: random spines, seeded per run and job ("we also randomly pick the roots").
PROTOCOLS: Dict[str, Tuple[str, Dict[str, object]]] = {
    "canary": ("Canary", {}),
    **{f"st{n}": _static_trees(n) for n in (1, 2, 4, 8)},
    "ring": ("ring allreduce", {"workload.protocol": "ring", "workload.canary": None}),
}

#: Removes the background congestion (null = absent).
NO_CONGESTION = {"background": None}


def point(protocol: str, congested: bool = True, **overrides) -> Dict[str, object]:
    """The overrides of one point: the protocol's, no congestion if asked, then `overrides`
    (keys with "__" for ".", e.g. workload__bytes=1024)."""
    p: Dict[str, object] = {"x.protocol_key": protocol}
    p.update(PROTOCOLS[protocol][1])
    if not congested:
        p.update(NO_CONGESTION)
    for k, v in overrides.items():
        p[k.replace("__", ".")] = v
    return p


def _sweep_points(points: Sequence[Dict[str, object]]) -> List[Dict[str, object]]:
    """The points without our bookkeeping keys (x.*), which are not scenario keys."""
    return [{k: v for k, v in p.items() if not k.startswith("x.")} for p in points]


def run_points(fig: FigureRun, points: Sequence[Dict[str, object]]) -> List[dict]:
    """Runs the points as one sweep (cached under OUT/sweeps/<scenario name>/),
    the configuration's repetitions each. Returns one dict per run with the
    point's bookkeeping and the metrics read by `read_run`; every run that is
    not correct is a failure of the figure."""
    rows = fig.sweep(points=_sweep_points(points), repetitions=fig.cfg["repetitions"])
    runs = [read_run(rec, points[int(rec["point"])]) for rec in rows]
    for message in failures_of(runs):
        fig.fail(message)
    return runs


def read_run(rec: dict, meta: Dict[str, object]) -> dict:
    """One run's numbers: goodput S x 8 / t (every protocol alike), time,
    correctness, mean link utilisation, drops; `meta` is its point."""
    nbytes = num(rec.get("workload.bytes"))
    duration = num(rec.get("workload.mean_duration_s"))
    goodput = nbytes * 8 / duration / 1e9 if duration > 0 else float("nan")
    # The protocol's own keys: workload.canary, workload.static_tree or workload.ring.
    own = "workload." + str(PROTOCOLS[meta["x.protocol_key"]][1].get("workload.protocol", "canary"))
    return {
        "protocol": meta["x.protocol_key"],
        "meta": meta,
        "point": int(rec["point"]),
        "seed": int(rec["seed"]),
        "key": rec["key"],
        "dir": rec["cache_dir"],
        "correct": correct(rec),
        "stopped_by": rec.get("sim.stopped_by"),
        "bytes": nbytes,
        "hosts": num(rec.get("workload.ranks")),
        "duration_s": duration,
        "goodput_gbps": goodput,
        "util_mean": num(rec.get("network.utilization.all_links.mean")),
        "util_switch_mean": num(rec.get("network.utilization.switch_links.mean")),
        "drops_buffer": num(rec.get("network.drops_buffer")),
        "packets_per_block": num(rec.get(f"{own}.leaders.packets_per_block")),
        # §3.2.2's memory: the largest descriptor memory any switch held (Canary only).
        "peak_descriptor_bytes": num(rec.get(f"{own}.peak_descriptors.bytes")),
        "stragglers": num(rec.get(f"{own}.switches.stragglers")),
        "noise_delayed_packets": num(rec.get(f"{own}.hosts.noise_delayed_packets")),
        "packets_sent": num(rec.get(f"{own}.hosts.packets_sent")),
        # workload.jobs > 1: the mean over the jobs, and the slowest and fastest job (Fig. 10a);
        # one job: its goodput (no min/max columns).
        "job_goodput_gbps": num(rec.get("workload.goodput_gbps")),
        "job_goodput_min_gbps": _first_number(rec, "workload.min_goodput_gbps", "workload.goodput_gbps"),
        "job_goodput_max_gbps": _first_number(rec, "workload.max_goodput_gbps", "workload.goodput_gbps"),
    }


def _first_number(rec: dict, *names: str) -> float:
    """The first of `names` that is a number in the row (a one-job run has no min/max columns, or NaN)."""
    for name in names:
        v = num(rec.get(name))
        if not math.isnan(v):
            return v
    return float("nan")


def failures_of(runs: Sequence[dict]) -> List[str]:
    """One message per run that is not correct (the figure must not be used)."""
    return [f"{PROTOCOLS[r['protocol']][0]}, point {r['point']}, seed {r['seed']}: not correct "
            f"(stopped_by={r['stopped_by']})" for r in runs if not r["correct"]]


def summarize(runs: Sequence[dict], key) -> Dict[object, dict]:
    """Groups runs by key(run) and averages over the seeds: goodput (mean,
    min, max), time, utilisation, drops, and whether all were correct."""
    groups: Dict[object, List[dict]] = {}
    for r in runs:
        groups.setdefault(key(r), []).append(r)
    out = {}
    for k, rs in groups.items():
        g = [r["goodput_gbps"] for r in rs]
        out[k] = {
            "runs": len(rs),
            "goodput_gbps": mean(g),
            "goodput_min_gbps": min(g),
            "goodput_max_gbps": max(g),
            "duration_s": mean([r["duration_s"] for r in rs]),
            "util_mean": mean([r["util_mean"] for r in rs]),
            "drops_buffer": sum(r["drops_buffer"] for r in rs),
            "correct": all(r["correct"] for r in rs),
            "hosts": rs[0]["hosts"],
            "bytes": rs[0]["bytes"],
            "packets_per_block": mean([r["packets_per_block"] for r in rs]),
            "peak_descriptor_bytes": max(r["peak_descriptor_bytes"] for r in rs),
        }
    return out


def canary_columns(pts: Sequence[dict]) -> Dict[str, list]:
    """Canary's own CSV columns of a series' points (NaN for the other
    protocols): the leader's packets per block (mean over the seeds, §3.1.4's
    ideal is 1) and the peak descriptor memory of the busiest switch (max
    over the seeds, §3.2.2)."""
    return {"packets_per_block": [p["packets_per_block"] for p in pts],
            "peak_descriptor_bytes": [p["peak_descriptor_bytes"] for p in pts]}


def mean(xs: Sequence[float]) -> float:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


def status(ok: bool) -> str:
    return "correct" if ok else "NOT CORRECT"


#: Bins of the link-utilisation distributions (10 % each).
BINS = 10


def utilization_histogram(run_dir: Path, bins: int = BINS) -> Optional[List[int]]:
    """Link directions per 10 % utilisation bin, from the run's links.csv
    (every link direction, host links included; Canary Fig. 7b / 10b)."""
    import csv

    path = run_dir / "links.csv"
    try:
        with open(path, newline="", encoding="utf-8") as f:
            utils = [float(r["utilization"]) for r in csv.DictReader(f)]
    except OSError:
        return None
    counts = [0] * bins
    for u in utils:
        counts[min(bins - 1, max(0, int(math.floor(u * bins))))] += 1
    return counts


def utilization_line(fig: FigureRun, panel, proto: str, runs: Sequence[dict], where: str, util: float,
                     **columns) -> None:
    """Draws on `panel` the distribution of link utilisation of `runs` (their
    links.csv summed over the seeds) as the line of `proto`, labelled with its
    mean utilisation `util`; a run without links.csv is a failure (`where`:
    what names its point before the seed). The series is named by the
    protocol alone (the paper-claims file points at it); the legend adds the
    mean. `columns`: the point's own CSV columns (one value each, e.g.
    congested=True)."""
    counts = [0] * BINS
    for r in runs:
        h = utilization_histogram(r["dir"], BINS)
        if h is None:
            fig.fail(f"{PROTOCOLS[proto][0]}, {where}seed {r['seed']}: no links.csv in {r['dir']}")
            continue
        counts = [a + b for a, b in zip(counts, h)]
    total = sum(counts) or 1
    lows = [100 * i / BINS for i in range(BINS)]
    panel.line([x + 100 / BINS / 2 for x in lows], [100 * c / total for c in counts], PROTOCOLS[proto][0],
               legend=f"{PROTOCOLS[proto][0]} (mean {util * 100:.1f} %)", columns={
                   "protocol": [proto] * BINS, **{k: [v] * BINS for k, v in columns.items()}, "bin_low_pct": lows,
                   "links": counts, "fraction": [c / total for c in counts], "util_mean": [util] * BINS})


def placements(cfg: dict) -> str:
    """How many placements each point averages, for a title: "mean of 5 placements"."""
    n = cfg["repetitions"]
    return f"mean of {n} placement{'s' if n != 1 else ''}"


def print_point(label: str, where: str, s: dict) -> None:
    print(f"{label:<16s} {where:<28s}: {s['goodput_gbps']:7.2f} Gb/s (min {s['goodput_min_gbps']:6.2f}, max "
          f"{s['goodput_max_gbps']:6.2f}, {s['runs']} runs)  {s['duration_s'] * 1e6:9.1f} us  "
          f"util {s['util_mean'] * 100:5.1f} %  drops {int(s['drops_buffer'])}  {status(s['correct'])}")
