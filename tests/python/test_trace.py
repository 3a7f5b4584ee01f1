"""`outputs.trace`, the structured event trace (src/ina/event-trace.h), and
its reader (python/inasim/trace.py).

- One Canary block followed end to end: every host sends it once, every
  leaf's program takes its eight hosts' packets, the leader gets the
  aggregate and the other 63 hosts get the result, and every hop's receive
  comes one fixed wire time after its dequeue.
- The trace agrees with the run's other outputs: per link direction, its
  dequeues are links.csv's tx_frames and its drops links.csv's drops; its
  dequeues on link 0 are the pcap capture's frames (times and sizes), for
  each of the four INA protocols, keyed with that protocol's name and kinds;
  a lossy SwitchML run's timeout rows are the workload's timeouts.
- Filters, max_rows, determinism and bad input (exit 2, nothing written)."""

import json
import subprocess

import pytest

from helpers import SOURCE_DIR, child_env, import_inasim
from test_pcap import BIN, RUNS, read_pcap

CANARY = ["workload.bytes=65536"]
CANARY_SCENARIO = "scenarios/canary/small-64.json"


def run(tmp_path, scenario, sets, trace, name="out", extra=()):
    out = tmp_path / name
    args = [BIN, "run", str(SOURCE_DIR / scenario), "--out", str(out)]
    if trace is not None:
        args += ["--set", "outputs.trace=" + json.dumps(trace)]
    for s in list(sets) + list(extra):
        args += ["--set", s]
    p = subprocess.run(args, capture_output=True, text=True, env=child_env(), timeout=300)
    return p, out


@pytest.fixture(scope="module")
def trace_module():
    import_inasim()
    import inasim.trace

    return inasim.trace


@pytest.fixture(scope="module")
def canary_block(tmp_path_factory, trace_module):
    p, out = run(tmp_path_factory.mktemp("block"), CANARY_SCENARIO, CANARY, {"ids": [5]})
    assert p.returncode == 0, p.stderr
    return trace_module.read(out), out


def test_one_canary_block_end_to_end(canary_block, trace_module):
    t, out = canary_block
    block = trace_module.follow(t, id=5, protocol="canary")
    assert len(block) == len(t) > 0, "the ids filter keeps block 5's rows only"
    assert set(block["job"]) == {0} and set(block["aux"]) == {0}  # no re-issue: attempt 0
    hosts = [f"h{i}" for i in range(64)]
    sent = block[(block.event == "enqueue") & block.node.isin(hosts) & (block.kind == "reduce")]
    got = block[(block.event == "receive") & block.node.isin(hosts)]
    leaders = set(got[got.kind == "reduce"].node)
    assert len(leaders) == 1
    # Every host but the leader sends block 5 once; the leader adds its own
    # data to the aggregate (canary-fgcs24 §3.1.2).
    assert sorted(sent.node) == sorted(set(hosts) - leaders), "each other host sends block 5 once"
    # Each leaf's program takes the packets of its eight hosts (ports 0-7).
    for leaf in range(8):
        taken = block[(block.event == "program_in") & (block.node == f"leaf{leaf}") & (block.port < 8)]
        assert sorted(taken.port) == list(range(8)), f"leaf{leaf} took {sorted(taken.port)}"
    # The leader gets the aggregate (reduce frames); the other 63 get the result.
    results = got[got.kind == "result"]
    assert sorted(results.node) == sorted(set(hosts) - leaders), "every other host gets the result once"
    broadcast = block[(block.event == "enqueue") & block.node.isin(hosts) & (block.kind == "result")]
    assert list(broadcast.node) == list(leaders), "the leader alone sends the result (canary-fgcs24 §3.1.2)"
    # Causality: the first send, the leaves, the result's multicast, the last delivery.
    first_out = block[(block.event == "program_out") & (block.kind == "result")].time_ps.min()
    assert sent.time_ps.max() < block[block.event == "program_in"].time_ps.min() < first_out < results.time_ps.min()
    # The aggregate's hops: every reduce frame a switch emits is routed (Canary's adaptive up-path).
    reduce_out = block[(block.event == "program_out") & (block.kind == "reduce")]
    assert reduce_out.detail.str.startswith("routed").all()


def test_every_hop_takes_one_fixed_wire_time(canary_block):
    """A frame dequeued on a link direction arrives at the other end after its
    serialisation (frame + 24 B of FCS, preamble and gap at the link's rate)
    plus a constant per direction (propagation + the receiving switch's
    pipeline): the rows pair up one to one, in order."""
    t, out = canary_block
    import pandas as pd

    links = pd.read_csv(out / "links.csv")
    checked = 0
    for (link, node), deq in t[t.event == "dequeue"].groupby(["link", "node"]):
        row = links[(links.link == link) & (links.a == node)].iloc[0]
        peer = row.b
        rcv = t[(t.event == "receive") & (t.link == link) & (t.node == peer)]
        assert len(rcv) == len(deq), f"link {link} {node}->{peer}"
        rate_bps = row.rate_gbps * 1e9
        wire = [-(-(b + 24) * 8 * 10**12 // int(rate_bps)) for b in deq.frame_bytes]
        rest = {int(r) - int(d) - w for r, d, w in zip(rcv.time_ps, deq.time_ps, wire)}
        assert len(rest) == 1 and min(rest) >= 500_000, f"link {link} {node}->{peer}: {rest}"
        checked += 1
    assert checked > 100


def test_queue_waits_are_the_frames_ahead(canary_block, trace_module):
    """inasim.trace.waits pairs each enqueue with its dequeue. At time 0 every
    host queues its first blocks at once: block 5 waits for the frames queued
    ahead of it plus the one on the wire, each a full serialisation
    (1,085 + 24 B at 100 Gb/s = 88,720 ps); a frame that found the wire idle
    (queue_bytes 0) waits 0."""
    t, _ = canary_block
    w = trace_module.waits(t)
    assert len(w) == (t.event == "dequeue").sum() and (w.wait_ps >= 0).all()
    enq = t[t.event == "enqueue"].reset_index(drop=True)
    assert list(enq.time_ps) == list(w.enqueue_ps)
    first = enq[(enq.time_ps == 0) & enq.node.str.startswith("h")]
    assert len(first) == 63
    for row, wait in zip(first.itertuples(), w.wait_ps[first.index]):
        ser = -(-(row.frame_bytes + 24) * 8 * 10**12 // (100 * 10**9))
        assert ser == 88_720 and wait == row.queue_bytes // row.frame_bytes * ser, row
    assert (w.wait_ps[enq.index[enq.queue_bytes == 0]] == 0).all()


def test_trace_counts_are_links_csv_and_the_hosts_timeouts(tmp_path, trace_module):
    """A Canary run with buffers small enough to drop (8 KB): the drops
    make the hosts' block timers expire, and each expiry is one timeout row
    (a retransmission request, or a fallback send)."""
    p, out = run(tmp_path, CANARY_SCENARIO, ["workload.bytes=262144", "switch.buffer_bytes=8000"], {})
    assert p.returncode == 0, p.stderr
    import pandas as pd

    t = trace_module.read(out)
    links = pd.read_csv(out / "links.csv")
    deq = t[t.event == "dequeue"].groupby(["link", "node"]).size()
    drops = t[t.event == "drop"].groupby(["link", "node"]).size()
    assert links.drops_buffer.sum() > 0, "the small buffer must drop, or the drop rows are untested"
    for row in links.itertuples():
        assert deq.get((row.link, row.a), 0) == row.tx_frames, (row.link, row.a)
        assert drops.get((row.link, row.a), 0) == row.drops_buffer + row.drops_loss + row.drops_link_down
    assert set(t[t.event == "drop"].detail) == {"buffer"}
    result = json.loads((out / "results.json").read_text())
    assert result["outputs"]["trace"]["rows"] == len(t)
    h = result["workload"]["canary"]["hosts"]
    timeouts = t[t.event == "timeout"]
    assert h["retransmit_requests"] > 0
    assert len(timeouts) == h["retransmit_requests"] + h["fallback_sends"]
    assert set(timeouts.protocol) == {"canary"} and timeouts.node.str.startswith("h").all()


@pytest.mark.parametrize("protocol,scenario,sets", RUNS, ids=[r[0] for r in RUNS])
def test_trace_is_the_capture_and_keys_each_protocol(tmp_path, trace_module, protocol, scenario, sets):
    trace = {"links": [0], "events": ["dequeue"]}
    p, out = run(tmp_path, scenario, sets, trace, extra=["outputs.pcap=" + json.dumps({"links": [0]})])
    assert p.returncode == 0, p.stderr
    t = trace_module.read(out)
    frames = read_pcap(next((out / "pcap").glob("link-0-*.pcap")))
    assert len(t) == len(frames) > 0
    assert [int(x) // 1000 for x in t.time_ps] == [ns for ns, _ in frames]
    assert [int(x) for x in t.frame_bytes] == [len(f) for _, f in frames]
    keyed = t[t.protocol == protocol]
    kinds = {"switchml": {"update", "result"}, "canary": {"reduce", "result"}, "panama": {"update", "result"},
             "p4sgd": {"agg", "ack", "result", "ack_complete"}}[protocol]
    assert set(keyed.kind) <= kinds and len(set(keyed.kind)) >= 2, set(keyed.kind)
    assert len(keyed) >= 0.9 * len(t), "nearly every frame on a worker's link is the protocol's"


def test_timeout_rows_are_the_workloads_timeouts(tmp_path, trace_module):
    sets = ["workload.bytes=65536", "faults.loss_rate=0.01"]
    p, out = run(tmp_path, "scenarios/switchml/fig9-pool-small.json", sets, {"events": ["timeout"]})
    assert p.returncode == 0, p.stderr
    t = trace_module.read(out)
    timeouts = json.loads((out / "results.json").read_text())["workload"]["switchml"]["timeouts"]
    assert timeouts > 0 and len(t) == timeouts and set(t.event) == {"timeout"}
    assert set(t.protocol) == {"switchml"} and t.node.str.startswith("h").all()


def test_window_max_rows_and_determinism(tmp_path, trace_module):
    trace = {"nodes": ["leaf0"], "from_us": 1, "until_us": 3, "max_rows": 50}
    p1, out1 = run(tmp_path, CANARY_SCENARIO, CANARY, trace, name="a")
    p2, out2 = run(tmp_path, CANARY_SCENARIO, CANARY, trace, name="b")
    assert p1.returncode == 0 and p2.returncode == 0
    assert (out1 / "trace.csv").read_bytes() == (out2 / "trace.csv").read_bytes()
    t = trace_module.read(out1)
    report = json.loads((out1 / "results.json").read_text())["outputs"]["trace"]
    assert len(t) == 50 and report["left_out_max_rows"] > 0
    assert t.time_ps.between(1_000_000, 2_999_999).all()
    assert t.node.isin(["leaf0"] + [f"h{i}" for i in range(8)] + [f"spine{i}" for i in range(8)]).all()


@pytest.mark.parametrize("trace,key,words", [
    ({"events": ["enque"]}, "outputs.trace.events[0]", "not one of"),
    ({"ids": [-1]}, "outputs.trace.ids[0]", "integer"),
    ({"nodes": ["nope"]}, "outputs.trace.nodes[0]", "nope"),
    ({"protocols": ["switchm"]}, "outputs.trace.protocols[0]", "not one of"),
    ({"from_us": 5, "until_us": 2}, "outputs.trace.until_us", "after"),
    ({"max_rows": 0}, "outputs.trace.max_rows", ""),
    ({"colour": 1}, "outputs.trace.colour", ""),
])
def test_bad_trace_sections_exit_2_naming_the_key(tmp_path, trace, key, words):
    p, out = run(tmp_path, CANARY_SCENARIO, CANARY, trace)
    assert p.returncode == 2, p.stderr
    assert key in p.stderr and words in p.stderr, p.stderr
    assert not out.exists()


def test_python_reader(tmp_path, trace_module):
    import inasim

    r = inasim.run(str(SOURCE_DIR / CANARY_SCENARIO), sets=CANARY + ['outputs.trace={"ids": [7], "events": '
                                                                       '["enqueue"]}'])
    t = r.trace
    at_hosts = t[t.node.str.startswith("h")]
    assert len(at_hosts) == 64 and set(t.id) == {7} and str(t.time_ps.dtype) == "Int64"
    # Empty cells read as <NA>, never as a neighbour's value.
    full = inasim.run(str(SOURCE_DIR / CANARY_SCENARIO), sets=CANARY + ['outputs.trace={"ids": [7]}']).trace
    out = full[full.event == "program_out"]
    assert len(out) > 0 and out.link.isna().all() and out.queue_bytes.isna().all()
    assert full[full.event == "enqueue"].link.notna().all()
    r.write(tmp_path / "w")
    assert trace_module.read(tmp_path / "w").equals(t)
    with pytest.raises(ValueError, match="no trace.csv"):
        trace_module.read(tmp_path)
