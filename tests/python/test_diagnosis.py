"""hosts.csv (each rank's part of each collective) and results.json's
"diagnosis" / the summary's "why slow" line (src/ina/diagnosis.h).

- hosts.csv agrees with collectives.csv: per collective, the earliest rank
  start and the latest rank end are its start and end; the slowest rank of
  each iteration waits exactly the compute gap before the next one (the
  ranks start together after the last one finishes); the first rank to
  finish has lag 0.
- Its timeouts column sums to the hosts' timer expiries that the workload
  counts (Canary: retransmission requests + fallback sends), with buffers
  small enough to drop.
- The diagnosis' rankings are links.csv's and hosts.csv's extremes.
- hosts.csv is written for the protocols that time each rank (SwitchML,
  Canary, PANAMA, the host rings), not for P4SGD (ops timed as a whole)."""

import json
import subprocess

import pytest

from helpers import SOURCE_DIR, child_env
from test_pcap import BIN, RUNS

CANARY = "scenarios/canary/small-64.json"


def run(tmp_path, scenario, sets, name="out"):
    out = tmp_path / name
    args = [BIN, "run", str(SOURCE_DIR / scenario), "--out", str(out)]
    for s in sets:
        args += ["--set", s]
    p = subprocess.run(args, capture_output=True, text=True, env=child_env(), timeout=300)
    assert p.returncode == 0, p.stderr
    return out, p.stdout


@pytest.fixture(scope="module")
def lossy(tmp_path_factory):
    sets = ["workload.bytes=262144", "switch.buffer_bytes=8000", "workload.iterations=3", "workload.compute_gap_us=5"]
    return run(tmp_path_factory.mktemp("lossy"), CANARY, sets)


def test_hosts_csv_is_collectives_csv_per_rank(lossy):
    import pandas as pd

    out, _ = lossy
    hosts = pd.read_csv(out / "hosts.csv")
    coll = pd.read_csv(out / "collectives.csv")
    assert len(hosts) == 64 * 3 and sorted(set(hosts.collective)) == [0, 1, 2]
    per = hosts.groupby("collective")
    assert list(per.start_s.min()) == list(coll.start_s) and list(per.end_s.max()) == list(coll.end_s)
    assert (hosts.comm_s.round(12) == (hosts.end_s - hosts.start_s).round(12)).all()
    assert list(per.lag_s.min()) == [0.0, 0.0, 0.0]
    gaps = per.gap_before_s.min()
    assert gaps.iloc[0] != gaps.iloc[0]  # no gap before the first collective (NaN)
    assert list(gaps.iloc[1:].round(12)) == [5e-6, 5e-6], "the last rank waits exactly compute_gap_us"
    assert sorted(hosts[hosts.collective == 0].host) == sorted(f"h{i}" for i in range(64))


def test_timeouts_column_is_the_workloads_count(lossy):
    import pandas as pd

    out, _ = lossy
    hosts = pd.read_csv(out / "hosts.csv")
    h = json.loads((out / "results.json").read_text())["workload"]["canary"]["hosts"]
    assert h["retransmit_requests"] > 0
    assert hosts.timeouts.sum() == h["retransmit_requests"] + h["fallback_sends"]


def test_diagnosis_ranks_the_extremes(lossy):
    import pandas as pd

    out, stdout = lossy
    d = json.loads((out / "results.json").read_text())["diagnosis"]
    links = pd.read_csv(out / "links.csv")
    links["drops"] = links.drops_buffer + links.drops_loss + links.drops_link_down
    top = d["links_by_drops"]
    assert top and top[0]["drops"] == links.drops.max()
    assert [x["drops"] for x in top] == sorted(links.drops, reverse=True)[:len(top)]
    deepest = d["links_by_queueing_delay"][0]
    q = links.max_queue_bytes * 8 / (links.rate_gbps * 1e9)
    assert deepest["max_queueing_delay_s"] == pytest.approx(q.max(), rel=1e-12)
    hosts = pd.read_csv(out / "hosts.csv")
    per_host = hosts.groupby("host").timeouts.sum()
    assert d["hosts_by_timeouts"][0]["timeouts"] == per_host.max()
    mean_lag = hosts.groupby("host").lag_s.mean()
    assert d["stragglers"][0]["mean_lag_s"] == pytest.approx(mean_lag.max(), rel=1e-6, abs=1e-12)
    assert "why slow:" in stdout and "most drops" in stdout
    # Canary's own part: its switches' stragglers and its hosts' requests per block of every iteration.
    c = json.loads((out / "results.json").read_text())["workload"]["canary"]
    p = d["protocol"]
    assert p["protocol"] == "canary" and p["blocks"] == c["blocks_per_iteration"] * 3
    assert p["stragglers_per_block"] == pytest.approx(c["switches"]["stragglers"] / p["blocks"], rel=1e-12)
    assert p["retransmit_requests_per_block"] == pytest.approx(c["hosts"]["retransmit_requests"] / p["blocks"],
                                                               rel=1e-12)
    assert c["switches"]["stragglers"] > 0


@pytest.mark.parametrize("protocol,scenario,sets", RUNS, ids=[r[0] for r in RUNS])
def test_hosts_csv_per_protocol(tmp_path, protocol, scenario, sets):
    out, _ = run(tmp_path, scenario, sets)
    has = (out / "hosts.csv").exists()
    assert has == (protocol != "p4sgd")
    assert "diagnosis" in json.loads((out / "results.json").read_text())


def test_host_rings_write_hosts_csv(tmp_path):
    import pandas as pd

    out, _ = run(tmp_path, CANARY, ["workload.protocol=ring", "workload.bytes=65536", "workload.canary=null",
                                    "workload.iterations=2"])
    hosts = pd.read_csv(out / "hosts.csv")
    assert len(hosts) == 2 * 64 and set(hosts.timeouts) == {0}


def test_log_components_and_their_lines(tmp_path):
    """`inasim log-components` lists INA-Sim's own NS_LOG components, each in
    a file of this repository; NS_LOG turns their lines on without a rebuild,
    one line per event they log (Canary block timeouts, buffer drops)."""
    p = subprocess.run([BIN, "log-components", "--json"], capture_output=True, text=True, env=child_env())
    assert p.returncode == 0, p.stderr
    components = {c["name"]: c["file"] for c in json.loads(p.stdout)}
    for name in ["InaNetDevice", "InaSwitchNode", "InaFabric", "SwitchMLWorker", "SwitchMLRdmaThread", "CanaryHost",
                 "PanamaWorker", "P4SGDWorker", "RingRank", "InaRankCollectives", "GlooRank", "NcclRank", "NcclRcQp",
                 "NcclTcpRank"]:
        assert (SOURCE_DIR / components[name]).is_file(), name
    docs = (SOURCE_DIR / "docs" / "DEBUGGING.md").read_text()
    assert all(f"`{name}`" in docs for name in components), "every component is documented"
    env = dict(child_env(), NS_LOG="CanaryHost=level_logic:InaNetDevice=level_logic")
    out = tmp_path / "out"
    args = [BIN, "run", str(SOURCE_DIR / CANARY), "--out", str(out), "--set", "workload.bytes=262144",
            "--set", "switch.buffer_bytes=8000"]
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    r = json.loads((out / "results.json").read_text())
    h = r["workload"]["canary"]["hosts"]
    assert p.stderr.count("timed out") == h["retransmit_requests"] + h["fallback_sends"] > 0
    assert p.stderr.count("buffer full") == r["network"]["drops_buffer"] > 0
    quiet = subprocess.run(args[:4] + [str(tmp_path / "q")] + args[5:], capture_output=True, text=True,
                           env={k: v for k, v in child_env().items() if k != "NS_LOG"}, timeout=300)
    assert quiet.returncode == 0, quiet.stderr
    assert "timed out" not in quiet.stderr and "buffer full" not in quiet.stderr


def test_ring_timeouts_are_its_retransmissions(tmp_path):
    """The ring's RTO expiries are its Timeout rows: under 1 % loss, hosts.csv's
    timeouts sum to collectives.csv's retransmissions (each expiry resends
    one packet)."""
    import pandas as pd

    out, _ = run(tmp_path, "scenarios/default.json", ["workload.bytes=262144", "faults.loss_rate=0.01",
                                                      "workload.iterations=2"])
    hosts = pd.read_csv(out / "hosts.csv")
    coll = pd.read_csv(out / "collectives.csv")
    assert coll.retransmissions.sum() > 0
    assert hosts.timeouts.sum() == coll.retransmissions.sum()
    for it, rows in hosts.groupby("collective"):
        assert rows.timeouts.sum() == coll.retransmissions.iloc[it]


def test_nccl_queue_pair_timeouts_are_logged(tmp_path):
    """NS_LOG=NcclRcQp=level_logic: one line per queue-pair timeout that
    resends (NCCL over RoCE under 1 % loss), as many as workload.nccl's
    ack_timeouts; NcclRank's logic lines: each rank's result, once."""
    env = dict(child_env(), NS_LOG="NcclRcQp=level_logic:NcclRank=level_logic")
    out = tmp_path / "out"
    p = subprocess.run([BIN, "run", str(SOURCE_DIR / "scenarios/default.json"), "--out", str(out),
                        "--set", "workload.protocol=nccl", "--set", "workload.bytes=262144",
                        "--set", "faults.loss_rate=0.01"], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    r = json.loads((out / "results.json").read_text())
    assert r["workload"]["nccl"]["ack_timeouts"] > 0
    assert p.stderr.count("sent again (go-back-N)") == r["workload"]["nccl"]["ack_timeouts"]
    assert p.stderr.count("result complete") == r["workload"]["ranks"]
