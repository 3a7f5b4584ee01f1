"""`inasim-p4 replay`: a dataplane model driven with hex packets from JSON lines,
without ns-3 (here the SwitchML model: a 2-worker job in 256 B mode)."""

import json
import struct
import subprocess

import pytest

from helpers import inasim_p4

P4 = inasim_p4()

SWITCH_MAC, SWITCH_IP = "02:00:00:00:00:fe", "10.0.0.254"
CONFIG = {
    "switch_mac": SWITCH_MAC,
    "switch_ip": SWITCH_IP,
    "elements_per_packet": 64,
    "workers": [{"id": w, "port": 10 + w, "mac": f"02:00:00:00:00:0{w + 1}", "ip": f"10.0.0.{w + 1}"} for w in (0, 1)],
}


def checksum(header: bytes) -> int:
    s = sum(struct.unpack("!10H", header))
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def worker_packet(w: int, values, slot=0, job=7, tsi=0x11223344) -> bytes:
    """Ethernet / IPv4 / UDP / switchml_h (8 B) / exponents (2 B) / 64 x int32."""
    data = struct.pack("!64i", *values)
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + 10 + len(data), 0x1234, 0x4000, 63, 17, 0,
                               bytes([10, 0, 0, w + 1]), bytes([10, 0, 0, 254])))
    ip[10:12] = struct.pack("!H", checksum(bytes(ip)))
    udp = struct.pack("!HHHH", 20000 + w, 0xBEE0 + w, 8 + 10 + len(data), 0)
    sml = struct.pack("!BBIH", 0x01, job, tsi, slot & 0x3FFF) + b"\x00\x00"  # msg_type 0, size 256 B
    eth = bytes.fromhex(SWITCH_MAC.replace(":", "")) + bytes([2, 0, 0, 0, 0, w + 1]) + b"\x08\x00"
    return eth + bytes(ip) + udp + sml + data


def replay(tmp_path, lines, *extra):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps(CONFIG))
    return subprocess.run([str(P4), "replay", "switchml", "--config", str(cfg), *extra],
                          input="".join(json.dumps(l) + "\n" for l in lines), capture_output=True, text=True)


def test_two_workers_reduce_and_every_worker_gets_the_sum(tmp_path):
    a = [i - 32 for i in range(64)]
    b = [1000 * i for i in range(64)]
    a[1] = 2**31 - 1
    b[1] = 5  # int32 wrap-around: (2^31 - 1) + 5
    p = replay(tmp_path, [{"port": 10, "hex": worker_packet(0, a).hex()},
                          {"port": 11, "hex": worker_packet(1, b).hex()}], "--dump")
    assert p.returncode == 0, p.stderr
    first, second = (json.loads(l) for l in p.stdout.splitlines())
    assert first["claimed"] and first["out"] == []  # consumed into the registers
    assert first["state"] != {}
    assert second["claimed"] and len(second["out"]) == 2
    expect = [((x + y + 2**31) % 2**32) - 2**31 for x, y in zip(a, b)]
    for w, out in enumerate(second["out"]):
        frame = bytes.fromhex(out["hex"])
        assert out["port"] == 10 + w
        assert frame[0:6] == bytes([2, 0, 0, 0, 0, w + 1])  # to that worker
        assert frame[30:34] == bytes([10, 0, 0, w + 1])
        assert checksum(frame[14:34]) == 0  # a valid IPv4 header checksum sums to 0xffff
        assert list(struct.unpack("!64i", frame[52:52 + 256])) == expect
        assert out["latency_ns"] == pytest.approx(520 * second["passes"])


def test_other_packets_are_not_claimed_and_bad_input_names_the_line(tmp_path):
    not_sml = bytearray(worker_packet(0, [0] * 64))
    not_sml[36:38] = struct.pack("!H", 53)  # UDP destination port 53
    p = replay(tmp_path, [{"port": 10, "hex": bytes(not_sml).hex()}])
    assert p.returncode == 0 and json.loads(p.stdout)["claimed"] is False
    p = replay(tmp_path, [{"port": 10, "hex": "zz"}])
    assert p.returncode == 2 and "stdin:1" in p.stderr and "not a hex digit" in p.stderr
    p = replay(tmp_path, [{"hex": "00"}])
    assert p.returncode == 2 and "stdin:1" in p.stderr and '"port"' in p.stderr
    p = subprocess.run([str(P4), "replay", "nosuch"], capture_output=True, text=True)
    assert p.returncode == 2 and "switchml" in p.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"switch_mac": "02:00:00:00:00:fe"}')
    p = subprocess.run([str(P4), "replay", "switchml", "--config", str(bad)], capture_output=True, text=True, input="")
    assert p.returncode == 2 and "bad.json" in p.stderr


# --- Canary (canary-fgcs24): tenant shares of the descriptor table (§5.2.4) ---

CANARY_LEADER = bytes([10, 0, 0, 9])


def canary_packet(block_id: int, values, port_host: int) -> bytes:
    """Ethernet / IPv4 / UDP 45501 / canary_h (19 B) / int32 elements, as a host sends a reduce packet."""
    data = struct.pack(f"!{len(values)}i", *values)
    # destination, id, counter 1, hosts 4, children 0, switch address 0, flags 0
    hdr = CANARY_LEADER + struct.pack("!IHHIHB", block_id, 1, 4, 0, 0, 0)
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + len(hdr) + len(data), 1, 0x4000, 64, 17, 0,
                               bytes([10, 0, 0, port_host]), CANARY_LEADER))
    ip[10:12] = struct.pack("!H", checksum(bytes(ip)))
    udp = struct.pack("!HHHH", 40000, 45501, 8 + len(hdr) + len(data), 0)
    eth = bytes([2, 0, 0, 0, 0, 0xfe]) + bytes([2, 0, 0, 0, 0, port_host]) + b"\x08\x00"
    return eth + bytes(ip) + udp + hdr + data


def packet_lines(stdout):
    """The replay's per-packet lines (the timers it fires after the input have none)."""
    return [r for r in map(json.loads, stdout.splitlines()) if "line" in r]


def canary_replay(tmp_path, config, lines):
    cfg = tmp_path / "canary.json"
    cfg.write_text(json.dumps(config))
    return subprocess.run([str(P4), "replay", "canary", "--config", str(cfg), "--dump"],
                          input="".join(json.dumps(l) + "\n" for l in lines), capture_output=True, text=True)


def test_canary_tenant_shares_keep_two_applications_block_apart(tmp_path):
    config = {"num_ports": 8, "elements_per_packet": 4, "table_size": 1024, "index_hash": "direct"}
    app1, app2 = 1 << 24 | 5, 2 << 24 | 5  # both block 5: the same direct index in one shared table
    lines = [{"port": 1, "hex": canary_packet(app1, [1, 2, 3, 4], 1).hex()},
             {"port": 2, "hex": canary_packet(app2, [10, 20, 30, 40], 2).hex()}]
    shared = canary_replay(tmp_path, config, lines)
    assert shared.returncode == 0, shared.stderr
    first, second = packet_lines(shared.stdout)
    assert first["claimed"] and first["out"] == []  # allocated, stored, dropped (§3.1.1)
    assert len(second["out"]) == 1  # collision: bypassed towards the leader (§3.2.1)
    frame = bytes.fromhex(second["out"][0]["hex"])
    assert frame[42 + 18] & 0x80 == 0x80 and frame[42 + 12:42 + 16] == struct.pack("!I", 2)
    assert second["state"]["stats"]["collisions"] == 1

    config["partitions"] = [{"application_id": 1, "base": 0, "size": 512},
                            {"application_id": 2, "base": 512, "size": 512}]
    split = canary_replay(tmp_path, config, lines)
    assert split.returncode == 0, split.stderr
    first, second = packet_lines(split.stdout)
    assert first["out"] == [] and second["out"] == []  # each allocates in its own share
    state = second["state"]
    assert [(d["id"], d["index"], d["accumulator"]) for d in state["descriptors"]] == [
        (app1, 5, [1, 2, 3, 4]), (app2, 512 + 5, [10, 20, 30, 40])]
    assert state["stats"]["collisions"] == 0 and state["stats"]["allocated"] == 2
    assert state["config"]["partitions"][1] == {"application_id": 2, "base": 512, "size": 512}

    config["partitions"][1]["base"] = 256  # overlaps application 1's share
    bad = canary_replay(tmp_path, config, [])
    assert bad.returncode == 2 and "application 2" in bad.stderr and "overlaps" in bad.stderr


# --- Static reduction trees (canary-fgcs24 §5.2's baseline): every registered program replays ---

def static_tree_packet(block_id: int, values, port_host: int, tree: int = 0) -> bytes:
    """A reduce packet of p4model/statictree: UDP 45503, the Canary header layout
    (children = the tree id), int32 elements."""
    data = struct.pack(f"!{len(values)}i", *values)
    hdr = bytes(4) + struct.pack("!IHHIHB", block_id, 1, 2, tree, 0, 0)  # counter 1, hosts 2
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + len(hdr) + len(data), 1, 0x4000, 64, 17, 0,
                               bytes([10, 0, 0, port_host]), bytes([10, 0, 0, 254])))
    ip[10:12] = struct.pack("!H", checksum(bytes(ip)))
    udp = struct.pack("!HHHH", 40000, 45503, 8 + len(hdr) + len(data), 0)
    eth = bytes([2, 0, 0, 0, 0, 0xfe]) + bytes([2, 0, 0, 0, 0, port_host]) + b"\x08\x00"
    return eth + bytes(ip) + udp + hdr + data


def test_static_tree_root_sums_its_children_and_multicasts_the_result(tmp_path):
    cfg = tmp_path / "tree.json"
    cfg.write_text(json.dumps({"num_ports": 4, "elements_per_packet": 4, "slots_per_tree": 16,
                               "trees": [{"tree_id": 3, "child_ports": [1, 0]}]}))
    a, b = [1, -2, 2**31 - 1, 7], [10, 20, 1, -7]
    lines = [{"port": 0, "hex": static_tree_packet(9, a, 1, tree=3).hex()},
             {"port": 1, "hex": static_tree_packet(9, b, 2, tree=3).hex()}]
    p = subprocess.run([str(P4), "replay", "static_tree", "--config", str(cfg), "--dump"],
                       input="".join(json.dumps(l) + "\n" for l in lines), capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    first, second = packet_lines(p.stdout)
    assert first["claimed"] and first["out"] == []
    out, = second["out"]  # the root: one multicast down to both children
    assert out["ports"] == [0, 1]
    frame = bytes.fromhex(out["hex"])
    assert frame[30:34] == bytes([255, 255, 255, 255])
    assert frame[42 + 18] == 0x40  # the multicast bit (canary-fgcs24 §4.1): the result, going down
    assert struct.unpack("!IH", frame[46:52]) == (9, 2)  # block 9, both hosts reduced into it
    expect = [((x + y + 2**31) % 2**32) - 2**31 for x, y in zip(a, b)]  # int32 wrap-around included
    assert list(struct.unpack("!4i", frame[61:77])) == expect
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"trees": [{"tree_id": 0, "child_ports": [70]}]}))
    p = subprocess.run([str(P4), "replay", "static_tree", "--config", str(bad)], capture_output=True, text=True,
                       input="")
    assert p.returncode == 2 and "child_ports[0]" in p.stderr


def test_every_registered_dataplane_is_a_replay_program():
    reg = json.loads((P4.parent / "protocols.json").read_text())
    programs = {m["dataplane"] for m in reg if m["dataplane"]}
    assert programs == {"switchml", "canary", "p4sgd", "panama", "static_tree"}
    p = subprocess.run([str(P4), "--help"], capture_output=True, text=True)
    listed = p.stdout.split("programs:")[-1]
    assert all(name in listed for name in programs), listed


# --- PANAMA on a switch of a job's trees (protocols/panama/dataplane/tree_switch.h) ---

def panama_packet(port: int, value: float, dst_ip=(239, 0, 7, 0), vid: int = 0) -> bytes:
    """An aggregation packet of JID 7, tree 0: DSCP 56, UDP, the 14 B header, one fp32."""
    payload = struct.pack("!HBBIH4x", 7, 0, 0, vid, 0xFFFF) + struct.pack("!f", value)
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 56 << 2, 20 + 8 + len(payload), 1, 0, 64, 17, 0,
                               bytes([10, 0, 0, port + 1]), bytes(dst_ip)))
    ip[10:12] = struct.pack("!H", checksum(bytes(ip)))
    udp = struct.pack("!HHHH", 6000, 6000, 8 + len(payload), 0)
    return bytes([1, 0, 0x5E, 0, 7, 0]) + bytes([2, 0, 0, 0, 0, port + 1]) + b"\x08\x00" + bytes(ip) + udp + payload


def test_panama_tree_switch_steers_results_up_and_rewrites_the_last_hop(tmp_path):
    cfg = tmp_path / "panama.json"
    cfg.write_text(json.dumps({"num_ports": 3, "jobs": [{"jid": 7, "ports": [0, 1], "tree_routes": [
        {"parent_port": 2, "children": [{"port": 0, "ip": "10.0.0.1", "mac": "02:00:0a:00:00:01"}, {"port": 1}]}]}]}))
    down = panama_packet(2, 5.0)
    lines = [{"port": 0, "hex": panama_packet(0, 1.0).hex()}, {"port": 1, "hex": panama_packet(1, 0.5).hex()},
             {"port": 2, "hex": down.hex()}]
    p = subprocess.run([str(P4), "replay", "panama", "--config", str(cfg), "--dump"],
                       input="".join(json.dumps(l) + "\n" for l in lines), capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    first, up, back = packet_lines(p.stdout)
    assert first["out"] == []
    result, = up["out"]  # the sum goes to the parent only
    assert result["port"] == 2
    assert struct.unpack("!f", bytes.fromhex(result["hex"])[-4:]) == (1.5,)
    to_worker, to_switch = back["out"]  # the parent's result down to both children
    assert (to_worker["port"], to_switch["port"]) == (0, 1)
    assert bytes.fromhex(to_switch["hex"]) == down
    w = bytes.fromhex(to_worker["hex"])
    assert w[:6] == bytes([2, 0, 0x0A, 0, 0, 1]) and w[30:34] == bytes([10, 0, 0, 1])
    assert checksum(w[14:34]) == 0 and w[34:] == down[34:]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"jobs": [{"jid": 7, "ports": [0], "tree_routes": [{"children": [{"port": 1, "ip": "x",
                                                                                                "mac": "y"}]}]}]}))
    p = subprocess.run([str(P4), "replay", "panama", "--config", str(bad)], capture_output=True, text=True, input="")
    assert p.returncode == 2 and "jobs[0].tree_routes[0].children[0].ip" in p.stderr
