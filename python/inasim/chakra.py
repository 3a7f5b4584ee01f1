"""Chakra execution traces (MLCommons) as a `workload.schedule`, no protobuf package needed.

    /usr/bin/python3 -m inasim.chakra TRACE.et [--out F.json | F.csv]

A Chakra ET file (mlcommons/chakra, schema/protobuf/et_def.proto) is one
rank's execution graph: a GlobalMetadata message, then Node messages, each
prefixed by its length as a varint (the repository's protolib.encodeMessage),
optionally gzip-compressed. This module reads that wire format itself (a
few dozen lines of protobuf decoding), keeps the fields a training step
needs, and turns one data-parallel iteration into a `workload.schedule`:

- dependencies are a node's data_deps, as Chakra's feeder resolves them
  (mlcommons/chakra@21585d8 src/feeder/et_feeder.cpp:105-118); ctrl_deps
  name a node's parent in the call stack (the CPU op that launched a
  kernel), not an order, and real traces hold ctrl_deps to nodes they do not
  keep;
- a compute node takes `duration_micros` on its resource: the CPU for a node
  with attr is_cpu_op, else the GPU; each runs one node at a time, as
  ASTRA-sim's HardwareResource (astra-sim@518bd51
  astra-sim/workload/HardwareResource.cc:30-100), each node as soon as its
  dependencies are done (list scheduling in node id order among the ready
  ones). A COMM_COLL_NODE with is_cpu_op (PyTorch's c10d op that launches
  the NCCL kernel, with no comm_type) is a CPU op of its duration too; the
  kernel's node is the collective;
- COMM_COLL_NODE: a collective, ready when its dependencies are done, of
  attr `comm_type` ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER or BROADCAST.
  Chakra's converter sets `comm_size` to the bytes of the op's input tensors
  (mlcommons/chakra@21585d8 src/converter/pytorch_node.py:212-232, the
  inputs only), as ASTRA-sim reads it (astra-sim@518bd51 Ring.cc:70-86): an
  all-gather's is one rank's shard, so the schedule's `bytes` (the whole
  gathered tensor) is comm_size x the group's size; a reduce-scatter's,
  broadcast's and all-reduce's is the whole tensor;
- other nodes (METADATA, MEM_*, ...) take no time;
- `compute_us` is when the last COMP_NODE ends.

Process groups: a collective's attr `pg_name` names one; the METADATA node
`## process_group:init ##` lists them (PyTorch's pg_config_info: `pg_name`,
`ranks`, [] for every rank, `group_size`; pytorch_converter.py:306). A
collective of the default group ("0", none, or `ranks` []) runs on
"world". Another group is a subset of the ranks, and one rank's trace only
knows its own: given every rank's trace (in rank order), the groups the
ranks name at the same collective make a communicator (`communicators`,
named after the group's `pg_desc`). BROADCAST's root (its place in the
group) is the `root_rank` input of the c10d::broadcast_ op among the
kernel's data_deps; `--broadcast-root` gives it for a trace without one.

What a schedule cannot say is refused, naming the node: another collective
type, a compute node that waits for a collective (more than one iteration,
or pipelining), point-to-point sends, a group of some ranks from one trace,
ranks whose traces disagree on the collectives. The schedule's times are
the first trace's: every rank runs them.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import struct
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

__all__ = ["ChakraError", "read", "schedule", "schedule_ranks", "process_groups", "main", "NODE_TYPES",
           "COLLECTIVES"]

#: et_def.proto's NodeType and CollectiveCommType values.
NODE_TYPES = {0: "INVALID_NODE", 1: "METADATA_NODE", 2: "MEM_LOAD_NODE", 3: "MEM_STORE_NODE", 4: "COMP_NODE",
              5: "COMM_SEND_NODE", 6: "COMM_RECV_NODE", 7: "COMM_COLL_NODE", 8: "STORAGE_NODE", 9: "BATCH_NODE",
              10: "CHECKPOINT_NODE"}
COLLECTIVES = {0: "ALL_REDUCE", 1: "REDUCE", 2: "ALL_GATHER", 3: "GATHER", 4: "SCATTER", 5: "BROADCAST",
               6: "ALL_TO_ALL", 7: "REDUCE_SCATTER", 8: "REDUCE_SCATTER_BLOCK", 9: "BARRIER"}
#: The comm_types a schedule runs, as its `kind`.
KINDS = {0: "allreduce", 7: "reduce_scatter", 2: "all_gather", 5: "broadcast"}
#: The METADATA node whose input lists the process groups (pytorch_node.py:131).
PG_INIT = "## process_group:init ##"
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
    n: Dict[str, Any] = {"id": 0, "name": "", "type": 0, "deps": [], "start_us": 0, "duration_us": 0, "attr": {},
                         "inputs": ""}
    for field, wire, v in _fields(buf):
        if field == 1:
            n["id"] = v
        elif field == 2:
            n["name"] = v.decode("utf-8", "replace")
        elif field == 3:
            n["type"] = v
        elif field == 4:  # ctrl_deps: the call-stack parent, not an order (module doc)
            n["ctrl_deps"] = n.get("ctrl_deps", []) + _ints(wire, v)
        elif field == 5:  # data_deps
            n["deps"] += _ints(wire, v)
        elif field == 6:
            n["start_us"] = v
        elif field == 7:
            n["duration_us"] = v
        elif field == 8:  # inputs: IOInfo, its values (field 1) a string
            for f, _, x in _fields(v):
                if f == 1:
                    n["inputs"] = x.decode("utf-8", "replace")
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


def process_groups(nodes: List[Dict[str, Any]], origin: str = "trace") -> Dict[str, Dict[str, Any]]:
    """pg_name -> {"ranks": [global ranks] or None (every rank), "size", "desc"}
    from the trace's `## process_group:init ##` node; {} when it has none."""
    groups: Dict[str, Dict[str, Any]] = {}
    for n in nodes:
        if n["type"] != 1 or n["name"] != PG_INIT:
            continue
        try:
            values = ast.literal_eval(n["inputs"])  # "['<JSON list>']" (pytorch_converter.py:306)
            entries = [e for text in values for e in json.loads(text)]
            for e in entries:
                ranks = [int(r) for r in e["ranks"]]
                groups[str(e["pg_name"])] = {"ranks": ranks or None, "size": int(e["group_size"]),
                                             "desc": str(e.get("pg_desc") or "")}
        except (ValueError, SyntaxError, TypeError, KeyError) as err:
            raise ChakraError(f"{origin}: node {n['id']} ({PG_INIT}): not a list of process groups "
                              f"(pg_name, ranks, group_size): {err}") from None
    return groups


def _timeline(nodes: List[Dict[str, Any]], origin: str) -> Tuple[float, List[Dict[str, Any]]]:
    """(compute_us, the collective nodes with "ready_us", in readiness order)."""
    by_id = {n["id"]: n for n in nodes}
    if len(by_id) != len(nodes):
        raise ChakraError(f"{origin}: node ids are not unique")
    for n in nodes:
        _check_node(n, by_id, origin)
    end: Dict[int, float] = {}
    after_collective = set()  # nodes that wait, through any path, for a collective
    free = {"cpu": 0.0, "gpu": 0.0}  # when each resource is next free
    compute_end, collectives = 0.0, []
    # List scheduling: in topological order, ties by id (the order the graph lists them).
    for n in _topological(nodes, by_id, origin):
        ready = max((end[d] for d in n["deps"]), default=0.0)
        waits = any(d in after_collective or _is_collective(by_id[d]) for d in n["deps"])
        resource = _resource(n)
        if resource:
            if waits:
                raise ChakraError(f"{origin}: node {n['id']} ({n['name'] or NODE_TYPES[n['type']]}) computes "
                                  "after a collective: a schedule is one iteration of data parallelism, whose "
                                  "compute waits for no collective")
            end[n["id"]] = free[resource] = max(ready, free[resource]) + n["duration_us"]
            compute_end = max(compute_end, end[n["id"]])
        else:
            end[n["id"]] = ready  # collectives and the rest take no compute time
            if waits:
                after_collective.add(n["id"])
        if _is_collective(n):
            collectives.append(dict(n, ready_us=ready, traced_root=_traced_root(n, by_id)))
    if not collectives:
        raise ChakraError(f"{origin}: no collective")
    collectives.sort(key=lambda c: (c["ready_us"], c["id"]))
    return compute_end, collectives


def _traced_root(n: Dict[str, Any], by_id: Dict[int, Dict[str, Any]]) -> Any:
    """A broadcast kernel's root from the c10d op that launched it (one of its
    data_deps): `c10d::broadcast_(Tensor[] tensors, ProcessGroup
    process_group, int root_rank, ...)`, its inputs' third value (the rank
    in the group); None when the trace does not hold it."""
    for d in n["deps"]:
        parent = by_id[d]
        if not parent["name"].startswith("c10d::broadcast_"):
            continue
        try:
            values = ast.literal_eval(parent["inputs"])
        except (ValueError, SyntaxError):
            return None
        if isinstance(values, list) and len(values) > 2 and isinstance(values[2], int) and values[2] >= 0:
            return values[2]
    return None


def _is_collective(n: Dict[str, Any]) -> bool:
    """A COMM_COLL_NODE on the GPU (the kernel), not its CPU launch op."""
    return n["type"] == 7 and not n["attr"].get("is_cpu_op")


def _resource(n: Dict[str, Any]) -> str:
    """Where a node spends its duration: "cpu", "gpu", or "" (no time)."""
    if n["attr"].get("is_cpu_op") and n["type"] in (4, 7):
        return "cpu"
    return "gpu" if n["type"] == 4 else ""


def schedule(nodes: List[Dict[str, Any]], origin: str = "trace", broadcast_root: Any = None) -> Dict[str, Any]:
    """One data-parallel iteration of a rank's graph as workload.schedule (module doc)."""
    return schedule_ranks([(origin, nodes)], broadcast_root)


def schedule_ranks(traces: List[Tuple[str, List[Dict[str, Any]]]], broadcast_root: Any = None) -> Dict[str, Any]:
    """The schedule of the first trace, its collectives' groups from every
    trace: `traces` = [(origin, nodes)] in rank order (one trace: rank 0's,
    world groups only)."""
    timelines = [(origin, *_timeline(nodes, origin), process_groups(nodes, origin)) for origin, nodes in traces]
    origin0, compute_us, first, _ = timelines[0]
    for origin, _, colls, _ in timelines[1:]:
        _same_collectives(origin0, first, origin, colls)
    partitions: Dict[Tuple[Tuple[int, ...], ...], str] = {}
    out = []
    for i, c in enumerate(first):
        where = f"{origin0}: node {c['id']} ({c['name'] or 'COMM_COLL_NODE'})"
        groups = [_group_of(t[2][i], t[3], rank, len(traces), t[0]) for rank, t in enumerate(timelines)]
        n, name = _communicator(groups, partitions, where, timelines[0][3].get(_pg(first[i]), {}))
        out.append(_collective(c, n, name, broadcast_root, where, compute_us))
    doc: Dict[str, Any] = {"compute_us": compute_us, "after_us": 0, "collectives": out}
    if partitions:
        doc["communicators"] = {name: [list(g) for g in part] for part, name in partitions.items()}
    return doc


def _pg(c: Dict[str, Any]) -> str:
    return str(c["attr"].get("pg_name") or "0")


def _same_collectives(origin0, first, origin, colls):
    """Every rank runs one schedule: the traces' collectives must agree."""
    def shape(c):
        return (c["attr"].get("comm_type"), c["attr"].get("comm_size"))

    if [shape(c) for c in colls] != [shape(c) for c in first]:
        k = next((i for i, (a, b) in enumerate(zip(first, colls)) if shape(a) != shape(b)), min(len(first), len(colls)))
        raise ChakraError(f"{origin}: collective {k} (in readiness order) differs from {origin0}'s, or the count "
                          f"does ({len(colls)} vs {len(first)}): every rank runs one schedule")


def _group_of(c, groups, rank, ranks, origin):
    """The global ranks of collective c's group at `rank`; None: every rank."""
    pg = _pg(c)
    g = groups.get(pg)
    if g is None and pg == "0":
        return None  # PyTorch's default group, "0": every rank
    if g is None:
        raise ChakraError(f"{origin}: node {c['id']}: process group {pg!r} is not listed (no {PG_INIT} node "
                          "names it): its ranks are unknown")
    if g["ranks"] is None:
        return None
    members = tuple(sorted(g["ranks"]))
    if ranks == 1:
        raise ChakraError(f"{origin}: node {c['id']}: process group {pg!r} ({g['desc'] or 'ranks'} "
                          f"{list(members)}) is not every rank: give every rank's trace, in rank order, to "
                          "build its communicator")
    if rank not in members:
        raise ChakraError(f"{origin}: node {c['id']}: process group {pg!r} {list(members)} does not hold rank "
                          f"{rank} (traces must be given in rank order)")
    return members


def _communicator(groups, partitions, where, pg0) -> Tuple[Any, str]:
    """(group size or None when unknown, communicator name) of one
    collective, from each rank's group; a new partition is registered."""
    if all(g is None for g in groups):
        if len(groups) > 1 and pg0.get("size") not in (None, len(groups)):
            raise ChakraError(f"{where}: its group has {pg0['size']} ranks ({PG_INIT}), but "
                              f"{len(groups)} traces were given")
        return (pg0.get("size") or (len(groups) if len(groups) > 1 else None)), "world"
    if any(g is None for g in groups):
        raise ChakraError(f"{where}: some ranks run it on every rank, others on a subgroup")
    part = tuple(sorted(set(groups)))
    seen = [r for g in part for r in g]
    if len(seen) != len(set(seen)) or sorted(seen) != list(range(len(groups))):
        raise ChakraError(f"{where}: the ranks' groups {[list(g) for g in part]} do not split ranks "
                          f"0..{len(groups) - 1} into disjoint groups")
    if min(len(g) for g in part) < 2:
        raise ChakraError(f"{where}: a group of one rank ({[list(g) for g in part]})")
    if part not in partitions:
        base = "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in (pg0.get("desc") or "pg")) or "pg"
        name = base if base not in partitions.values() and base != "world" else f"{base}_{len(partitions)}"
        partitions[part] = name
    return len(groups[0]), partitions[part]


def _collective(c, n, communicator, broadcast_root, where, compute_us) -> Dict[str, Any]:
    kind = KINDS[c["attr"]["comm_type"]]
    size = int(c["attr"]["comm_size"])
    out: Dict[str, Any] = {"bytes": size, "ready_us": min(c["ready_us"], compute_us)}
    if kind == "all_gather":
        if n is None:
            raise ChakraError(f"{where}: ALL_GATHER's group size is not in the trace (no {PG_INIT} node): "
                              "comm_size is one rank's shard")
        out["bytes"] = size * n  # comm_size: the shard (module doc); bytes: the gathered tensor
    if kind != "allreduce":
        out["kind"] = kind
    if kind == "broadcast":
        root = c.get("traced_root")
        if root is None:
            root = broadcast_root
        if root is None:
            raise ChakraError(f"{where}: BROADCAST: the root is neither in the trace (a c10d::broadcast_ op "
                              "among its data_deps) nor given with --broadcast-root")
        out["root"] = int(root)
    if communicator != "world":
        out["communicator"] = communicator
    return out


def _check_node(n, by_id, origin):
    where = f"{origin}: node {n['id']} ({n['name'] or NODE_TYPES.get(n['type'], n['type'])})"
    for d in n["deps"]:
        if d not in by_id:
            raise ChakraError(f"{where}: depends on node {d}, which the trace does not have")
    if n["type"] in (5, 6):
        raise ChakraError(f"{where}: point-to-point {NODE_TYPES[n['type']]} is not supported (collectives only)")
    if _is_collective(n):
        kind = n["attr"].get("comm_type")
        if kind not in KINDS:
            raise ChakraError(f"{where}: comm_type {COLLECTIVES.get(kind, kind)}: a schedule runs "
                              "ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER and BROADCAST")
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
    ap.add_argument("trace", nargs="+", help="a Chakra ET file (one rank's), gzip or not; several: every rank's, "
                                             "in rank order (their process groups make communicators)")
    ap.add_argument("--out", help="write the schedule's JSON here, or its collectives as CSV if it ends in .csv")
    ap.add_argument("--broadcast-root", type=int, metavar="R",
                    help="BROADCAST's root, its place in the collective's group, for a trace without the "
                         "c10d::broadcast_ op that records it")
    a = ap.parse_args(argv)
    try:
        if a.broadcast_root is not None and a.broadcast_root < 0:
            raise ChakraError(f"--broadcast-root: must be >= 0, got {a.broadcast_root}")
        doc = schedule_ranks([(t, read(t)[1]) for t in a.trace], a.broadcast_root)
        text = _csv(doc, a.trace[0], a.out) if a.out and a.out.endswith(".csv") else json.dumps(doc, indent=1) + "\n"
    except ChakraError as e:
        print(f"inasim.chakra: {e}", file=sys.stderr)
        return 2
    if a.out:
        Path(a.out).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def _csv(doc: Dict[str, Any], origin: str, out: str) -> str:
    """The collectives as workload.schedule.file's CSV: bytes, ready_us, and
    kind / root / communicator when a collective needs them (a CSV cell
    cannot be empty, nor hold the communicators' groups)."""
    if "communicators" in doc:
        raise ChakraError(f"--out {out}: the schedule needs communicators ({', '.join(doc['communicators'])}), "
                          "which a CSV cannot hold: write JSON")
    colls = doc["collectives"]
    if 0 < sum("root" in c for c in colls) < len(colls):
        raise ChakraError(f"--out {out}: broadcasts among other collectives need a root column only they have: "
                          "write JSON")
    cols = ["bytes", "ready_us"] + [k for k in ("kind", "root") if any(k in c for c in colls)]
    rows = [",".join(str(c.get(k, "allreduce" if k == "kind" else "")) for k in cols) for c in doc["collectives"]]
    return f"# inasim.chakra {origin}: compute_us {doc['compute_us']}\n" + ",".join(cols) + "\n" + \
        "".join(r + "\n" for r in rows)


if __name__ == "__main__":
    sys.exit(main())
