#!/usr/bin/python3
"""SwitchML beyond a rack (paper section 7): hierarchical aggregation vs one rack.

    /usr/bin/python3 analysis/fig_switchml_hierarchy.py [--small] [--out DIR] [--jobs N] [--resume]

Runs the two-level leaf-spine scenarios scenarios/switchml/hierarchical-64.json
(8 racks x 8 workers, 16 MB) and hierarchical-256.json (16 racks x 16
workers, 8 MB), each next to one rack of its rack size with the same tensor
(the same scenario with topology single_rack of 8, resp. 16, hosts): a single
switch cannot aggregate 64 or 256 workers (its worker bitmap has 32 bits), so
"the same worker count on one rack" is the single-rack bound, not a run.
--small: hierarchical-64.json with a leaf_spine of 4 leaves x 4 hosts (2
spines) and a 2 MB tensor, next to a rack of 4 (a few seconds). Two panels,
x = workers, one line per tensor (one rack -> the hierarchy):

  (a) ATE/s with the single-rack goodput bound from framing, B/8/1100 B x 256
      elements/s (`workload.switchml.ate_per_s_bound`; it does not depend on the
      worker count), dashed;
  (b) TAT with each tensor's framing bound (`framing_bound_s`), dashed.

Every level's program counters (`workload.switchml.programs`: per switch processed,
consumed, partials_up, results_down, broadcasts, copies_sent, retransmits)
are summed per configuration and level into a table, printed and written to
OUT/fig_switchml_hierarchy_programs.csv. Without loss each non-root switch
sends one partial up and receives one result down per packet of the tensor,
and the root broadcasts once per packet; the script checks that.

Writes OUT/fig_switchml_hierarchy.png and .csv (plot.py conventions; per-point
columns config, topology, workers, racks, levels, bytes, ate_per_s,
ate_per_s_bound, tat_s, framing_bound_s) and keeps every run under
OUT/sweeps/<scenario name>/. OUT defaults to out/figures
(out/figures/small with --small).

Prints one line per configuration, then the table. Exit status: 0 ok; 1 a run
failed, was not correct, is above its bound, or its counters disagree; 2 bad
input.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from figscript import ROOT, num  # noqa: E402

SM = ROOT / "scenarios" / "switchml"
#: One group per tensor: a base scenario (+ fixed overrides) run as its
#: leaf-spine and as one rack of `rack` hosts.
CONFIGS = {
    "full": {
        "groups": [
            {"scenario": SM / "hierarchical-64.json", "set": [], "rack": 8},
            {"scenario": SM / "hierarchical-256.json", "set": [], "rack": 16},
        ],
    },
    "small": {
        "groups": [
            {"scenario": SM / "hierarchical-64.json", "name": "switchml-hierarchical-small", "rack": 4,
             "set": ['topology={"type": "leaf_spine", "leaves": 4, "spines": 2, "hosts_per_leaf": 4}',
                     "workload.bytes=2000000"]},
        ],
    },
}
COUNTERS = ["processed", "consumed", "partials_up", "results_down", "broadcasts", "copies_sent", "retransmits",
            "dropped_duplicates"]
STEM = "fig_switchml_hierarchy"


def human_mb(b: int) -> str:
    return f"{b / 1e6:g} MB"


def draw(fig):
    groups = []  # per tensor: list of config dicts (rack first, then the hierarchy)
    table = []  # per configuration and level
    for grp in fig.cfg["groups"]:
        base = fig.validate(grp["scenario"], sets=grp["set"])
        rack = {"type": "single_rack", "hosts": grp["rack"]}
        rows = fig.sweep(grp.get("name", base["name"]), points=[{"topology": rack}, {"topology": base["topology"]}],
                         scenario=grp["scenario"], sets=grp["set"])
        configs = []
        for row in rows:
            results = json.loads((row["cache_dir"] / "results.json").read_text(encoding="utf-8"))
            c = check_config(fig, row, results, base)
            configs.append(c)
            table.extend(check_levels(fig, c, results, base))
        groups.append(configs)
    table_path = write_table(fig.out, table)
    return plot_groups(fig, groups) + (table_path,)


def check_config(fig, row, results, base):
    """One run (a rack or a leaf-spine): its ATE/s, bound, TAT and levels,
    checked and printed."""
    t = row["topology"]
    t = json.loads(t) if isinstance(t, str) else t
    if t["type"] == "single_rack":
        racks, per = 1, int(t["hosts"])
        label = f"rack of {per}"
    else:
        racks, per = int(t["leaves"]), int(t["hosts_per_leaf"])
        label = f"{racks}x{per} leaf-spine"
    n = racks * per
    size = int(base["workload"]["bytes"])
    k = int(base["workload"]["switchml"]["elements_per_packet"])
    where = f"{label}, {human_mb(size)}"
    correct = fig.check(row, where)
    if row.get("workload.ranks") != n:
        fig.fail(f"{where}: ran {row.get('workload.ranks')} ranks, expected {n}")
    w = results["workload"]["switchml"]
    coll = results["workload"]["collectives"][-1]
    c = {"config": label, "topology": t["type"], "workers": n, "racks": racks, "bytes": size,
         "levels": int(w["tree"]["levels"]), "ate": num(w["ate_per_s"]),
         "bound": num(w["ate_per_s_bound"]), "tat": num(w["tat_mean_s"]),
         "fb": num(coll["framing_bound_s"]), "correct": correct, "where": where}
    expect_bound = float(base["links"]["host_rate_gbps"]) * 1e9 / 8 / (4 * k + 76) * k
    if not math.isclose(c["bound"], expect_bound, rel_tol=1e-9):
        fig.fail(f"{where}: ATE/s bound {c['bound']!r} != B/8/(4k+76)*k = {expect_bound!r}")
    if c["ate"] > c["bound"] * (1 + 1e-9):
        fig.fail(f"{where}: ATE/s {c['ate']!r} above the bound {c['bound']!r}")
    expect_levels = 1 if racks == 1 else 2
    if c["levels"] != expect_levels:
        fig.fail(f"{where}: {c['levels']} aggregation levels, expected {expect_levels}")
    status = "correct" if correct else "NOT CORRECT"
    print(f"{label:<18s} {n:>4d} workers, {human_mb(size):>6s}: ATE/s {c['ate'] / 1e9:7.4f}e9  "
          f"bound {c['bound'] / 1e9:7.4f}e9  ATE/bound {c['ate'] / c['bound']:6.4f}  "
          f"TAT {c['tat'] * 1e3:8.4f} ms  TAT/framing bound {c['tat'] / c['fb']:6.4f}  "
          f"levels {c['levels']}  {status}")
    return c


def slice_packets(elements: int, k: int, threads: int) -> int:
    """Packets per worker: each DPDK thread packetizes its slice on its own
    (fifo_scheduler.cc:93-108: the first elements % threads slices one longer)."""
    q, r = divmod(elements, threads)
    return sum(math.ceil((q + (t < r)) / k) for t in range(threads))


def check_levels(fig, c, results, base):
    """The run's program counters summed per level (rows of the table);
    without loss, each non-root switch sends one partial up and gets one
    result down per packet, and the root broadcasts once per packet."""
    size = int(base["workload"]["bytes"])
    k = int(base["workload"]["switchml"]["elements_per_packet"])
    threads = int(results["workload"]["switchml"].get("host", {}).get("worker_threads", 1))
    packets = slice_packets(size // 4, k, threads)
    lossless = float(results["scenario"].get("faults", {}).get("loss_rate", 0) or 0) == 0
    by_level = {}
    for prog in results["workload"]["switchml"].get("programs", []):
        lv = by_level.setdefault(int(prog["level"]), {"switches": 0, "root": False, "children": set(),
                                                      **{x: 0 for x in COUNTERS}})
        lv["switches"] += 1
        lv["root"] = lv["root"] or bool(prog.get("root"))
        lv["children"].add(int(prog.get("workers", 0)))
        for x in COUNTERS:
            lv[x] += int(prog.get(x, 0))
    entries = []
    for level in sorted(by_level):
        lv = by_level[level]
        entries.append({"config": c["config"], "bytes": size, "workers": c["workers"], "level": level,
                        "switches": lv["switches"], "root": lv["root"],
                        "children_per_switch": "/".join(str(x) for x in sorted(lv["children"])),
                        **{x: lv[x] for x in COUNTERS}})
        if not lossless:
            continue
        if lv["root"]:
            if lv["broadcasts"] != packets:
                fig.fail(f"{c['where']}: root broadcasts {lv['broadcasts']} != {packets} packets")
        else:
            for x in ("partials_up", "results_down"):
                if lv[x] != packets * lv["switches"]:
                    fig.fail(f"{c['where']}: level {level} {x} {lv[x]} != {packets} x {lv['switches']} switches")
    return entries


def write_table(out, table):
    """Prints the counters table and writes it to OUT/<stem>_programs.csv; its path."""
    cols = ["config", "bytes", "workers", "level", "switches", "root", "children_per_switch"] + COUNTERS
    print("program counters per level (summed over the level's switches):")
    print("| " + " | ".join(cols) + " |")
    print("|" + "|".join("---" for _ in cols) + "|")
    for e in table:
        print("| " + " | ".join(str(e[c]) for c in cols) + " |")
    buf = io.StringIO()
    wr = csv.writer(buf, lineterminator="\n")
    wr.writerow(cols)
    for e in table:
        wr.writerow(["true" if e[c] is True else "false" if e[c] is False else e[c] for c in cols])
    out.mkdir(parents=True, exist_ok=True)
    table_path = out / f"{STEM}_programs.csv"
    tmp = table_path.with_name(f".{table_path.name}.tmp-{os.getpid()}")
    tmp.write_text(buf.getvalue(), encoding="utf-8")
    os.replace(tmp, table_path)
    return table_path


def plot_groups(fig, groups):
    """The figure: one line per tensor, one rack -> the hierarchy; (a) ATE/s,
    (b) TAT. The paths of its PNG and CSV."""
    plot = fig.plot
    fa = plot.Figure("ATE/s: one rack vs two levels", "workers", "ATE/s", "count", "10⁹ elements/s", logx=2,
                     legend_loc="lower right")
    fb = plot.Figure("TAT: one rack vs two levels", "workers", "TAT", "count", "ms", logx=2,
                     legend_loc="lower right")
    xs_all = sorted({c["workers"] for g in groups for c in g})
    for g in groups:
        xs = [c["workers"] for c in g]
        label = f"{human_mb(g[0]['bytes'])}: {' → '.join(c['config'] for c in g)}"
        columns = {x: [c[y] for c in g] for x, y in (
            ("config", "config"), ("topology", "topology"), ("workers", "workers"), ("racks", "racks"),
            ("levels", "levels"), ("bytes", "bytes"), ("ate_per_s", "ate"), ("ate_per_s_bound", "bound"),
            ("tat_s", "tat"), ("framing_bound_s", "fb"))}
        fa.line(xs, [c["ate"] / 1e9 for c in g], label, columns=columns)
        col = fb.line(xs, [c["tat"] * 1e3 for c in g], label, columns=columns)
        fb.bound(xs, [c["fb"] * 1e3 for c in g], f"framing bound {human_mb(g[0]['bytes'])}", color=col,
                 columns={"workers": xs, "bytes": [c["bytes"] for c in g],
                          "framing_bound_s": [c["fb"] for c in g]})
    bound = groups[0][0]["bound"]
    fa.bound([min(xs_all), max(xs_all)], [bound / 1e9] * 2, "single-rack bound",
             legend="goodput bound from framing (93 %)", columns={"ate_per_s_bound": [bound] * 2})
    fa.xticks(xs_all)
    fa.ylim(bottom=0, top=bound / 1e9 * 1.3)
    fb.xticks(xs_all)
    fb.ylim(bottom=0)
    return fig.save_panels([fa, fb],
                            title="SwitchML hierarchical aggregation (leaf-spine, 100 Gb/s) vs one rack")


main = figscript.entry(STEM, __doc__, "the reduced variant (2 runs, a few seconds)", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
