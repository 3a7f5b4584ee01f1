#!/usr/bin/python3
"""Speed and memory benchmarks of INA-Sim, with the stock-ns-3 baseline run in the
same invocation (these machines are noisy: compare ratios, not absolute figures).

  (a) ring allreduce, 4 MiB per host, 1,024 hosts on the 32x32x32 leaf-spine, 100 Gb/s
  (b) k=16 fat tree (1,024 hosts) permutation of 2 MB UDP flows paced at line rate
  (b') the same (b) through stock ns-3: IP routers on every switch, Nix-vector
       routing, PointToPoint devices (bench/stock_ns3_permutation.cc)
  (c) DCTCP background flows, web-search sizes at 40 % load, k=8 fat tree (128 hosts)
  (d) Canary's moving congestion: 512 of 1,024 hosts on the 32x32x32 leaf-spine
  (e) SwitchML Fig. 3 point: 16 workers, 100 Gb/s rack, 100 MB int32 tensor of ones,
       256-element packets, pool 512 (scenarios/switchml/fig3-ate.json); target < 20 s
       and < 500 MB; (e') the ring allreduce of the same tensor on the same rack as
       the baseline in the same invocation
  (f) Canary Fig. 8 point (issue 6): 512 of 1,024 hosts on the 32x32x32 leaf-spine run a
       4 MiB Canary allreduce while the other 512 send 1 MiB line-rate messages to random
       peers, PFC (scenarios/canary/fig8-goodput.json); target < 60 s and < 1 GB
  (g) PANAMA Fig. 8 point, scaled (scenarios/panama/fig8-cluster-scaled.json): k=8 fat
       tree, 128 hosts at 10 Gb/s, DNN jobs at 80 % aggregation load for 10 ms next to
       20 % DCTCP data-mining flows; target < 10 min and < 4 GB; (g') the same point with
       Ring-AllReduce jobs as the baseline in the same invocation
  (p) the SwitchML dataplane model alone (bench/p4model_bench: packets/s, 256 B and
       1024 B modes, 8 workers; target >= 5 M packets/s)

Usage: bench/run_bench.py [--build DIR] [--quick] [--only a,b,stock,c,d,e,f,g,p] [--out DIR]
                          [--against DIR]
--against DIR runs every inasim benchmark a second time, right after the first, with
DIR/inasim (a build of an earlier revision), and reports this build's speed-up and
memory over it per benchmark (rows "<name>_prev", bench.json "ratio_over_against").
--quick runs reduced versions (128 hosts for a/b, 16 for c, 64 for d, a 10 MB tensor
for e, scenarios/canary/fig8-goodput-small.json for f, 16 hosts for g) in about a minute.
Writes DIR/bench.json and DIR/bench.csv and prints a table. MB/s is UDP payload
delivered to receivers per wall-second of the run phase; link MB/s counts every
frame byte sent on every link (the work a packet simulator does).
"""
import argparse
import csv
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run_child(cmd):
    """Runs cmd; returns (stdout, wall seconds, stderr). Peak RSS comes from each
    program's own report (getrusage of itself), so children do not mix."""
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode not in (0, 1):
        sys.stderr.write(p.stderr)
        raise SystemExit(f"bench: {' '.join(cmd)} failed with exit code {p.returncode}")
    return p.stdout, wall, p.stderr


def ours(build, scenario, sets, label, simulator="inasim"):
    with tempfile.TemporaryDirectory() as d:
        out_dir = os.path.join(d, "r")
        cmd = [os.path.join(build, "inasim"), "run", scenario, "--out", out_dir, "--quiet", "--progress", "off"]
        for s in sets:
            cmd += ["--set", s]
        _, wall, _ = run_child(cmd)
        r = json.load(open(os.path.join(out_dir, "results.json")))
    perf, w = r["perf"], r["workload"]
    payload = perf["payload_bytes_per_wall_s"] * perf["run_s"]
    row = {
        "benchmark": label,
        "simulator": simulator,
        "hosts": r["topology"]["hosts"],
        "switches": r["topology"]["switches"],
        "wall_s": perf["wall_s"],
        "setup_s": perf["setup_s"],
        "run_s": perf["run_s"],
        "events": r["sim"]["events"],
        "events_per_s": perf["events_per_s"],
        "sim_time_s": w.get("last_rx_s", r["sim"]["end_time_s"]),
        "payload_bytes": payload,
        "payload_bytes_per_wall_s": perf["payload_bytes_per_wall_s"],
        "host_bytes_per_wall_s": perf["host_bytes_per_wall_s"],
        "link_bytes_per_wall_s": perf["link_bytes_per_wall_s"],
        "peak_rss_mb": perf["peak_rss_mb"],
        # ring: every element exact; permutation: every packet delivered
        "complete": r["correct"],
    }
    if w["type"] == "allreduce" and w.get("protocol") == "canary":
        row["note"] = (f"canary {w['mean_duration_s']*1e3:.3f} ms, {w['goodput_gbps']:.1f} Gb/s goodput, "
                       f"{'exact' if r['correct'] else 'NOT exact'}")
    elif w["type"] == "allreduce" and "cluster" in w.get("panama", {}):
        c = w["panama"]["cluster"]
        row["note"] = (f"{c['allreduce']} cluster: {c['finished_jobs']}/{len(c['jobs'])} jobs at "
                       f"{c['arrival_rate_per_s']:.0f}/s, mean JCT {c['mean_jct_s']*1e3:.3f} ms")
    elif w["type"] == "allreduce" and w.get("protocol") == "switchml":
        sml = w["switchml"]  # (its keys moved under workload.switchml with the protocol seam)
        row["note"] = (f"switchml TAT {sml['tat_mean_s']*1e3:.3f} ms, {sml['ate_per_s']:.3e} ATE/s "
                       f"({100*sml['ate_bound_ratio']:.1f} % of the framing bound)")
    elif w["type"] == "allreduce":
        bound = w.get(w.get("protocol", ""), {}).get("analytic_bound_s", float("nan"))  # workload.<protocol>
        row["note"] = f"allreduce {w['mean_duration_s']*1e3:.3f} ms, bound {bound*1e3:.3f} ms"
    elif w["type"] == "permutation":
        row["note"] = f"{w['packets_received']}/{w['packets_expected']} packets"
    else:
        row["note"] = f"{r['sim']['end_time_s']*1e3:.3f} ms simulated"
    bg = r.get("background", {})
    if "flows" in bg:
        f = bg["flows"]
        sd = f["fct"]["all"]["slowdown"] or {}
        row["complete"] = f["incomplete"] == 0
        row["note"] += (f"; {f['completed']}/{f['flows']} flows, offered load {f['offered_load']:.3f}, "
                        f"slowdown p50 {sd.get('median', 0):.2f} p99 {sd.get('p99', 0):.2f}")
    if "congestion" in bg:
        c = bg["congestion"]
        row["note"] += f"; congestion {c['payload_bytes_sent']/1e6:.0f} MB sent, {100*c['delivered_fraction']:.1f} % delivered"
    return row


def stock(build, k, flow_bytes):
    out, wall, _ = run_child([os.path.join(build, "bench", "stock_ns3_permutation"), f"--k={k}",
                              f"--flow_bytes={flow_bytes}"])
    s = json.loads(out.strip().splitlines()[-1])
    return {
        "benchmark": "b_stock",
        "simulator": "stock-ns3-nix",
        "hosts": s["hosts"],
        "switches": s["switches"],
        "wall_s": s["wall_s"],
        "setup_s": s["setup_s"],
        "run_s": s["run_s"],
        "events": s["events"],
        "events_per_s": s["events_per_s"],
        "sim_time_s": s["sim_time_s"],
        "payload_bytes": s["delivered_bytes"],
        "payload_bytes_per_wall_s": s["delivered_bytes_per_wall_s"],
        "host_bytes_per_wall_s": None,
        "link_bytes_per_wall_s": s["link_bytes_per_wall_s"],
        "peak_rss_mb": s["peak_rss_mb"],
        "complete": s["completed"],
        "note": f"{s['received_packets']}/{s['sent_packets']} packets",
    }


def dataplane(build, packets):
    out, wall, _ = run_child([os.path.join(build, "bench", "p4model_bench"), "--workers", "8",
                              "--packets", str(packets)])
    rows = []
    for line in out.strip().splitlines():
        d = json.loads(line)
        pps = d["packets_per_s"]
        rows.append({
            "benchmark": f"p_dataplane_{d['mode_bytes']}B",
            "simulator": "p4model", "hosts": 8, "switches": 1,
            "wall_s": d["seconds"], "setup_s": 0.0, "run_s": d["seconds"],
            "events": d["packets"], "events_per_s": pps, "sim_time_s": 0.0,
            "payload_bytes": 0, "payload_bytes_per_wall_s": 0.0, "host_bytes_per_wall_s": None,
            "link_bytes_per_wall_s": 0.0, "peak_rss_mb": 0.0, "complete": True,
            "note": f"{pps/1e6:.2f} M packets/s (target 5)",
        })
    return rows


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--quick", action="store_true", help="128-host versions")
    ap.add_argument("--only", default="a,b,stock,c,d,e,f,g,p")
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "bench"))
    ap.add_argument("--against", metavar="DIR", help="a build of an earlier revision to compare with, run by run")
    args = ap.parse_args()
    if args.against and not os.access(os.path.join(args.against, "inasim"), os.X_OK):
        ap.error(f"--against: {args.against}/inasim is not an executable")
    return args


def say(what):
    print(f"bench: {what} ...", file=sys.stderr, flush=True)


def inasim_runs(quick, k):
    """Every run of inasim, in run order: (--only letter, what it is, scenario, --set overrides, row label)."""
    def scenario(folder, quick_name, full_name):
        return os.path.join(ROOT, "scenarios", folder, quick_name if quick else full_name)

    ring = os.path.join(HERE, "scenarios", "ring-leafspine-1024.json")
    ring_sets = ['topology={"type":"leaf_spine","leaves":8,"spines":8,"hosts_per_leaf":16}'] if quick else []
    fig3 = os.path.join(ROOT, "scenarios", "switchml", "fig3-ate.json")
    fig3_sets = ["workload.bytes=10000000"] if quick else []
    fig8 = scenario("panama", "fig8-cluster-small.json", "fig8-cluster-scaled.json")
    return [
        ("a", "(a) ring allreduce", ring, ring_sets, "a_ring"),
        ("b", "(b) permutation, inasim", os.path.join(HERE, "scenarios", "permutation-k16.json"),
         [f"topology.k={k}"], "b_permutation"),
        ("c", "(c) DCTCP web-search flows at 40 % load",
         scenario("background", "fct-websearch-fat-tree-16.json", "fct-websearch-fat-tree-128.json"), [],
         "c_fct_websearch"),
        ("d", "(d) Canary moving congestion",
         scenario("background", "canary-congestion-64.json", "canary-congestion-1024.json"), [], "d_congestion"),
        ("e", "(e) SwitchML Fig. 3 point, 16 workers", fig3, fig3_sets, "e_switchml"),
        ("e", "(e') ring allreduce of the same tensor", fig3,
         fig3_sets + ["workload.protocol=ring", "workload.switchml=null"], "e_ring"),
        ("f", "(f) Canary Fig. 8 point with moving congestion",
         scenario("canary", "fig8-goodput-small.json", "fig8-goodput.json"), [], "f_canary_fig8"),
        ("g", "(g) PANAMA Fig. 8 point, 80 % aggregation load", fig8, [], "g_panama_fig8"),
        ("g", "(g') the same point with Ring-AllReduce jobs", fig8, ['workload.panama.cluster.allreduce="ring"'],
         "g_ring_fig8"),
    ]


def run_benchmarks(args):
    """The rows of the benchmarks --only selects, in run order."""
    only = set(args.only.split(","))
    k = 8 if args.quick else 16
    rows = []
    for letter, what, scenario, sets, label in inasim_runs(args.quick, k):
        if letter in only:
            say(what)
            rows.append(ours(args.build, scenario, sets, label))
            if args.against:
                say(what + ", earlier build")
                rows.append(ours(args.against, scenario, sets, label + "_prev", "inasim-against"))
    if "p" in only:
        say("(p) SwitchML dataplane model alone")
        rows.extend(dataplane(args.build, 200000 if args.quick else 1000000))
    if "stock" in only:
        say("(b) permutation, stock ns-3")
        rows.append(stock(args.build, k, 2000000))
    return rows


def stock_ratio(by):
    """inasim over stock ns-3 on (b), or None when either did not run."""
    if "b_permutation" not in by or "b_stock" not in by:
        return None
    o, s = by["b_permutation"], by["b_stock"]
    return {
        "payload_bytes_per_wall_s": o["payload_bytes_per_wall_s"] / s["payload_bytes_per_wall_s"],
        "link_bytes_per_wall_s": o["link_bytes_per_wall_s"] / s["link_bytes_per_wall_s"],
        "run_s": s["run_s"] / o["run_s"],
        "peak_rss": s["peak_rss_mb"] / o["peak_rss_mb"],
    }


#: Pairs run in the same invocation, compared: (row, baseline row, bench.json key, ratio, the printed line).
PAIRS = [
    ("e_switchml", "e_ring", "ratio_switchml_over_ring",
     lambda e, g: {"sim_time_per_wall_s": (e["sim_time_s"] / e["run_s"]) / (g["sim_time_s"] / g["run_s"]),
                   "payload_bytes_per_wall_s": e["payload_bytes_per_wall_s"] / g["payload_bytes_per_wall_s"]},
     lambda r: (f"switchml / ring on (e): {r['payload_bytes_per_wall_s']:.2f}x payload bytes per wall-second, "
                f"{r['sim_time_per_wall_s']:.2f}x simulated time per wall-second")),
    ("g_panama_fig8", "g_ring_fig8", "ratio_panama_over_ring_fig8",
     lambda f_, g: {"wall_s": g["wall_s"] / f_["wall_s"],
                    "link_bytes_per_wall_s": f_["link_bytes_per_wall_s"] / g["link_bytes_per_wall_s"]},
     lambda r: (f"panama / ring on (g): {r['wall_s']:.2f}x shorter wall time, "
                f"{r['link_bytes_per_wall_s']:.2f}x link bytes per wall-second")),
]


def against_ratios(by):
    """Per benchmark run with --against: this build over the earlier one."""
    out = {}
    for name, new in by.items():
        old = by.get(name + "_prev")
        if old:
            out[name] = {"wall_speedup": old["wall_s"] / new["wall_s"], "run_speedup": old["run_s"] / new["run_s"],
                         "events_ratio": new["events"] / old["events"],
                         "peak_rss_mb": new["peak_rss_mb"], "peak_rss_mb_against": old["peak_rss_mb"]}
    return out


def write_json(out, doc):
    with open(os.path.join(out, "bench.json"), "w") as f:
        json.dump(doc, f, indent=2)


def write_results(args, rows, ratio):
    """Sorts the rows, writes OUT/bench.json and OUT/bench.csv; the JSON document."""
    os.makedirs(args.out, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    order = {"a_ring": 0, "b_permutation": 1, "b_stock": 2, "c_fct_websearch": 3, "d_congestion": 4,
             "e_switchml": 5, "e_ring": 6, "f_canary_fig8": 7, "g_panama_fig8": 8, "g_ring_fig8": 9}
    rows.sort(key=lambda r: (order.get(r["benchmark"].removesuffix("_prev"), 9), r["benchmark"]))
    rev = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True, text=True).stdout.strip()
    doc = {"when": stamp, "revision": rev, "quick": args.quick, "rows": rows, "ratio_inasim_over_stock": ratio}
    write_json(args.out, doc)
    with open(os.path.join(args.out, "bench.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    return doc


def print_table(rows):
    print(f"{'benchmark':<24}{'simulator':<16}{'hosts':>6}{'wall s':>9}{'run s':>9}{'Mevents/s':>10}"
          f"{'MB/s':>9}{'link MB/s':>10}{'RSS MB':>8}  note")
    for r in rows:
        print(f"{r['benchmark']:<24}{r['simulator']:<16}{r['hosts']:>6}{r['wall_s']:>9.2f}{r['run_s']:>9.2f}"
              f"{r['events_per_s']/1e6:>10.3f}{r['payload_bytes_per_wall_s']/1e6:>9.1f}"
              f"{r['link_bytes_per_wall_s']/1e6:>10.1f}{r['peak_rss_mb']:>8.0f}  {r['note']}")


def main():
    args = parse_args()
    rows = run_benchmarks(args)
    by = {r["benchmark"]: r for r in rows}
    ratio = stock_ratio(by)
    doc = write_results(args, rows, ratio)
    print_table(rows)
    for name, baseline, key, compute, line in PAIRS:
        if name in by and baseline in by:
            doc[key] = compute(by[name], by[baseline])
            write_json(args.out, doc)
            print(line(doc[key]))
    if args.against:
        doc["against"] = {"build": os.path.abspath(args.against), "ratios": against_ratios(by)}
        write_json(args.out, doc)
        for name, r in doc["against"]["ratios"].items():
            print(f"{name}: {r['wall_speedup']:.2f}x faster wall ({r['run_speedup']:.2f}x run phase) than "
                  f"{args.against}; peak RSS {r['peak_rss_mb']:.0f} MB vs {r['peak_rss_mb_against']:.0f} MB")
    if ratio:
        print(f"inasim / stock ns-3 on (b): {ratio['payload_bytes_per_wall_s']:.2f}x delivered payload bytes per "
              f"wall-second, {ratio['link_bytes_per_wall_s']:.2f}x bytes carried on links per wall-second, "
              f"{ratio['run_s']:.2f}x shorter run, {ratio['peak_rss']:.2f}x less peak memory")
    print(f"bench: wrote {args.out}/bench.json and bench.csv", file=sys.stderr)


if __name__ == "__main__":
    main()
