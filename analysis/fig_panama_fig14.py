#!/usr/bin/python3
"""PANAMA Fig. 14: the accelerator's cut-through latency over packet size and port count (Appendix A eq. (3)), and the prototype's Table 1.

    /usr/bin/python3 analysis/fig_panama_fig14.py [--small] [--out DIR]

Every number is the PANAMA dataplane model's own: the script configures
`inasim-p4 replay panama` (the model without ns-3) with each design's
latency_model (scenarios/panama/fig14-designs.csv: bus width W, clock f,
adder latency La, with the paper's quotes), sends one aggregation packet of
S bytes into each of the N member ports, and reads the latency the model
gives the result (LatencyModel::Aggregation: eq. (3),
L = (S/W - 1)/f + La ceil(log2 N)). Nothing here re-computes eq. (3).
  (a) FPGA (200 MHz, La = 10 ns), 64 ports, over packet size, one series per W;
  (b) ASIC (1 GHz, La = 6 ns), the same;
  (c) FPGA, 1,500-byte packets, over ports (2..64: the model's Ports_bitmap is
      64 bits, so the 128 ports of Figs. 12-13 are not evaluated);
  (d) ASIC, the same;
  (e) the prototype of §6 (W = 64, 200 MHz, 4 ports) with the model's default
      latency_model, whose fixed terms are fitted to Table 1: non-aggregation
      and aggregation packets;
  (f) the highest latency over (a)-(d) among rates R = W f >= 100 Gb/s, per
      technology and over both (the paper's "<= 133 ns" sentence).
eq. (3) has no fixed terms, so (a)-(d) set fixed_ns = agg_fixed_ns = 0.
--small is the same computation (a few hundred model calls, about a second).

Writes OUT/fig_panama_fig14.png and .csv. Exit status: 0 ok; 2 bad input or
inasim-p4 missing; 1 the model refused a configuration.
"""

from __future__ import annotations

import csv
import json
import struct
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from figscript import ROOT  # noqa: E402

STEM = "fig_panama_fig14"
DESIGNS = ROOT / "scenarios" / "panama" / "fig14-designs.csv"
CONFIGS = {"full": {}, "small": {}}  # analytic: the reduced run is the full one
# Fig. 14 caption: packet sizes "assuming 64 ports (a and b)", ports "with
# 1,500-byte packets (c and d)". Sizes are frames of 56 + 4k bytes (k fp32).
PACKET_BYTES = [64, 128, 256, 512, 1024, 1500]
PORTS = [2, 4, 8, 16, 32, 64]
FIXED_PORTS, FIXED_BYTES = 64, 1500
PROTOTYPE_PORTS = 4  # §6: "four 10-Gbps transceivers"
HEADER_BYTES = 56  # Ethernet 14 + IPv4 20 + UDP 8 + PANAMA 14 (panama §5 Fig. 4)
JID = 7
SPACING_NS = 100_000  # vectors far apart, so no result waits behind another


def inasim_p4() -> Path:
    """The inasim-p4 of the build whose _inasim this process imported."""
    import _inasim

    return Path(_inasim.__file__).resolve().parents[1] / "inasim-p4"


def frame(port: int, size: int, vid: int, aggregation: bool = True) -> bytes:
    """An IPv4/UDP frame of `size` bytes from `port`; with `aggregation`, a
    PANAMA packet of job JID, tree 0 (DSCP 56, the header, fp32 ones)."""
    k = (size - HEADER_BYTES) // 4
    if (size - HEADER_BYTES) % 4 or k < 1:
        raise ValueError(f"{size}-byte frames: must be {HEADER_BYTES} + 4k bytes")
    payload = struct.pack("!HBBIH4x", JID, 0, 0, vid, 0xFFFF) + struct.pack("!f", 1.0) * k
    dscp = 56 if aggregation else 0
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, dscp << 2, 28 + len(payload), 1, 0, 64, 17, 0,
                               bytes([10, 0, 0, port + 1]), bytes([239, 0, JID, 0])))
    s = sum(struct.unpack("!10H", bytes(ip)))
    s = (s & 0xFFFF) + (s >> 16)
    ip[10:12] = struct.pack("!H", ~((s & 0xFFFF) + (s >> 16)) & 0xFFFF)
    udp = struct.pack("!HHHH", 6000, 6000, 8 + len(payload), 0)
    return bytes([1, 0, 0x5E, 0, JID, 0, 2, 0, 0, 0, 0, port + 1]) + b"\x08\x00" + bytes(ip) + udp + payload


def replay(config: dict, sizes, ports: int, aggregation: bool = True):
    """{size: latency ns} the model gives a packet of each size: with
    `aggregation`, the result of one vector sent into all `ports`; else a
    non-aggregation frame's pass-through latency."""
    lines = []
    for vid, size in enumerate(sizes):
        for p in range(ports if aggregation else 1):
            lines.append({"port": p, "hex": frame(p, size, vid, aggregation).hex(), "time_ns": vid * SPACING_NS})
    p = subprocess.run([str(inasim_p4()), "replay", "panama", "--config", _write(config)],
                       input="".join(json.dumps(x) + "\n" for x in lines), capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"inasim-p4 replay panama ({json.dumps(config)}): {p.stderr.strip()}")
    outs = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    emitted = [o for o in outs if o.get("out")]
    if len(emitted) != len(sizes) or any(len(o["out"]) != 1 for o in emitted):
        raise RuntimeError(f"inasim-p4 replay panama: expected one result per size, got {outs[:3]}")
    return {size: o["out"][0]["latency_ns"] for size, o in zip(sizes, emitted)}


_CONFIG_DIR: list = []


def _write(config: dict) -> str:
    """The config as a temporary file (inasim-p4 reads regular files only)."""
    import tempfile

    if not _CONFIG_DIR:
        _CONFIG_DIR.append(tempfile.TemporaryDirectory(prefix="fig14-"))
    path = Path(_CONFIG_DIR[0].name) / "panama.json"
    path.write_text(json.dumps(config))
    return str(path)


def model_config(design: dict, ports: int) -> dict:
    """The accelerator config of one design: eq. (3) alone (no fixed terms),
    one job over every port."""
    return {"num_ports": ports, "latency": "equation",
            "latency_model": {"bus_bits": design["bus_bits"], "clock_mhz": design["clock_mhz"],
                              "adder_ns": design["adder_ns"], "fixed_ns": 0, "agg_fixed_ns": 0},
            "jobs": [{"jid": JID, "ports": list(range(ports))}]}


def designs(path: Path = DESIGNS):
    """The rows of fig14-designs.csv ('#' lines are its notes), numbers as numbers."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    return [{"design": r["design"], "bus_bits": int(r["bus_bits"]), "clock_mhz": float(r["clock_mhz"]),
             "adder_ns": float(r["adder_ns"])} for r in rows]


def rate_gbps(d: dict) -> float:
    """eq. (1): the port rate R = W f."""
    return d["bus_bits"] * d["clock_mhz"] / 1e3


def sweep_design(d: dict):
    """(latency ns by packet size at 64 ports, latency ns by port count at 1,500 B)."""
    by_size = replay(model_config(d, FIXED_PORTS), PACKET_BYTES, FIXED_PORTS)
    by_ports = {n: replay(model_config(d, n), [FIXED_BYTES], n)[FIXED_BYTES] for n in PORTS}
    return by_size, by_ports


def design_panels(fig, tech: str, results):
    """Two panels of one technology: over packet size, over ports."""
    d0 = results[0][0]
    tail = f"{d0['clock_mhz']:g} MHz, La = {d0['adder_ns']:g} ns"
    size = fig.plot.Figure(f"{tech}, {FIXED_PORTS} ports ({tail})", "packet size", "latency", "bytes", "ns",
                           legend_loc="upper left")
    ports = fig.plot.Figure(f"{tech}, {FIXED_BYTES}-byte packets", "accelerator", "latency", "ports", "ns", logx=2,
                            legend_loc="upper left")
    for d, by_size, by_ports in results:
        label = f"W = {d['bus_bits']} bits ({rate_gbps(d):g} Gb/s)"
        size.line(PACKET_BYTES, [by_size[s] for s in PACKET_BYTES], label)
        ports.line(PORTS, [by_ports[n] for n in PORTS], label)
    return size, ports.xticks(PORTS)


def table1_panel(fig):
    """Panel e: the prototype with the model's default latency_model (fitted
    fixed terms), 4 ports, as Table 1 measured it."""
    cfg = {"num_ports": PROTOTYPE_PORTS, "latency": "equation", "jobs": [{"jid": JID, "ports": [0, 1, 2, 3]}]}
    sizes = [s for s in PACKET_BYTES if s >= 256]
    agg = replay(cfg, sizes, PROTOTYPE_PORTS)
    nonagg = replay(cfg, sizes, PROTOTYPE_PORTS, aggregation=False)
    panel = fig.plot.Figure("prototype (W = 64, 200 MHz, 4 ports), Table 1", "packet size", "latency", "bytes", "ns",
                            legend_loc="upper left")
    panel.line(sizes, [nonagg[s] for s in sizes], "non-aggregation")
    panel.line(sizes, [agg[s] for s in sizes], "aggregation")
    return panel


def worst_panel(fig, results):
    """Panel f: the highest latency of (a)-(d) at R >= 100 Gb/s; x = 1 FPGA,
    2 ASIC, 3 both."""
    worst = {}
    for d, by_size, by_ports in results:
        if rate_gbps(d) >= 100:
            top = max(list(by_size.values()) + list(by_ports.values()))
            worst[d["design"]] = max(worst.get(d["design"], 0.0), top)
    techs = sorted(worst, key=lambda t: t != "FPGA")
    ys = [worst[t] for t in techs] + [max(worst.values())]
    panel = fig.plot.Figure("highest latency at >= 100 Gb/s", "design", "latency", "technology", "ns", legend_loc="lower right")
    panel.line(list(range(1, len(ys) + 1)), ys, "highest latency, rates >= 100 Gb/s", linestyle="none")
    return panel.xticks(list(range(1, len(ys) + 1)), techs + ["both"])


def draw(fig):
    try:
        rows = designs()
        if not inasim_p4().is_file():
            raise OSError(f"{inasim_p4()} is not built (make inasim-p4)")
    except (OSError, ValueError, KeyError) as e:
        print(f"{STEM}: {e}", file=sys.stderr)
        raise figscript.FigureExit(2) from None
    try:
        results = [(d, *sweep_design(d)) for d in rows]
        panels = []
        for tech in ("FPGA", "ASIC"):
            panels.append(design_panels(fig, tech, [r for r in results if r[0]["design"] == tech]))
        (a, c), (b, d) = panels
        out = [a, b, c, d, table1_panel(fig), worst_panel(fig, results)]
    except RuntimeError as e:
        print(f"{STEM}: {e}", file=sys.stderr)
        raise figscript.FigureExit(1) from None
    for d, by_size, by_ports in results:
        print(f"{d['design']} W={d['bus_bits']:3d} ({rate_gbps(d):5.1f} Gb/s): {FIXED_BYTES} B x 64 ports "
              f"{by_size[FIXED_BYTES]:7.2f} ns, 64 B {by_size[PACKET_BYTES[0]]:6.2f} ns, 1500 B x 2 ports "
              f"{by_ports[PORTS[0]]:7.2f} ns")
    return fig.save(out, title="PANAMA Fig. 14: accelerator cut-through latency, eq. (3) by the dataplane model")


main = figscript.entry(STEM, __doc__, "the same model calls (no simulation)", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
