"""Chakra execution traces (MLCommons) as a `workload.schedule`, no protobuf package needed.

    /usr/bin/python3 -m inasim.chakra TRACE.et [--out F.json | F.csv]

A Chakra ET file (mlcommons/chakra, schema/protobuf/et_def.proto) is one
rank's execution graph: a GlobalMetadata message, then Node messages, each
prefixed by its length as a varint (the repository's protolib.encodeMessage),
optionally gzip-compressed. This module reads that wire format itself (a
few dozen lines of protobuf decoding), keeps the fields a training step
needs, and turns one data-parallel iteration into a `workload.schedule`:

- COMP_NODE: the GPU computes for `duration_micros`, one node at a time, each
  as soon as its ctrl_deps and data_deps are done (list scheduling in node id
  order among the ready ones);
- COMM_COLL_NODE with attr comm_type = ALL_REDUCE: a collective of
  attr `comm_size` bytes, ready when its dependencies are done;
- other nodes (METADATA, MEM_*, ...) take no time;
- `compute_us` is when the last COMP_NODE ends.

What a schedule cannot say is refused, naming the node: another collective
type, a compute node that waits for a collective (more than one iteration, or
pipelining), point-to-point sends. Every rank runs the same trace, and
`pg_name` (the process group) is read but one communicator is assumed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import struct
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

__all__ = ["ChakraError", "read", "schedule", "main", "NODE_TYPES", "COLLECTIVES"]

#: et_def.proto's NodeType and CollectiveCommType values.
NODE_TYPES = {0: "INVALID_NODE", 1: "METADATA_NODE", 2: "MEM_LOAD_NODE", 3: "MEM_STORE_NODE", 4: "COMP_NODE",
              5: "COMM_SEND_NODE", 6: "COMM_RECV_NODE", 7: "COMM_COLL_NODE", 8: "STORAGE_NODE", 9: "BATCH_NODE",
              10: "CHECKPOINT_NODE"}
COLLECTIVES = {0: "ALL_REDUCE", 1: "REDUCE", 2: "ALL_GATHER", 3: "GATHER", 4: "SCATTER", 5: "BROADCAST",
               6: "ALL_TO_ALL", 7: "REDUCE_SCATTER", 8: "REDUCE_SCATTER_BLOCK", 9: "BARRIER"}
MAX_BYTES = 1 << 30  # a trace file's cap (docs/SCENARIO.md "Input files")


class ChakraError(ValueError):
    """A trace that cannot be read or turned into a schedule; the message names the file and node."""


# ------------------------------------------------------------ wire format


def _varint(buf: bytes, pos: int) -> Tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise ChakraError("truncated or malformed varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _fields(buf: bytes) -> Iterator[Tuple[int, int, Any]]:
    """(field number, wire type, value) of one message: an int for varints and
    fixed ints, bytes for length-delimited fields."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = struct.unpack_from("<Q", buf, pos)[0], pos + 8
        elif wire == 5:
            value, pos = struct.unpack_from("<I", buf, pos)[0], pos + 4
        elif wire == 2:
            n, pos = _varint(buf, pos)
            if pos + n > len(buf):
                raise ChakraError("truncated length-delimited field")
            value, pos = buf[pos:pos + n], pos + n
        else:
            raise ChakraError(f"unsupported wire type {wire} (field {field})")
        yield field, wire, value


def _ints(wire: int, value: Any) -> List[int]:
    """A repeated integer field's values: one varint, or a packed run."""
    if wire == 0:
        return [value]
    out, pos = [], 0
    while pos < len(value):
        v, pos = _varint(value, pos)
        out.append(v)
    return out


def _attr(buf: bytes) -> Tuple[str, Any]:
    """AttributeProto: its name and a scalar value (int, bool, double or string)."""
    name, value = "", None
    for field, wire, v in _fields(buf):
        if field == 1:
            name = v.decode("utf-8", "replace")
        elif field in (7, 9, 11, 13):  # int32, int64, uint32, uint64
            value = v - (1 << 64) if field in (7, 9) and v >= 1 << 63 else v
        elif field == 27:
            value = bool(v)
        elif field == 3:
            value = struct.unpack("<d", struct.pack("<Q", v))[0]
        elif field == 29:
            value = v.decode("utf-8", "replace")
    return name, value


def _node(buf: bytes) -> Dict[str, Any]:
    n: Dict[str, Any] = {"id": 0, "name": "", "type": 0, "deps": [], "start_us": 0, "duration_us": 0, "attr": {}}
    for field, wire, v in _fields(buf):
        if field == 1:
            n["id"] = v
        elif field == 2:
            n["name"] = v.decode("utf-8", "replace")
        elif field == 3:
            n["type"] = v
        elif field in (4, 5):  # ctrl_deps, data_deps
            n["deps"] += _ints(wire, v)
        elif field == 6:
            n["start_us"] = v
        elif field == 7:
            n["duration_us"] = v
        elif field == 10:
            key, value = _attr(v)
            n["attr"][key] = value
    return n


def read(path) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """(metadata {version, attr}, nodes) of a Chakra ET file, gzip or not."""
    p = Path(path)
    if not p.is_file():
        raise ChakraError(f"{p}: not a regular file")
    if p.stat().st_size > MAX_BYTES:
        raise ChakraError(f"{p}: larger than {MAX_BYTES >> 30} GiB")
    data = p.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    messages, pos = [], 0
    try:
        while pos < len(data):
            n, pos = _varint(data, pos)
            if pos + n > len(data):
                raise ChakraError(f"message {len(messages)} is cut short ({n} bytes announced)")
            messages.append(data[pos:pos + n])
            pos += n
        if not messages:
            raise ChakraError("no messages (a GlobalMetadata, then the nodes)")
        meta = {"version": "", "attr": {}}
        for field, _, v in _fields(messages[0]):
            if field == 1:
                meta["version"] = v.decode("utf-8", "replace")
            elif field == 2:
                key, value = _attr(v)
                meta["attr"][key] = value
        nodes = [_node(m) for m in messages[1:]]
    except ChakraError as e:
        raise ChakraError(f"{p}: {e}") from None
    return meta, nodes


# ---------------------------------------------------------------- schedule


def schedule(nodes: List[Dict[str, Any]], origin: str = "trace") -> Dict[str, Any]:
    """One data-parallel iteration of a rank's graph as workload.schedule (module doc)."""
    by_id = {n["id"]: n for n in nodes}
    if len(by_id) != len(nodes):
        raise ChakraError(f"{origin}: node ids are not unique")
    for n in nodes:
        _check_node(n, by_id, origin)
    order = _topological(nodes, by_id, origin)
    end: Dict[int, float] = {}
    after_collective = set()  # nodes that wait, through any path, for a collective
    gpu_free, compute_end, collectives = 0.0, 0.0, []
    # List scheduling: in topological order, ties by id (the order the graph lists them).
    for n in order:
        ready = max((end[d] for d in n["deps"]), default=0.0)
        waits = any(d in after_collective or by_id[d]["type"] == 7 for d in n["deps"])
        if n["type"] == 4:  # COMP_NODE
            if waits:
                raise ChakraError(f"{origin}: node {n['id']} ({n['name'] or 'COMP_NODE'}) computes after a "
                                  "collective: a schedule is one iteration of data parallelism, whose compute "
                                  "waits for no collective")
            start = max(ready, gpu_free)
            end[n["id"]] = gpu_free = start + n["duration_us"]
            compute_end = max(compute_end, end[n["id"]])
        else:
            end[n["id"]] = ready  # collectives and the rest take no compute time
            if waits:
                after_collective.add(n["id"])
        if n["type"] == 7:
            collectives.append({"bytes": int(n["attr"]["comm_size"]), "ready_us": ready, "id": n["id"]})
    if not collectives:
        raise ChakraError(f"{origin}: no ALL_REDUCE collective")
    collectives.sort(key=lambda c: (c["ready_us"], c["id"]))
    return {"compute_us": compute_end, "after_us": 0,
            "collectives": [{"bytes": c["bytes"], "ready_us": min(c["ready_us"], compute_end)} for c in collectives]}


def _check_node(n, by_id, origin):
    where = f"{origin}: node {n['id']} ({n['name'] or NODE_TYPES.get(n['type'], n['type'])})"
    for d in n["deps"]:
        if d not in by_id:
            raise ChakraError(f"{where}: depends on node {d}, which the trace does not have")
    if n["type"] in (5, 6):
        raise ChakraError(f"{where}: point-to-point {NODE_TYPES[n['type']]} is not supported (collectives only)")
    if n["type"] == 7:
        kind = n["attr"].get("comm_type")
        if kind != 0:
            raise ChakraError(f"{where}: comm_type {COLLECTIVES.get(kind, kind)}: only ALL_REDUCE runs as a schedule")
        size = n["attr"].get("comm_size")
        if not isinstance(size, int) or size < 4 or size % 4:
            raise ChakraError(f"{where}: comm_size must be a multiple of 4 bytes, got {size!r}")


def _topological(nodes, by_id, origin):
    """Kahn's algorithm, ready nodes taken by id; a cycle is an error."""
    import heapq

    waiting = {n["id"]: len(set(n["deps"])) for n in nodes}
    users: Dict[int, List[int]] = {}
    for n in nodes:
        for d in set(n["deps"]):
            users.setdefault(d, []).append(n["id"])
    ready = [i for i, k in waiting.items() if k == 0]
    heapq.heapify(ready)
    out = []
    while ready:
        i = heapq.heappop(ready)
        out.append(by_id[i])
        for u in users.get(i, []):
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, u)
    if len(out) != len(nodes):
        raise ChakraError(f"{origin}: the dependencies form a cycle")
    return out


# --------------------------------------------------------------------- cli


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m inasim.chakra", description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", help="a Chakra ET file (one rank's), gzip or not")
    ap.add_argument("--out", help="write the schedule's JSON here, or its collectives as CSV if it ends in .csv")
    a = ap.parse_args(argv)
    try:
        _, nodes = read(a.trace)
        doc = schedule(nodes, a.trace)
    except ChakraError as e:
        print(f"inasim.chakra: {e}", file=sys.stderr)
        return 2
    if a.out and a.out.endswith(".csv"):
        text = (f"# inasim.chakra {a.trace}: compute_us {doc['compute_us']}\nbytes,ready_us\n" +
                "".join(f"{c['bytes']},{c['ready_us']}\n" for c in doc["collectives"]))
    else:
        text = json.dumps(doc, indent=1) + "\n"
    if a.out:
        Path(a.out).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
