#!/usr/bin/python3
"""Writes the seed inputs of the fuzz corpora (seed-* in each target's corpus:
tests/fuzz/corpus/<target> for the shared parsers, protocols/<name>/tests/fuzz-corpus
for a protocol's dataplane, protocols/<name>/tests/fuzz-corpus-<target> for its others).

    /usr/bin/python3 tests/fuzz/make_seeds.py

Dataplane inputs use the record format of fuzz_dataplane.h: [port][time step
x 100 ns][length, 2 bytes][frame]. Seeds are well-formed protocol traffic
(a slot completed by every worker, duplicates, retransmissions), so the
fuzzer starts deep in each program instead of at its parser. The scenario
and CDF seeds are the shipped files. Deterministic: rerunning rewrites the
same bytes.
"""

import shutil
import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CORPUS = HERE / "corpus"


def csum(b: bytes) -> int:
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4_udp(src_ip, dst_ip, sport, dport, payload, tos=0, src_mac=b"\x02\0\0\0\0\x01", dst_mac=b"\x02\0\0\0\0\xfe"):
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, tos, 28 + len(payload), 1, 0, 64, 17, 0, bytes(src_ip),
                               bytes(dst_ip)))
    ip[10:12] = struct.pack("!H", csum(bytes(ip)))
    return dst_mac + src_mac + b"\x08\x00" + bytes(ip) + struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def record(port, frame, step=1):
    return bytes([port, step]) + struct.pack("!H", len(frame)) + frame


def corpus_dir(target: str) -> Path:
    """Where `target`'s corpus is (the layout tests/CMakeLists.txt reads)."""
    if (ROOT / "protocols" / target / "tests" / "fuzz.cc").is_file():
        return ROOT / "protocols" / target / "tests" / "fuzz-corpus"
    for src in (ROOT / "protocols").glob(f"*/tests/fuzz_{target}.cc"):
        return src.parent / f"fuzz-corpus-{target}"
    return CORPUS / target


def write(target, name, data):
    d = corpus_dir(target)
    d.mkdir(parents=True, exist_ok=True)
    (d / f"seed-{name}").write_bytes(data)


def switchml():
    for mode, size_code, elems in ((0, 1, 64), (1, 3, 256)):
        def pkt(w, slot, s=0):
            body = struct.pack("!BBIH", size_code, 7, 0x1234, (slot & 0x3FFF) | (s << 15)) + b"\x00\x01"
            body += struct.pack(f"!{elems}i", *[(w + 1) * 1000 + i - 2**31 * (i % 7 == 0) for i in range(elems)])
            return ipv4_udp([10, 0, 0, w + 1], [10, 0, 0, 254], 4000, 0xBEE0, body,
                            src_mac=bytes([2, 0, 0, 0, 0, w + 1]))
        complete = b"".join(record(w, pkt(w, 3)) for w in range(4))
        write("switchml", f"complete-{elems}", bytes([mode]) + complete)
        dup = record(0, pkt(0, 5)) + record(0, pkt(0, 5)) + b"".join(record(w, pkt(w, 5)) for w in range(1, 4))
        write("switchml", f"dup-retx-{elems}", bytes([mode]) + dup + record(2, pkt(2, 5)))
        both_sets = b"".join(record(w, pkt(w, 1, 0)) for w in range(4)) + b"".join(
            record(w, pkt(w, 1, 1)) for w in range(4))
        write("switchml", f"sets-{elems}", bytes([mode | 2]) + both_sets)
        write("switchml", f"truncated-{elems}", bytes([mode]) + record(0, pkt(0, 2)[:-100]))


def canary():
    def pkt(src, ident, counter=1, hosts=4, flags=0, port=0):
        hdr = struct.pack("!IIHHIHB", 0x0A000009, ident, counter, hosts, 0, 0, flags)
        body = hdr + struct.pack("!8i", *[ident + i for i in range(8)])
        return ipv4_udp([10, 0, 0, src], [10, 0, 0, 9], 45502, 45501, body)
    write("canary", "reduce", bytes([0]) + b"".join(record(p, pkt(p + 1, 0x01000005), 1) for p in range(4)))
    write("canary", "timeout-straggler",
          bytes([0]) + record(0, pkt(1, 0x01000006)) + record(1, pkt(2, 0x01000006), 50) + record(2, pkt(3, 0x01000006)))
    write("canary", "collide", bytes([1]) + b"".join(record(p, pkt(p + 1, 0x01000000 + 16 * p)) for p in range(4)))
    write("canary", "broadcast", bytes([2]) + record(0, pkt(1, 0x01000007)) + record(5, pkt(9, 0x01000007, 4, 4, 0x40)))


def p4sgd():
    def frame(index, worker, ack=False, complete=False, vals=None):
        b = bytearray(64)
        b[0] = (0x80 if ack else 0) | (0x40 if complete else 0)
        b[2:4] = struct.pack("!H", index)
        b[8:12] = struct.pack("!I", 1 << worker)
        b[32:64] = struct.pack("!8i", *(vals or [worker * 10 + i for i in range(8)]))
        return bytes(b)
    agg = b"".join(record(w, frame(3, w)) for w in range(4))
    acks = b"".join(record(w, frame(3, w, ack=True)) for w in range(4))
    for mode in (0, 1):
        write("p4sgd", f"agg-ack-{mode}", bytes([mode]) + agg + acks)
        write("p4sgd", f"dup-{mode}", bytes([mode | 2]) + record(0, frame(1, 0)) + record(0, frame(1, 0)) + agg)


def panama():
    def pkt(port, jid, tid, vid, fin=False, ecn=2, n=16):
        h = struct.pack("!HBBIH4x", jid, tid, 0x80 if fin else 0, vid, 0xFFFF)
        vals = struct.pack(f"!{n}f", *[port + 0.5 * i for i in range(n)])
        return ipv4_udp([10, 0, 0, port + 1], [239, 0, 7, tid], 6000, 6000, h + vals, tos=(56 << 2) | ecn)
    vec = lambda vid, fin=False: b"".join(record(p, pkt(p, 7, 0, vid, fin)) for p in range(4))
    write("panama", "two-vectors-fin", bytes([0]) + vec(0) + vec(1, True))
    write("panama", "skip-vid", bytes([1]) + record(0, pkt(0, 7, 1, 0)) + b"".join(
        record(p, pkt(p, 7, 1, 1)) for p in range(1, 4)) + record(0, pkt(0, 7, 1, 1)))
    write("panama", "two-jobs-overflow", bytes([4 | 2]) + b"".join(
        record(p, pkt(p, 9, 0, v)) for v in range(6) for p in (2, 3)) + vec(0))
    # Tree switch (bit 3): a vector up to the parent (port 5), a result down from
    # it to the children (the worker on port 0 rewritten), tree 1 rooted here.
    write("panama", "tree-up-down", bytes([8]) + vec(0) + record(5, pkt(5, 7, 0, 0)) + b"".join(
        record(p, pkt(p, 7, 1, 0)) for p in range(4)))
    write("panama", "tree-fin-dump", bytes([0x80 | 8]) + vec(0) + vec(1, True) + record(0, pkt(0, 9, 0, 0)))


def scenarios():
    for f in sorted((ROOT / "scenarios").rglob("*.json")):
        if "results" in f.relative_to(ROOT / "scenarios").parts:  # figure results' provenance, not scenarios
            continue
        text = f.read_text()
        if len(text) < 4000 and "1024" not in text:
            write("scenario", f.stem, text.encode())
    write("scenario", "sets", b'{"topology":{"type":"single_rack","hosts":4}}\n---\n--set workload.bytes=64\n'
          b'--set workload.protocol=switchml\n--set faults.links=[{"link":1,"loss_rate":0.5}]\n')


def cdfs():
    for f in sorted((ROOT / "src" / "congestion" / "flow-sizes").glob("*.cdf")):
        shutil.copy(f, CORPUS / "cdf" / f"seed-{f.stem}")
    write("cdf", "mass", b"unit 1460\n10 0.5\n10 0.5\n100 1\n")


if __name__ == "__main__":
    (CORPUS / "cdf").mkdir(parents=True, exist_ok=True)
    switchml(); canary(); p4sgd(); panama(); scenarios(); cdfs()
    for d in sorted([*CORPUS.iterdir(), *(ROOT / "protocols").glob("*/tests/fuzz-corpus*")]):
        print(f"{d.relative_to(ROOT)}: {len(list(d.iterdir()))} inputs")
