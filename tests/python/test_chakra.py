"""inasim.chakra: a Chakra execution trace (et_def.proto's wire format,
length-prefixed messages, gzip or not) as a workload.schedule.

The traces are written here with an encoder of our own (the protobuf wire
format by hand), so the reader is checked against bytes, not against itself:

- worked example: forward 100 us, backward in two layers of 40 us each, a
  bucket after each layer's backward (ALL_REDUCE of 4096 and 8192 bytes):
  compute 180 us, buckets ready at 140 and 180 us (in readiness order);
- the GPU runs one compute node at a time: two independent 30 us nodes end
  at 30 and 60 us, not both at 30;
- gzip gives the same; the CLI writes JSON or CSV that a run takes
  (workload.schedule.file), and the run's buckets start when ready;
- what a schedule cannot say is refused naming the node (exit 2): another
  collective type, compute after a collective, point-to-point, a missing
  dependency, a cycle, a cut-short file."""

import gzip
import json
import struct
import subprocess
import sys

import pytest

from helpers import SOURCE_DIR, child_env, import_inasim
from test_pcap import BIN

import_inasim()
from inasim import chakra  # noqa: E402

COMP, COLL, SEND, META = 4, 7, 5, 1


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def field(num, wire, payload):
    key = varint(num << 3 | wire)
    if wire == 0:
        return key + varint(payload)
    return key + varint(len(payload)) + payload


def attr(name, value):
    body = field(1, 2, name.encode())
    if isinstance(value, bool):
        body += field(27, 0, int(value))
    elif isinstance(value, int):
        body += field(9, 0, value)  # int64_val
    else:
        body += field(29, 2, value.encode())
    return body


def node(nid, name, ntype, deps=(), duration=0, attrs=(), packed=False):
    body = field(1, 0, nid) + field(2, 2, name.encode()) + field(3, 0, ntype)
    if packed and deps:
        body += field(5, 2, b"".join(varint(d) for d in deps))  # data_deps, packed
    else:
        body += b"".join(field(4, 0, d) for d in deps)  # ctrl_deps, one by one
    body += field(7, 0, duration)
    body += b"".join(field(10, 2, attr(k, v)) for k, v in attrs)
    return body


def trace(nodes, version="0.0.4"):
    meta = field(1, 2, version.encode()) + field(2, 2, attr("schema", "test"))
    return b"".join(varint(len(m)) + m for m in [meta] + nodes)


def allreduce(nid, name, deps, size, kind=0):
    return node(nid, name, COLL, deps, attrs=[("is_cpu_op", False), ("comm_type", kind), ("comm_size", size),
                                              ("pg_name", "0")])


STEP = [node(1, "forward", COMP, duration=100),
        node(2, "backward.layer2", COMP, [1], duration=40),
        allreduce(3, "bucket0", [2], 4096),
        node(4, "backward.layer1", COMP, [2], duration=40, packed=True),
        allreduce(5, "bucket1", [4], 8192)]


def write(tmp_path, nodes, name="t.et", compress=False):
    data = trace(nodes)
    p = tmp_path / name
    p.write_bytes(gzip.compress(data) if compress else data)
    return p


@pytest.mark.parametrize("compress", [False, True])
def test_worked_example(tmp_path, compress):
    meta, nodes = chakra.read(write(tmp_path, STEP, compress=compress))
    assert meta["version"] == "0.0.4" and meta["attr"] == {"schema": "test"}
    assert [n["id"] for n in nodes] == [1, 2, 3, 4, 5] and nodes[3]["deps"] == [2]
    assert nodes[2]["attr"] == {"is_cpu_op": False, "comm_type": 0, "comm_size": 4096, "pg_name": "0"}
    s = chakra.schedule(nodes)
    assert s == {"compute_us": 180.0, "after_us": 0,
                 "collectives": [{"bytes": 4096, "ready_us": 140.0}, {"bytes": 8192, "ready_us": 180.0}]}


def test_the_gpu_runs_one_compute_node_at_a_time():
    nodes = chakra.schedule([chakra._node(node(1, "a", COMP, duration=30)), chakra._node(node(2, "b", COMP, duration=30)),
                             chakra._node(allreduce(3, "g", [1, 2], 64))])
    assert nodes["compute_us"] == 60.0 and nodes["collectives"][0]["ready_us"] == 60.0


def test_cli_writes_a_schedule_a_run_takes(tmp_path):
    et = write(tmp_path, STEP)
    env = child_env()
    out = tmp_path / "s.csv"
    p = subprocess.run([sys.executable, "-m", "inasim.chakra", str(et), "--out", str(out)], capture_output=True,
                       text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert out.read_text().splitlines()[1:] == ["bytes,ready_us", "4096,140.0", "8192,180.0"]
    p = subprocess.run([sys.executable, "-m", "inasim.chakra", str(et)], capture_output=True, text=True, env=env)
    sched = json.loads(p.stdout)
    run_dir = tmp_path / "run"
    r = subprocess.run([BIN, "run", str(SOURCE_DIR / "scenarios/default.json"), "--out", str(run_dir), "--set",
                        "workload.schedule=" + json.dumps({"compute_us": sched["compute_us"], "file": str(out)})],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    import pandas as pd

    hosts = pd.read_csv(run_dir / "hosts.csv")
    assert (hosts[hosts.collective == 0].start_s.round(12) == 140e-6).all()
    assert json.loads((run_dir / "results.json").read_text())["correct"]


@pytest.mark.parametrize("nodes,words", [
    (STEP[:2] + [allreduce(3, "ag", [2], 64, kind=2)], "node 3 (ag): comm_type ALL_GATHER: only ALL_REDUCE"),
    (STEP[:3] + [node(4, "opt", COMP, [3], duration=5)], "node 4 (opt) computes after a collective"),
    (STEP[:2] + [node(3, "s", SEND, [2])], "node 3 (s): point-to-point COMM_SEND_NODE"),
    (STEP[:2] + [allreduce(3, "g", [9], 64)], "node 3 (g): depends on node 9, which the trace does not have"),
    ([node(1, "a", COMP, [2], 1), node(2, "b", COMP, [1], 1), allreduce(3, "g", [1], 64)], "form a cycle"),
    (STEP[:2] + [allreduce(3, "g", [2], 6)], "comm_size must be a multiple of 4"),
    (STEP[:2], "no ALL_REDUCE collective"),
])
def test_what_a_schedule_cannot_say_is_refused(tmp_path, nodes, words):
    et = write(tmp_path, nodes)
    p = subprocess.run([sys.executable, "-m", "inasim.chakra", str(et)], capture_output=True, text=True,
                       env=child_env())
    assert p.returncode == 2 and words in p.stderr, p.stderr


def test_a_cut_short_file_is_refused(tmp_path):
    et = tmp_path / "cut.et"
    et.write_bytes(trace(STEP)[:-7])
    with pytest.raises(chakra.ChakraError, match="cut short"):
        chakra.read(et)
    (tmp_path / "empty.et").write_bytes(b"")
    with pytest.raises(chakra.ChakraError, match="no messages"):
        chakra.read(tmp_path / "empty.et")
