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
- reduce-scatter, all-gather (comm_size one rank's shard: bytes x the
  group) and broadcast (its root given) from one trace; communicators from
  every rank's trace (8 ranks: TP groups of 4, DP pairs), which a run takes;
- what a schedule cannot say is refused naming the node (exit 2): another
  collective type, compute after a collective, point-to-point, a missing
  dependency, a cycle, a cut-short file, a subgroup from one trace, ranks out
  of order or disagreeing, a broadcast without its root."""

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


def node(nid, name, ntype, deps=(), duration=0, attrs=(), packed=False, inputs=None, ctrl=()):
    body = field(1, 0, nid) + field(2, 2, name.encode()) + field(3, 0, ntype)
    if inputs is not None:
        body += field(8, 2, field(1, 2, inputs.encode()))  # IOInfo.values
    body += b"".join(field(4, 0, d) for d in ctrl)  # ctrl_deps: a call-stack parent, no order
    if packed and deps:
        body += field(5, 2, b"".join(varint(d) for d in deps))  # data_deps, packed
    else:
        body += b"".join(field(5, 0, d) for d in deps)  # data_deps, one by one
    body += field(7, 0, duration)
    body += b"".join(field(10, 2, attr(k, v)) for k, v in attrs)
    return body


def trace(nodes, version="0.0.4"):
    meta = field(1, 2, version.encode()) + field(2, 2, attr("schema", "test"))
    return b"".join(varint(len(m)) + m for m in [meta] + nodes)


def allreduce(nid, name, deps, size, kind=0, pg="0"):
    return node(nid, name, COLL, deps, attrs=[("is_cpu_op", False), ("comm_type", kind), ("comm_size", size),
                                              ("pg_name", pg)])


def pg_init(nid, groups):
    """The METADATA node listing process groups, as Chakra's converter writes
    it: the str() of a list holding PyTorch's pg_config_info as JSON."""
    entries = [{"pg_name": name, "pg_desc": desc, "backend_config": "cuda:nccl", "ranks": ranks,
                "group_size": size, "group_count": len(groups)} for name, desc, ranks, size in groups]
    return node(nid, "## process_group:init ##", META, inputs=str([json.dumps(entries)]))


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
    (STEP[:2] + [allreduce(3, "a2a", [2], 64, kind=6)], "node 3 (a2a): comm_type ALL_TO_ALL: a schedule runs"),
    (STEP[:2] + [allreduce(3, "ag", [2], 64, kind=2)], "node 3 (ag): ALL_GATHER's group size is not in the trace"),
    (STEP[:2] + [allreduce(3, "bc", [2], 64, kind=5)], "node 3 (bc): BROADCAST: the root is neither in the trace"),
    (STEP[:2] + [allreduce(3, "g", [2], 64, pg="7")], "node 3: process group '7' is not listed"),
    (STEP[:3] + [node(4, "opt", COMP, [3], duration=5)], "node 4 (opt) computes after a collective"),
    (STEP[:2] + [node(3, "s", SEND, [2])], "node 3 (s): point-to-point COMM_SEND_NODE"),
    (STEP[:2] + [allreduce(3, "g", [9], 64)], "node 3 (g): depends on node 9, which the trace does not have"),
    ([node(1, "a", COMP, [2], 1), node(2, "b", COMP, [1], 1), allreduce(3, "g", [1], 64)], "form a cycle"),
    (STEP[:2] + [allreduce(3, "g", [2], 6)], "comm_size must be a multiple of 4"),
    (STEP[:2], "no collective"),
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


WORLD8 = ("0", "default_pg", [], 8)


def test_kinds_from_one_trace(tmp_path):
    """comm_size is the op's input (Chakra's converter): an all-gather's is
    one rank's shard, so its bytes (the gathered tensor) are 8 x 1024; a
    reduce-scatter's and a broadcast's are the whole tensor."""
    nodes = [pg_init(9, [WORLD8]), node(1, "backward", COMP, duration=50),
             allreduce(2, "rs", [1], 4096, kind=7), allreduce(3, "ag", [2], 1024, kind=2),
             allreduce(4, "bc", [1], 2048, kind=5)]
    s = chakra.schedule([chakra._node(n) for n in nodes], broadcast_root=3)
    assert s["collectives"] == [{"bytes": 4096, "ready_us": 50.0, "kind": "reduce_scatter"},
                                {"bytes": 8192, "ready_us": 50.0, "kind": "all_gather"},
                                {"bytes": 2048, "ready_us": 50.0, "kind": "broadcast", "root": 3}]
    assert "communicators" not in s
    out = tmp_path / "k.csv"
    p = subprocess.run([sys.executable, "-m", "inasim.chakra", str(write(tmp_path, nodes[:4])), "--out", str(out)],
                       capture_output=True, text=True, env=child_env())
    assert p.returncode == 0, p.stderr
    assert out.read_text().splitlines()[1:] == ["bytes,ready_us,kind", "4096,50.0,reduce_scatter",
                                                "8192,50.0,all_gather"]


def rank_trace(rank):
    """Rank r of 8: TP groups of 4 (pg "1": ranks 0-3, "2": 4-7), DP pairs
    (pg "3".."6": {0,4}, {1,5}, ...), as PyTorch names them in creation
    order; each rank's trace lists its own groups only."""
    tp = ("1", "tp", [0, 1, 2, 3], 4) if rank < 4 else ("2", "tp", [4, 5, 6, 7], 4)
    dp = (str(3 + rank % 4), "dp", [rank % 4, rank % 4 + 4], 2)
    return [pg_init(9, [WORLD8, tp, dp]), node(1, "backward", COMP, duration=20),
            allreduce(2, "tp_ar", [1], 4096, pg=tp[0]), allreduce(3, "dp_ag", [2], 2048, kind=2, pg=dp[0]),
            allreduce(4, "world_rs", [3], 8192, kind=7)]


def test_communicators_from_every_ranks_trace(tmp_path):
    traces = [str(write(tmp_path, rank_trace(r), name=f"rank{r}.et")) for r in range(8)]
    p = subprocess.run([sys.executable, "-m", "inasim.chakra", *traces], capture_output=True, text=True,
                       env=child_env())
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["communicators"] == {"tp": [[0, 1, 2, 3], [4, 5, 6, 7]], "dp": [[0, 4], [1, 5], [2, 6], [3, 7]]}
    assert s["collectives"] == [{"bytes": 4096, "ready_us": 20.0, "communicator": "tp"},
                                {"bytes": 4096, "ready_us": 20.0, "kind": "all_gather", "communicator": "dp"},
                                {"bytes": 8192, "ready_us": 20.0, "kind": "reduce_scatter"}]
    run_dir = tmp_path / "run"
    r = subprocess.run([BIN, "run", str(SOURCE_DIR / "scenarios/default.json"), "--out", str(run_dir), "--set",
                        "workload.schedule=" + json.dumps(s)], capture_output=True, text=True, env=child_env(),
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads((run_dir / "results.json").read_text())["correct"]


@pytest.mark.parametrize("order,words", [
    ([0], "rank0.et: node 2: process group '1' (tp [0, 1, 2, 3]) is not every rank: give every rank's trace"),
    ([1, 0, 2, 3, 4, 5, 6, 7], "rank1.et: node 3: process group '4' [1, 5] does not hold rank 0"),
    ([0, 1, 2, 3, 4, 5, 6], "do not split ranks 0..6"),
])
def test_groups_that_cannot_be_a_communicator_are_refused(tmp_path, order, words):
    traces = [str(write(tmp_path, rank_trace(r), name=f"rank{r}.et")) for r in order]
    p = subprocess.run([sys.executable, "-m", "inasim.chakra", *traces], capture_output=True, text=True,
                       env=child_env())
    assert p.returncode == 2 and words in p.stderr, p.stderr


def test_ranks_that_disagree_are_refused(tmp_path):
    traces = [write(tmp_path, rank_trace(r), name=f"rank{r}.et") for r in range(8)]
    bad = rank_trace(5)
    bad[-1] = allreduce(4, "world_rs", [3], 4096, kind=7)
    traces[5] = write(tmp_path, bad, name="rank5.et")
    p = subprocess.run([sys.executable, "-m", "inasim.chakra", *map(str, traces)], capture_output=True, text=True,
                       env=child_env())
    assert p.returncode == 2 and "rank5.et: collective 2 (in readiness order) differs" in p.stderr, p.stderr


def test_a_world_of_another_size_than_the_traces_is_refused(tmp_path):
    traces = [str(write(tmp_path, [pg_init(9, [WORLD8])] + STEP, name=f"r{r}.et")) for r in range(2)]
    p = subprocess.run([sys.executable, "-m", "inasim.chakra", *traces], capture_output=True, text=True,
                       env=child_env())
    assert p.returncode == 2 and "node 3 (bucket0): its group has 8 ranks" in p.stderr and "2 traces" in p.stderr, \
        p.stderr


def test_data_deps_order_ctrl_deps_do_not_and_the_cpu_runs_beside_the_gpu():
    """As Chakra's feeder and ASTRA-sim run a trace: only data_deps order
    nodes (a ctrl_dep, even to a node the trace lacks, is the call-stack
    parent); CPU ops (is_cpu_op) and GPU kernels each run one at a time on
    their own resource, so a 30 us CPU op and a 40 us kernel overlap; the
    c10d op on the CPU that launches an all-reduce is a CPU op of its
    duration, and the kernel node after it is the collective."""
    cpu = ("is_cpu_op", True)
    nodes = [node(1, "aten::add", COMP, duration=30, attrs=[cpu], ctrl=[99]),
             node(2, "kernel_fwd", COMP, duration=40, ctrl=[1]),
             node(3, "c10d::allreduce_", COLL, [1], duration=5, attrs=[cpu]),
             node(4, "kernel_bwd", COMP, [2], duration=40),
             allreduce(5, "ncclKernel_AllReduce", [3, 4], 4096)]
    s = chakra.schedule([chakra._node(n) for n in nodes])
    # CPU: 1 [0, 30], 3 [30, 35]; GPU: 2 [0, 40], 4 [40, 80]; the kernel is ready at 80.
    assert s == {"compute_us": 80.0, "after_us": 0, "collectives": [{"bytes": 4096, "ready_us": 80.0}]}


def test_a_broadcasts_root_is_its_c10d_ops_root_rank():
    """PyTorch's c10d::broadcast_(tensors, process_group, root_rank,
    root_tensor, timeout) launches the kernel (one of its data_deps); its
    inputs, as Chakra's converter writes them (str() of the values), give
    the root, which --broadcast-root does not override; without the op the
    option gives it."""
    launch = node(1, "c10d::broadcast_(0)", COLL, duration=3, attrs=[("is_cpu_op", True)],
                  inputs="[[[430, 431, 0, 53120, 4, 'cuda:0']], '<Object>', 5, 0, -1]")
    nodes = [launch, allreduce(2, "ncclKernel_Broadcast", [1], 4096, kind=5), allreduce(3, "bc2", [], 4096, kind=5)]
    s = chakra.schedule([chakra._node(n) for n in nodes], broadcast_root=2)
    assert [(c["ready_us"], c["root"]) for c in s["collectives"]] == [(0.0, 2), (3.0, 5)]
