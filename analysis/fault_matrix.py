#!/usr/bin/python3
"""Fault matrix: every allreduce protocol under every fault, and what happened.

    /usr/bin/python3 analysis/fault_matrix.py [--out DIR] [--write-doc] [--jobs N]

For each registered allreduce protocol (`inasim protocols --json`: the ring first,
then protocols/<name>/ in folder order) and each fault
(none; loss of 0.01 %, 0.1 %, 1 % and 5 % on every link; the link leaf0-spine0
going down mid-collective; spine0 failing mid-collective, i.e. all its links
down at once; host h0 delayed mid-collective: its frames arrive 50 us late) it runs a reduced scenario (2 leaves x 2 spines x 4 hosts,
100 Gb/s, 1 MiB, a 20 ms simulated-time limit, one run per cell; what each
protocol needs beyond that - short timers, P4SGD's one switch - and the
recovery it claims are its protocol.json's "fault_matrix") with the
`inasim` CLI under a wall-clock limit and classifies the outcome:

  exact        finished, every element checked equals the exact sum
  failed       did not finish by the simulated-time limit (the run says so,
               exit status 1), and no element was wrong: an honest failure
  WRONG        some element differs from the exact sum (must never happen)
  HANG         the process did not end within the wall-clock limit (must never happen)
  ERROR        the process crashed or rejected the scenario

Mid-collective = at 40 % of the protocol's fault-free time (measured in the
same invocation): the workload's time from its start to its end
(sim.end_time_s - workload.start_us; here one collective, P4SGD's whole
training run), the time an `exact` cell shows. Writes OUT/fault_matrix.csv and .md (OUT defaults to
out/fault_matrix); with --write-doc also docs/RELIABILITY.md. Exit status 0
when no cell is WRONG, HANG or ERROR, else 1.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(os.environ.get("INASIM_BIN", ROOT / "build" / "inasim"))
WALL_LIMIT_S = 120

BASE = {
    "name": "fault-matrix",
    "seed": 1,
    "topology": {"type": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 4},
    "links": {"host_rate_gbps": 100},
    "workload": {"type": "allreduce", "bytes": 1048576},
    "stop": {"max_sim_time_ms": 20},
}


def registry() -> list[dict]:
    """The allreduce protocols the binary registers, the ring (the baseline) first."""
    p = subprocess.run([str(BIN), "protocols", "--json"], capture_output=True, text=True, check=True)
    protocols = [m for m in json.loads(p.stdout) if m["workload_type"] == "allreduce"]
    return sorted(protocols, key=lambda m: (not m["default"], m["name"]))  # the default (baseline) first


# What each protocol needs beyond the base, and the recovery it claims (its protocol.json's "fault_matrix").
REGISTRY = registry()
PROTOCOLS = {m["name"]: dict(m["fault_matrix"]["workload"], protocol=m["name"]) for m in REGISTRY}
# A protocol with its own topology (P4SGD: one switch, p4sgd §5.1).
TOPOLOGY = {m["name"]: m["fault_matrix"]["topology"] for m in REGISTRY if "topology" in m["fault_matrix"]}
LOSSES = [0.0001, 0.001, 0.01, 0.05]
FAULTS = ["none"] + [f"loss {p * 100:g} %" for p in LOSSES] + ["link down", "switch down", "host delayed"]
# What each protocol claims to survive (the paper's mechanism), for the table.
CLAIMS = {m["name"]: m["fault_matrix"]["recovery"] for m in REGISTRY}


def scenario(protocol: str, fault: str, at_us: float) -> dict:
    doc = json.loads(json.dumps(BASE))
    doc["name"] = f"fault-{protocol}"
    doc["workload"].update(json.loads(json.dumps(PROTOCOLS[protocol])))
    rack = protocol in TOPOLOGY
    if rack:
        doc["topology"] = dict(TOPOLOGY[protocol])
    if fault.startswith("loss"):
        doc["faults"] = {"loss_rate": float(fault.split()[1]) / 100}
    elif fault == "link down":
        doc["faults"] = {"links": [{"between": ["h0", "tor"] if rack else ["leaf0", "spine0"], "down_at_us": at_us}]}
    elif fault == "switch down":
        ends = [(f"h{i}", "tor") for i in range(TOPOLOGY[protocol]["hosts"])] if rack else \
            [(leaf, "spine0") for leaf in ("leaf0", "leaf1")]
        doc["faults"] = {"links": [{"between": list(e), "down_at_us": at_us} for e in ends]}
    elif fault == "host delayed":
        # A straggler: from mid-collective on, every frame h0 sends arrives 50 us late
        # (50x Canary's switch timeout, ~25 % of a fault-free collective).
        doc["faults"] = {"hosts": [{"host": 0, "delay_us": 50, "at_us": at_us}]}
    return doc


def run(doc: dict) -> dict:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.json"
        path.write_text(json.dumps(doc))
        try:
            p = subprocess.run([str(BIN), "run", str(path), "--out", str(Path(d) / "out"), "--progress", "off",
                                "--quiet"], capture_output=True, text=True, timeout=WALL_LIMIT_S)
        except subprocess.TimeoutExpired:
            return {"outcome": "HANG", "detail": f"no exit within {WALL_LIMIT_S} s of wall time"}
        res = Path(d) / "out" / "results.json"
        if p.returncode not in (0, 1) or not res.exists():
            return {"outcome": "ERROR", "detail": (p.stderr or p.stdout).strip().splitlines()[-1:] or [""]}
        r = json.loads(res.read_text())
    w = r.get("workload", {})
    mism = int(w.get("mismatches", 0))
    checked = int(w.get("elements_checked", 0))
    finished = r.get("sim", {}).get("stopped_by") == "workload_done"
    if mism > 0:
        outcome = "WRONG"
    elif r.get("correct") is True and finished:
        outcome = "exact"
    else:
        outcome = "failed"
    # The workload's time (not mean_duration_s: one P4SGD collective is one 8-element op of its training).
    end_s = r.get("sim", {}).get("end_time_s")
    start_s = r.get("scenario", {}).get("workload", {}).get("start_us", 0) / 1e6
    return {"outcome": outcome, "mismatches": mism, "elements_checked": checked, "finished": finished,
            "time_s": end_s - start_s if finished and end_s is not None else None, "sim_end_s": end_s,
            "drops": r.get("network", {}).get("drops_loss", 0) + r.get("network", {}).get("drops_link_down", 0)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("out") / "fault_matrix")
    ap.add_argument("--write-doc", action="store_true", help="also write docs/RELIABILITY.md")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    if not BIN.exists():
        print(f"fault_matrix: {BIN} is not built (set INASIM_BIN)", file=sys.stderr)
        return 2
    clean = {p: run(scenario(p, "none", 0)) for p in PROTOCOLS}
    cells = {}
    with cf.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        futs = {}
        for p in PROTOCOLS:
            t = clean[p].get("time_s") or 1e-4
            for f in FAULTS[1:]:
                futs[ex.submit(run, scenario(p, f, round(0.4 * t * 1e6, 3)))] = (p, f)
        for fut in cf.as_completed(futs):
            cells[futs[fut]] = fut.result()
    for p in PROTOCOLS:
        cells[(p, "none")] = clean[p]

    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "fault_matrix.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["protocol", "fault", "outcome", "finished", "elements_checked", "mismatches", "time_s"])
        for p in PROTOCOLS:
            for fa in FAULTS:
                c = cells[(p, fa)]
                w.writerow([p, fa, c["outcome"], c.get("finished"), c.get("elements_checked"), c.get("mismatches"),
                            c.get("time_s")])
    lines = ["| protocol | " + " | ".join(FAULTS) + " | recovery it claims |",
             "|---|" + "---|" * len(FAULTS) + "---|"]
    for p in PROTOCOLS:
        row = []
        for fa in FAULTS:
            c = cells[(p, fa)]
            row.append(c["outcome"] + (f" ({c['time_s'] * 1e6:.0f} us)" if c["outcome"] == "exact" and c.get("time_s")
                                       else ""))
        lines.append(f"| {p} | " + " | ".join(row) + f" | {CLAIMS[p]} |")
    table = "\n".join(lines) + "\n"
    (args.out / "fault_matrix.md").write_text(table)
    print(table)
    if args.write_doc:
        doc = (ROOT / "docs" / "RELIABILITY.md")
        text = doc.read_text() if doc.exists() else ""
        begin, end = "<!-- fault-matrix begin -->", "<!-- fault-matrix end -->"
        if begin in text and end in text:
            text = text[:text.index(begin) + len(begin)] + "\n" + table + text[text.index(end):]
            doc.write_text(text)
        else:
            print("fault_matrix: docs/RELIABILITY.md has no fault-matrix markers; not written", file=sys.stderr)
    bad = [f"{p} / {fa}: {cells[(p, fa)]}" for p in PROTOCOLS for fa in FAULTS
           if cells[(p, fa)]["outcome"] in ("WRONG", "HANG", "ERROR")]
    for b in bad:
        print(f"fault_matrix: {b}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
