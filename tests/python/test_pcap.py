"""`outputs.pcap`: a run's captures are libpcap files Wireshark reads, and
tools/inasim.lua decodes each protocol's header in them. For SwitchML,
Canary, PANAMA and P4SGD, a small run captures link 0 (the first host's
link); this test parses the file itself (libpcap, Ethernet, IPv4, UDP) and
checks that tshark with the dissector decodes the same frames to the same
header values, field by field."""

import json
import os
import shutil
import struct
import subprocess

import pytest

from helpers import SOURCE_DIR, child_env

BIN = os.environ.get("INASIM_BIN", str(SOURCE_DIR / "build" / "inasim"))
LUA = SOURCE_DIR / "tools" / "inasim.lua"
TSHARK = shutil.which("tshark")

# (protocol, scenario, --set overrides): the goldens' small runs.
RUNS = [
    ("switchml", "scenarios/switchml/fig9-pool-small.json", ["workload.bytes=65536"]),
    ("canary", "scenarios/canary/small-64.json", ["workload.bytes=65536"]),
    ("panama", "scenarios/panama/small-8.json", ["workload.bytes=65536"]),
    ("p4sgd", "scenarios/p4sgd/fig8-latency-small.json", []),
]


def run_with_pcap(tmp_path, scenario, sets, pcap):
    out = tmp_path / "out"
    args = [BIN, "run", str(SOURCE_DIR / scenario), "--out", str(out), "--set", "outputs.pcap=" + json.dumps(pcap)]
    for s in sets:
        args += ["--set", s]
    p = subprocess.run(args, capture_output=True, text=True, env=child_env(), timeout=300)
    return p, out


def read_pcap(path):
    """(timestamp ns, frame bytes) records of a nanosecond libpcap file."""
    data = path.read_bytes()
    magic, major, minor, _, _, snaplen, linktype = struct.unpack("<IHHiIII", data[:24])
    assert (magic, major, minor, linktype) == (0xA1B23C4D, 2, 4, 1)
    out, at = [], 24
    while at < len(data):
        sec, nsec, incl, orig = struct.unpack("<IIII", data[at:at + 16])
        assert incl <= orig and incl <= snaplen
        out.append((sec * 10**9 + nsec, data[at + 16:at + 16 + incl]))
        at += 16 + incl
    assert at == len(data)
    return out


def udp_payload(frame):
    """(dscp, src port, dst port, UDP payload) of an Ethernet/IPv4/UDP frame, else None."""
    if len(frame) < 42 or frame[12:14] != b"\x08\x00" or frame[23] != 17:
        return None
    ihl = (frame[14] & 0xF) * 4
    udp = 14 + ihl
    sport, dport = struct.unpack(">HH", frame[udp:udp + 4])
    return frame[15] >> 2, sport, dport, frame[udp + 8:]


def expected_fields(protocol, frames):
    """What the dissector must show, per frame of `protocol`, from our own parse."""
    rows = []
    for _, f in frames:
        u = udp_payload(f)
        if u is None:
            continue
        dscp, sport, dport, pl = u
        if protocol == "switchml" and ((dport & 0xFFF0) == 0xBEE0 or (sport & 0xFFF0) == 0xBEE0):
            rows.append([str(pl[1]), f"0x{struct.unpack('>I', pl[2:6])[0]:08x}", f"0x{struct.unpack('>H', pl[6:8])[0]:04x}"])
        elif protocol == "canary" and 45501 in (sport, dport):
            rows.append([f"0x{struct.unpack('>I', pl[4:8])[0]:08x}", str(struct.unpack(">H", pl[8:10])[0]),
                         str(struct.unpack(">H", pl[10:12])[0])])
        elif protocol == "panama" and dscp == 56:
            rows.append([str(struct.unpack(">H", pl[0:2])[0]), str(pl[2]), str(struct.unpack(">I", pl[4:8])[0])])
        elif protocol == "p4sgd" and 20050 in (sport, dport):
            rows.append([str(struct.unpack(">H", pl[2:4])[0]), f"0x{struct.unpack('>I', pl[8:12])[0]:08x}",
                         str(struct.unpack(">i", pl[32:36])[0])])
    return rows


TSHARK_FIELDS = {
    "switchml": ["switchml.job_number", "switchml.tsi", "switchml.pool_index"],
    "canary": ["canary.id", "canary.counter", "canary.hosts"],
    "panama": ["panama.jid", "panama.tid", "panama.vid"],
    "p4sgd": ["p4sgd.index", "p4sgd.bitmap", "p4sgd.value1"],
}


@pytest.mark.parametrize("protocol,scenario,sets", RUNS, ids=[r[0] for r in RUNS])
def test_capture_decodes_with_the_dissector(tmp_path, protocol, scenario, sets):
    p, out = run_with_pcap(tmp_path, scenario, sets, {"links": [0]})
    assert p.returncode == 0, p.stderr
    files = sorted((out / "pcap").glob("*.pcap"))
    assert len(files) == 1 and files[0].name.startswith("link-0-"), files
    frames = read_pcap(files[0])
    want = expected_fields(protocol, frames)
    assert len(want) >= 2, f"{protocol}: {len(want)} of {len(frames)} frames are {protocol}'s"
    times = [t for t, _ in frames]
    assert times == sorted(times)
    results = json.loads((out / "results.json").read_text())
    report = results["outputs"]["pcap"]
    assert report[0]["frames"] == len(frames) and report[0]["left_out_full"] == 0
    if TSHARK is None:
        pytest.skip("tshark is not installed (scripts/setup.sh installs it)")
    t = subprocess.run([TSHARK, "-n", "-X", f"lua_script:{LUA}", "-r", str(files[0]), "-Y", protocol, "-T", "fields",
                        "-E", "separator=,"] + sum([["-e", f] for f in TSHARK_FIELDS[protocol]], []),
                       capture_output=True, text=True, timeout=120)
    assert t.returncode == 0, t.stderr
    got = [line.split(",") for line in t.stdout.splitlines() if line]
    assert got == want


def test_window_and_cap_and_bad_selections(tmp_path):
    proto, scenario, sets = RUNS[0]
    p, out = run_with_pcap(tmp_path / "all", scenario, sets, {"nodes": ["h0"]})
    assert p.returncode == 0, p.stderr
    everything = read_pcap(next((out / "pcap").glob("*.pcap")))
    # A byte cap: the file stops at max_bytes, its frames the first ones, the rest counted.
    p, out = run_with_pcap(tmp_path / "cap", scenario, sets, {"links": [0], "max_bytes": 4096})
    assert p.returncode == 0, p.stderr
    f = next((out / "pcap").glob("*.pcap"))
    assert f.stat().st_size <= 4096
    capped = read_pcap(f)
    report = json.loads((out / "results.json").read_text())["outputs"]["pcap"][0]
    assert report["frames"] == len(capped) and report["left_out_full"] == len(everything) - len(capped) > 0
    assert capped == everything[:len(capped)]
    # A time window over the middle third: exactly the full capture's frames inside it.
    t0, t1 = everything[0][0], everything[-1][0]
    lo, hi = t0 + (t1 - t0) // 3, t0 + 2 * (t1 - t0) // 3
    lo_us, hi_us = lo / 1000, hi / 1000
    p, out = run_with_pcap(tmp_path / "w", scenario, sets, {"links": [0], "from_us": lo_us, "until_us": hi_us})
    assert p.returncode == 0, p.stderr
    window = read_pcap(next((out / "pcap").glob("*.pcap")))
    want = [r for r in everything if round(lo_us * 1e6) <= r[0] * 1000 < round(hi_us * 1e6)]
    assert window and window == want
    # Bad selections: exit 2, the field named, nothing written.
    for bad, field in (({"links": [100000]}, "outputs.pcap.links[0]"), ({"nodes": ["nope"]}, "outputs.pcap.nodes[0]"),
                       ({"links": [0], "snaplen": 10}, "outputs.pcap.snaplen"), ({"link": [0]}, "link")):
        p, out = run_with_pcap(tmp_path / "bad", scenario, sets, bad)
        assert p.returncode == 2, (bad, p.stderr)
        assert field in p.stderr, (bad, p.stderr)
        assert not out.exists()


def test_python_callers_get_the_captures_as_bytes(tmp_path):
    """Result.files: the same bytes the CLI writes, by name."""
    from helpers import import_inasim

    inasim = import_inasim()
    proto, scenario, sets = RUNS[1]
    r = inasim.run(str(SOURCE_DIR / scenario), sets=sets + ['outputs.pcap={"links":[0]}'])
    (name, data), = r.files.items()
    assert name.startswith("pcap/link-0-") and isinstance(data, bytes)
    p, out = run_with_pcap(tmp_path, scenario, sets, {"links": [0]})
    assert p.returncode == 0, p.stderr
    assert (out / name).read_bytes() == data
    assert r.json["outputs"]["pcap"][0]["file"] == name


def test_samples_of_chosen_links_are_exactly_those_rows_of_all_samples(tmp_path):
    """outputs.sample_links / sample_nodes: samples.csv keeps the chosen links'
    rows, the same as in a run sampling every link."""
    scenario = SOURCE_DIR / "scenarios/background/fct-websearch-fat-tree-16.json"
    base = [BIN, "run", str(scenario), "--set", "background.flows.stop_us=200", "--set", "outputs.sample_interval_us=500"]
    full = subprocess.run(base + ["--out", str(tmp_path / "all")], capture_output=True, text=True, env=child_env())
    assert full.returncode == 0, full.stderr
    sel = subprocess.run(base + ["--set", "outputs.sample_links=[0,3]", "--set", 'outputs.sample_nodes=["h5"]',
                                 "--out", str(tmp_path / "sel")], capture_output=True, text=True, env=child_env())
    assert sel.returncode == 0, sel.stderr
    links = (tmp_path / "all" / "links.csv").read_text().splitlines()[1:]
    chosen = {"0", "3"} | {row.split(",")[0] for row in links if "h5" in row.split(",")[1:3]}
    all_rows = (tmp_path / "all" / "samples.csv").read_text().splitlines()
    want = [all_rows[0]] + [r for r in all_rows[1:] if r.split(",")[1] in chosen]
    got = (tmp_path / "sel" / "samples.csv").read_text().splitlines()
    assert len(chosen) == 3 and len(got) > 1 and got == want
    for sets, field in ((["--set", "outputs.sample_interval_us=0", "--set", "outputs.sample_links=[0]"], "outputs.sample_links"),
                        (["--set", "outputs.sample_nodes=[\"nope\"]"], "outputs.sample_nodes[0]")):
        p = subprocess.run(base + sets + ["--out", str(tmp_path / "bad")], capture_output=True, text=True, env=child_env())
        assert p.returncode == 2 and field in p.stderr, p.stderr
        assert not (tmp_path / "bad").exists()


def test_gzip_writes_every_table_compressed_and_byte_identical_inside(tmp_path):
    import gzip

    scenario = SOURCE_DIR / "scenarios/default.json"
    base = [BIN, "run", str(scenario), "--set", "workload.bytes=65536", "--quiet"]
    for name, extra in (("plain", []), ("gz", ["--set", "outputs.gzip=true"]), ("gz2", ["--set", "outputs.gzip=true"])):
        p = subprocess.run(base + extra + ["--out", str(tmp_path / name)], capture_output=True, text=True, env=child_env())
        assert p.returncode == 0, p.stderr
    plain = sorted(f.name for f in (tmp_path / "plain").glob("*.csv"))
    assert plain and sorted(f.name for f in (tmp_path / "gz").glob("*.csv.gz")) == [n + ".gz" for n in plain]
    assert not list((tmp_path / "gz").glob("*.csv"))
    for n in plain:
        assert gzip.decompress((tmp_path / "gz" / (n + ".gz")).read_bytes()) == (tmp_path / "plain" / n).read_bytes()
        assert (tmp_path / "gz" / (n + ".gz")).read_bytes() == (tmp_path / "gz2" / (n + ".gz")).read_bytes()
