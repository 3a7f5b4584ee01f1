#!/usr/bin/python3
"""SwitchML Fig. 3: aggregated tensor elements per second (ATE/s) vs workers.

    /usr/bin/python3 analysis/fig_switchml_ate.py [--small] [--out DIR] [--jobs N] [--resume]

Sweeps SwitchML on one rack (scenarios/switchml/fig3-ate.json: 100 MB int32
tensors of all ones, verified) over workers n in {4, 8, 16} x host link rate
{10, 100} Gb/s x elements per packet k in {64, 256}, with the pool size of
appendix C (128 slots at 10 Gb/s, 512 at 100 Gb/s), SwitchML's workers the
DPDK host (workload.switchml.backend), and runs three host ring allreduces
on the same rack and tensor, each with its own defaults: Gloo over TCP
(protocol "gloo"), NCCL over RoCE (protocol "nccl"; the paper's "NCCL with
RDMA"), NCCL over TCP (workload.nccl.transport "tcp"; "NCCL with TCP") and
the ideal UDP ring ("ring": no host cost, the bound), and
SwitchML's RDMA backend (k = 256, workload.switchml.backend "rdma": RDMA
UC writes of 16-packet messages, one queue pair per message in flight), and
SwitchML's parameter-server baseline (k = 256, workload.switchml.ps):
n PS processes with 8 lcores each on n more hosts of the rack ("PS
dedicated") or on the workers ("PS co-located"), running the switch's
program in software at the workers' packet cost.
--small: scenarios/switchml/fig3-ate-small.json (4 MB hashed tensors), n in
{4, 8} at 100 Gb/s only, a few seconds. One panel per rate:

  ATE/s vs workers for SwitchML k=64, k=256 and the host rings, with the goodput
  limit from framing for each k dashed in the same colour:
  ATE/s bound = B / 8 / (4k + 76) * k (B = host link rate; 76 B of framing:
  SwitchML 10 + UDP 8 + IPv4 20 + Ethernet 14 + preamble/FCS/IFG 24), and
  the RDMA variant's from its own framing (every packet BTH 12 + ICRC 4
instead of the SwitchML header's 10, a message's first packet RETH 16 and its
last an immediate 4), the rings' bandwidth bound n / (2(n-1)) * B / 32 elements/s (their payload
  bound 2(n-1)/n * S/B, `workload.<protocol>.analytic_bound_s`).

ATE/s = tensor elements / TAT (`workload.switchml.ate_per_s` for SwitchML, its
TAT `workload.switchml.tat_mean_s`; elements / `workload.mean_duration_s` for
the rings). The bounds and the goodput
fractions from framing, 4k / (4k + 76) = 63 / 77 / 93 % for k = 32 / 64 /
256, are computed here and cross-checked against the simulator's
`workload.switchml.ate_per_s_bound` and
`workload.switchml.goodput_fraction_from_framing`.

Writes OUT/fig_switchml_ate.png and .csv (plot.py conventions; per-point
columns rate_gbps, workers, k, pool_size, protocol, ate_per_s, tat_s,
bound_ate_per_s, ratio) and keeps every run under OUT/sweeps/<scenario
name>/. OUT defaults to out/figures (out/figures/small with --small).

Prints the framing fractions, then one line per point (ATE/s, bound,
ATE/bound). Exit status: 0 ok; 1 a run failed, was not correct, or
disagrees with its bound; 2 bad input.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from figscript import ROOT, num, paper_value, switchml_wire_bytes  # noqa: E402

CONFIGS = {
    "full": {
        "scenario": ROOT / "scenarios" / "switchml" / "fig3-ate.json",
        "workers": [4, 8, 16],
        "rates": [10, 100],
    },
    "small": {
        "scenario": ROOT / "scenarios" / "switchml" / "fig3-ate-small.json",
        "workers": [4, 8],
        "rates": [100],
    },
}
KS = [64, 256]
#: Appendix C: pool size per host link rate (Gb/s).
POOL = {10: 128, 100: 512}
STEM = "fig_switchml_ate"

#: Per-packet framing around the 4k payload bytes: SwitchML header, UDP, IPv4,
#: Ethernet header, and preamble + FCS + inter-frame gap on the wire.
OVERHEAD_BYTES = switchml_wire_bytes(0)  # 76: switchml 10, UDP 8, IPv4 20, Ethernet 14, preamble/FCS/gap 24
#: The paper's goodput from framing (section 5): k -> fraction.
PAPER_FRACTIONS = {k: paper_value("switchml", f"sec5-goodput-{k}") / 100 for k in (32, 64, 256)}


def goodput_fraction(k: int) -> float:
    """Payload share of a k-element int32 packet on the wire: 4k / (4k + 76)."""
    return 4.0 * k / (4.0 * k + OVERHEAD_BYTES)


def ate_bound(k: int, rate_gbps: float) -> float:
    """Elements per second when every packet goes at line rate: B/8/(4k+76)*k."""
    return rate_gbps * 1e9 / 8.0 / (4.0 * k + OVERHEAD_BYTES) * k


#: RDMA packets per message (workload.switchml.rdma_message_packets' default,
#: "generally 16 packets per message", switchml-nsdi21.txt:432).
RDMA_PPM = 16
#: Per-packet framing of an RDMA write packet: BTH 12, ICRC 4, UDP 8, IPv4 20,
#: Ethernet 14, preamble/FCS/gap 24; per message RETH 16 + immediate 4.
RDMA_PACKET_OVERHEAD = OVERHEAD_BYTES - 10 + 12 + 4
RDMA_MESSAGE_OVERHEAD = 16 + 4


def rdma_ate_bound(k: int, rate_gbps: float, ppm: int = RDMA_PPM) -> float:
    """Elements per second of RDMA messages at line rate."""
    wire = ppm * (4.0 * k + RDMA_PACKET_OVERHEAD) + RDMA_MESSAGE_OVERHEAD
    return rate_gbps * 1e9 / 8.0 / wire * ppm * k


def g(v: float) -> float:
    """ATE/s -> 10^9 elements/s (the y unit), 12 significant digits."""
    return float(f"{v / 1e9:.12g}")


def draw(fig):
    workers, rates = fig.cfg["workers"], fig.cfg["rates"]
    size = int(fig.base["workload"]["bytes"])
    print("goodput from framing, 4k/(4k+76): " + ", ".join(
        f"k={k}: {goodput_fraction(k) * 100:.1f} % (paper {PAPER_FRACTIONS[k] * 100:.0f} %)"
        for k in sorted(PAPER_FRACTIONS)))
    res = {}  # (rate, n, series) -> dict; series is k (int) or "ring"
    for row in fig.sweep(points=sweep_points(rates, workers)):
        # workers: the ranks (a dedicated PS run has twice as many hosts)
        rate, n = int(row["links.host_rate_gbps"]), int(row["workload.ranks"])
        res[(rate, n, series_key(row))] = check_point(fig, row, rate, n, size)
    return fig.save_panels(
        [rate_panel(fig.plot, res, rate, workers) for rate in rates],
        title=f"SwitchML ATE/s vs workers, {size / 1e6:g} MB int32 tensor (dashed: goodput limits)")


#: The host ring allreduces beside SwitchML (docs/research/baselines.md): the
#: ideal UDP ring (the bound), Gloo over TCP, NCCL over RoCE.
HOST_RINGS = {"ring": "ring allreduce", "gloo": "Gloo (TCP)", "nccl": "NCCL (RoCE)", "nccl_tcp": "NCCL (TCP)"}
#: A host ring's series key -> (protocol, extra sweep keys).
RING_RUNS = {"ring": ("ring", {}), "gloo": ("gloo", {}), "nccl": ("nccl", {}),
             "nccl_tcp": ("nccl", {"workload.nccl.transport": "tcp"})}
#: SwitchML's RDMA backend (k = 256).
RDMA = {"rdma": "SwitchML RDMA k=256"}
#: SwitchML's parameter-server baseline (k = 256): n PS processes on n more
#: hosts of the rack, or on the workers (workload.switchml.ps).
PS = {"ps_dedicated": "PS dedicated", "ps_colocated": "PS co-located"}


def sweep_points(rates, workers):
    """SwitchML per (rate, workers, k), then the host rings per (rate, workers)."""
    points = []
    for r in rates:
        for n in workers:
            for k in KS:
                points.append({"links.host_rate_gbps": r, "topology.hosts": n, "workload.protocol": "switchml",
                               "workload.switchml.elements_per_packet": k, "workload.switchml.pool_size": POOL[r]})
            points.append({"links.host_rate_gbps": r, "topology.hosts": n, "workload.protocol": "switchml",
                           "workload.switchml.elements_per_packet": 256, "workload.switchml.pool_size": POOL[r],
                           "workload.switchml.backend": "rdma"})
            for key in HOST_RINGS:
                proto, extra = RING_RUNS[key]
                points.append({"links.host_rate_gbps": r, "topology.hosts": n, "workload.protocol": proto,
                               "workload.switchml": None, **extra})
            for key in PS:
                placement = key.removeprefix("ps_")
                points.append({"links.host_rate_gbps": r, "topology.hosts": 2 * n if placement == "dedicated" else n,
                               "workload.hosts": {"count": n, "placement": "first"}, "workload.protocol": "switchml",
                               "workload.switchml.elements_per_packet": 256, "workload.switchml.pool_size": POOL[r],
                               "workload.switchml.ps": placement})
    return points


def series_key(row):
    """The series a run belongs to: SwitchML's k, or the host ring's protocol."""
    p = row["workload.protocol"]
    ps = row.get("workload.switchml.ps")
    if p == "switchml" and isinstance(ps, str) and ps != "none":
        return "ps_" + ps
    if p == "switchml" and row.get("workload.switchml.backend") == "rdma":
        return "rdma"
    if p == "nccl" and row.get("workload.nccl.transport") == "tcp":
        return "nccl_tcp"
    return int(row["workload.switchml.elements_per_packet"]) if p == "switchml" else p


def check_switchml(fig, row, where, k, rate, tat, elements, rdma=False):
    """SwitchML's ATE/s and its bound, checked against the simulator's
    bound, framing fraction, pool size and k."""
    ate = num(row.get("workload.switchml.ate_per_s"))
    bound = rdma_ate_bound(k, rate) if rdma else ate_bound(k, rate)
    reported = num(row.get("workload.switchml.ate_per_s_bound"))
    if not math.isclose(reported, bound, rel_tol=1e-9):
        fig.fail(f"{where}: simulator's ATE/s bound {reported!r} != the framing bound {bound!r}")
    frac = num(row.get("workload.switchml.goodput_fraction_from_framing"))
    want = bound * 32.0 / (rate * 1e9)
    if not math.isclose(frac, want, rel_tol=1e-9):
        fig.fail(f"{where}: simulator's goodput fraction {frac!r} != {want!r}")
    if math.isfinite(tat) and not math.isclose(ate, elements / tat, rel_tol=1e-6):
        fig.fail(f"{where}: ATE/s {ate!r} != elements/TAT {elements / tat!r}")
    # What the run reports it ran (the sweep's row shows the swept value under the same name).
    ran = json.loads((row["cache_dir"] / "results.json").read_text())["workload"]["switchml"]
    if ran["elements_per_packet"] != k or ran["pool_size"] != POOL[rate]:
        fig.fail(f"{where}: ran k={ran['elements_per_packet']}, pool={ran['pool_size']}")
    return ate, bound


def check_ring(fig, row, where, n, rate, tat, size, proto):
    """A host ring's ATE/s (elements / TAT) and its bound, checked against the
    simulator's analytic bound."""
    elements = size // 4
    ate = elements / tat if tat > 0 else float("nan")
    bound_s = 2.0 * (n - 1) / n * size * 8.0 / (rate * 1e9)
    reported = num(row.get(f"workload.{proto}.analytic_bound_s"))
    if not math.isclose(reported, bound_s, rel_tol=1e-9):
        fig.fail(f"{where}: simulator's analytic bound {reported!r} s != 2(n-1)/n*S/B = {bound_s!r} s")
    return ate, elements / bound_s


def check_point(fig, row, rate, n, size):
    """One run's ATE/s, bound and TAT, checked and printed."""
    key = series_key(row)
    host_ring = key in HOST_RINGS
    tat = num(row.get("workload.mean_duration_s" if host_ring else "workload.switchml.tat_mean_s"))
    if host_ring:
        where, label, pool = f"rate={rate} Gb/s, workers={n}, {key}", key, None
        ate, bound = check_ring(fig, row, where, n, rate, tat, size, RING_RUNS[key][0])
    elif key in PS:
        where, label, pool = f"rate={rate} Gb/s, workers={n}, {PS[key]}", PS[key], POOL[rate]
        ate, bound = check_switchml(fig, row, where, 256, rate, tat, size // 4)
    elif key in RDMA:
        where, label, pool = f"rate={rate} Gb/s, workers={n}, {RDMA[key]}", "SwitchML RDMA", POOL[rate]
        ate, bound = check_switchml(fig, row, where, 256, rate, tat, size // 4, rdma=True)
    else:
        where, label, pool = f"rate={rate} Gb/s, workers={n}, k={key}", f"SwitchML k={key}", POOL[rate]
        ate, bound = check_switchml(fig, row, where, key, rate, tat, size // 4)
    correct = fig.check(row, where)
    if row.get("workload.ranks") != n:
        fig.fail(f"{where}: ran {row.get('workload.ranks')} ranks")
    if math.isfinite(ate) and ate > bound * (1 + 1e-9):
        fig.fail(f"{where}: ATE/s {ate!r} is above its bound {bound!r}")
    status = "correct" if correct else "NOT CORRECT"
    print(f"rate={rate:>3d} Gb/s workers={n:<3d} {label:<15s}: ATE/s {ate / 1e9:7.4f}e9  "
          f"bound {bound / 1e9:7.4f}e9  ATE/bound {ate / bound:6.4f}  TAT {tat * 1e3:9.4f} ms  {status}")
    return {"ate": ate, "bound": bound, "tat": tat, "pool": pool, "correct": correct}


def rate_panel(plot, res, rate, workers):
    """ATE/s vs workers at one host link rate: SwitchML k=256, k=64 and the
    ring, each with its bound dashed."""
    f = plot.Figure(f"{rate:g} Gb/s", "workers", "ATE/s", "count", "10⁹ elements/s", logx=2,
                    legend_cols=2, legend_loc="lower right")
    colors = {}
    for key, label in ((256, "SwitchML k=256"), (64, "SwitchML k=64"), *RDMA.items(), *HOST_RINGS.items(),
                       *PS.items()):
        pts = [res[(rate, n, key)] for n in workers]
        colors[key] = f.line(workers, [g(p["ate"]) for p in pts], label, columns={
            "rate_gbps": [rate] * len(workers), "workers": workers,
            "k": [key if isinstance(key, int) else (256 if key in PS or key in RDMA else None)] * len(workers),
            "pool_size": [p["pool"] for p in pts], "protocol": [key if key in HOST_RINGS else "switchml"] *
            len(workers), "ate_per_s": [p["ate"] for p in pts], "tat_s": [p["tat"] for p in pts],
            "bound_ate_per_s": [p["bound"] for p in pts], "ratio": [p["ate"] / p["bound"] for p in pts]})
    for key in (256, 64):
        b = ate_bound(key, rate)
        f.bound(workers, [g(b)] * len(workers), f"goodput bound k={key}", color=colors[key],
                legend=f"k={key} framing limit ({goodput_fraction(key) * 100:.0f} %)",
                columns={"rate_gbps": [rate] * len(workers), "workers": workers, "k": [key] * len(workers),
                         "bound_ate_per_s": [b] * len(workers)})
    rb = [res[(rate, n, "ring")]["bound"] for n in workers]
    f.bound(workers, [g(b) for b in rb], "ring bound", color=colors["ring"], legend="rings' 2(n−1)/n·S/B",
            columns={"rate_gbps": [rate] * len(workers), "workers": workers, "bound_ate_per_s": rb})
    f.xticks(workers)
    f.ylim(bottom=0, top=g(ate_bound(256, rate)) * 1.35)
    return f


main = figscript.entry(STEM, __doc__, "the reduced sweep (6 points, a few seconds)", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
