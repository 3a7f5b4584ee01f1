"""A protocol registered by adding files only (tests/toy/README.md).

inasim-toy and inasim-p4-toy are the simulator and inasim-p4 built with a
registry generated over protocols/ and tests/toy/protocols/. The toy protocol
must run end to end through them like any shipped protocol (exact sums, its
scenario section parsed and checked, placement refused by validate, its switch
program replayed by name), while the shipped binaries never see it."""

import json
import os
import struct
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TOY = os.environ.get("INASIM_TOY_BIN")
TOY_P4 = os.environ.get("INASIM_TOY_P4_BIN")
SHIPPED = os.environ.get("INASIM_BIN")
SCENARIO = HERE / "toy.json"

pytestmark = pytest.mark.skipif(not (TOY and TOY_P4 and SHIPPED), reason="run by ctest (toy_protocol)")


def run(*args, cwd=None):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_the_toy_is_registered_only_in_the_toy_build():
    toy = json.loads(run(TOY, "protocols", "--json").stdout)
    shipped = json.loads(run(SHIPPED, "protocols", "--json").stdout)
    names = [p["name"] for p in toy]
    assert "toy" in names and "toy" not in [p["name"] for p in shipped]
    assert set(names) - {"toy"} == {p["name"] for p in shipped}  # every shipped protocol is still there
    entry = next(p for p in toy if p["name"] == "toy")
    assert entry["folder"] == "tests/toy/protocols/toy" and entry["dataplane"] == "toy"
    assert "toy" in run(TOY_P4, "--help").stdout and "toy" not in run(Path(SHIPPED).with_name("inasim-p4"), "--help").stdout


def test_the_toy_runs_and_every_element_is_the_exact_sum(tmp_path):
    p = run(TOY, "run", SCENARIO, "--out", tmp_path / "toy", "--progress", "off")
    assert p.returncode == 0, p.stderr
    assert "result: CORRECT - 524288 elements checked" in p.stdout  # 4 workers x 65536 elements x 2
    w = json.loads((tmp_path / "toy" / "results.json").read_text())["workload"]
    assert w["protocol"] == "toy" and w["correct"] is True and w["mismatches"] == 0
    assert w["elements_checked"] == 4 * 65536 * 2 and w["iterations_completed"] == 2
    rows = (tmp_path / "toy" / "collectives.csv").read_text().splitlines()
    assert rows[0].startswith("job,iteration,start_s,end_s,duration_s,goodput_gbps,correct")
    assert len(rows) == 3 and all(r.split(",")[6] == "1" for r in rows[1:])
    # 8 + 8 + 20 + 14 + 24 = 74 framing bytes per 256 B of data cap a worker below line rate.
    assert 0 < w["goodput_gbps"] < 100 * 256 / (256 + 74)


def test_the_toy_section_is_checked_and_placement_is_refused(tmp_path):
    p = run(TOY, "validate", SCENARIO, "--set", "workload.toy.window_packets=0")
    assert p.returncode == 2 and "workload.toy.window_packets" in p.stderr
    p = run(TOY, "validate", SCENARIO, "--set", "workload.toy.bogus=1")
    assert p.returncode == 2 and "bogus" in p.stderr
    p = run(TOY, "validate", SCENARIO, "--set",
            'topology={"type":"leaf_spine","leaves":2,"spines":1,"hosts_per_leaf":2}')
    assert p.returncode == 2 and "workload.hosts: the toy protocol aggregates on one switch" in p.stderr
    p = run(SHIPPED, "validate", SCENARIO)  # the shipped simulator does not know it
    assert p.returncode == 2 and "toy" in p.stderr


def contribution(seq, values):
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + 8 + 4 * len(values), 0, 0, 64, 17, 0,
                     bytes([10, 0, 0, 1]), bytes([10, 255, 0, 1]))
    udp = struct.pack("!HHHH", 47000, 47000, 8 + 8 + 4 * len(values), 0)
    body = struct.pack("!IBBH", seq, 0, 0, 0) + b"".join(struct.pack("!I", v) for v in values)
    return bytes(12) + b"\x08\x00" + ip + udp + body


def test_the_toy_switch_replays_by_name(tmp_path):
    cfg = tmp_path / "toy.json"
    cfg.write_text(json.dumps({"worker_ports": [0, 1], "elements_per_packet": 2, "window_packets": 4}))
    lines = [json.dumps({"port": 0, "hex": contribution(9, [5, 0xFFFFFFFF]).hex()}),
             json.dumps({"port": 1, "hex": contribution(9, [6, 3]).hex()})]
    p = subprocess.run([TOY_P4, "replay", "toy", "--config", str(cfg)], input="\n".join(lines) + "\n",
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    first, second = (json.loads(l) for l in p.stdout.splitlines())
    assert first["claimed"] and first["out"] == []
    out, = second["out"]
    assert out["ports"] == [0, 1]
    frame = bytes.fromhex(out["hex"])
    assert struct.unpack("!IBBHII", frame[42:58]) == (9, 1, 0, 2, 11, 2)  # 0xffffffff + 3 wraps to 2
    bad = run(TOY_P4, "replay", "toy", "--config", cfg.parent / "missing.json")
    assert bad.returncode == 2
    cfg.write_text(json.dumps({"worker_ports": [0, 0]}))
    bad = subprocess.run([TOY_P4, "replay", "toy", "--config", str(cfg)], input="", capture_output=True, text=True)
    assert bad.returncode == 2 and "worker_ports" in bad.stderr
