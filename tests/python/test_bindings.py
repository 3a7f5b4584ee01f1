"""The `inasim` Python package: scenarios in and out, in-process runs (same
results as the CLI, repeatable in one process), DataFrames, topologies and
trees. Run by ctest with PYTHONPATH = python/ and build/python/."""

import json
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import inasim

SOURCE_DIR = Path(os.environ.get("INASIM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
DEFAULT = SOURCE_DIR / "scenarios" / "default.json"
SMALL = ["workload.bytes=262144"]


def without_perf(d):
    return {k: v for k, v in d.items() if k != "perf"}


def test_validate_resolves_defaults_and_reports_cli_errors():
    r = inasim.validate(DEFAULT, sets=SMALL)
    assert r["workload"]["bytes"] == 262144
    assert r["workload"]["ring"]["window_packets"] == 64  # a default, filled in
    with pytest.raises(inasim.ScenarioError) as e:
        inasim.validate(DEFAULT, sets=["workload.bytes=1026"])
    assert str(e.value) == "workload.bytes: must be a multiple of 4 (whole 32-bit elements), got 1026"
    assert isinstance(e.value, ValueError)
    with pytest.raises(inasim.ScenarioError, match="workload.bogus: unknown key"):
        inasim.validate({"topology": {"type": "single_rack", "hosts": 4}, "workload": {"bogus": 1}})
    with pytest.raises(inasim.ScenarioError, match="cannot open"):
        inasim.load("/nonexistent/scenario.json")


def test_dict_and_file_give_the_same_scenario():
    doc = inasim.load(DEFAULT)
    inasim.apply_set(doc, "workload.bytes=262144")
    assert doc["workload"]["bytes"] == 262144
    assert inasim.validate(doc) == inasim.validate(DEFAULT, sets=SMALL)


def test_run_matches_the_cli_and_repeats_in_one_process(tmp_path):
    a = inasim.run(DEFAULT, sets=SMALL)
    b = inasim.run(DEFAULT, sets=SMALL)  # ns-3 was reset: same bytes again
    assert a.correct and b.correct
    assert without_perf(a.json) == without_perf(b.json)
    w = a.json["workload"]
    assert w["elements_checked"] == 8 * 65536 and w["mismatches"] == 0
    # The CLI writes the same results.json (apart from perf).
    out = tmp_path / "cli"
    p = subprocess.run([os.environ.get("INASIM_BIN", str(SOURCE_DIR / "build" / "inasim")), "run", str(DEFAULT),
                        "--set", SMALL[0], "--out", str(out), "--quiet"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    cli = json.loads((out / "results.json").read_text())
    assert without_perf(cli) == without_perf(a.json)
    # Result.write produces the CLI's files.
    a.write(tmp_path / "py")
    assert sorted(os.listdir(tmp_path / "py")) == sorted(os.listdir(out))
    assert (tmp_path / "py" / "links.csv").read_text() == (out / "links.csv").read_text()


def test_tables_are_dataframes():
    r = inasim.run(DEFAULT, sets=SMALL + ["workload.iterations=2"])
    links = r.tables["links.csv"]
    assert isinstance(links, pd.DataFrame)
    assert len(links) == 2 * 8  # two directions of 8 host links
    assert links["tx_bytes"].sum() == r.json["network"]["bytes_tx"]
    coll = r.frame("collectives")
    assert list(coll["iteration"]) == [0, 1]
    assert coll["correct"].tolist() == [1, 1]


def test_seed_and_a_different_seed():
    a = inasim.run(DEFAULT, sets=SMALL, seed=5)
    assert a.json["seed"] == 5
    with pytest.raises(inasim.ScenarioError, match="seed"):
        inasim.run(DEFAULT, seed=0)


def test_topology_and_trees():
    t = inasim.topology({"topology": {"type": "fat_tree", "k": 4}})
    assert (t.num_hosts, t.num_switches) == (16, 20)
    assert len(t.links) == 48 and set(t.links.columns) >= {"a", "b", "rate_gbps", "delay_ns"}
    assert t.nodes.loc[t.nodes["kind"] == "host", "id"].tolist() == t.hosts
    assert t.name(t.vertex("core0")) == "core0"
    tree = t.tree("core0")
    assert tree["root"] == t.vertex("core0") and tree["depth"] == 3
    # Every host reaches the root through the tree's edges.
    parent = {e["child"]: e["parent"] for e in tree["edges"]}
    for h in t.hosts:
        v, hops = h, 0
        while v != tree["root"]:
            v, hops = parent[v], hops + 1
        assert hops == 3
    roots = [x["root"] for x in t.trees(4)]
    assert len(set(roots)) == 4
    with pytest.raises(inasim.ScenarioError, match="tree"):
        t.tree(0)  # a host is not a switch


# ------------------------------------------------- NaN and other non-JSON values


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_nan_and_infinity_are_rejected_with_the_key_path(value):
    doc = inasim.load(DEFAULT)
    doc["links"]["host_rate_gbps"] = value
    calls = [
        lambda: inasim.validate(doc),
        lambda: inasim.run(doc),
        lambda: inasim.check(doc),
        lambda: inasim.topology(doc),
        lambda: inasim.apply_set(doc, "seed=2"),
    ]
    for call in calls:
        with pytest.raises(inasim.ScenarioError) as e:
            call()
        assert str(e.value) == (f"links.host_rate_gbps: must be a finite number, got {value!r} "
                                "(JSON has no NaN or Infinity)")
    # Inside lists too, and a number that is fine stays as it was.
    doc = inasim.load(DEFAULT)
    doc["workload"]["hosts"] = [0, 1, value]
    with pytest.raises(inasim.ScenarioError, match=r"^workload\.hosts\[2\]: must be a finite number"):
        inasim.validate(doc)
    assert inasim.to_json_value({"a": [1, 2.5, True, None, "x"]}) == {"a": [1, 2.5, True, None, "x"]}


def test_values_that_are_not_json_name_their_key():
    doc = inasim.load(DEFAULT)
    doc["workload"]["hosts"] = {1, 2}
    with pytest.raises(inasim.ScenarioError, match=r"^workload\.hosts: set is not a JSON value"):
        inasim.validate(doc)
    doc = inasim.load(DEFAULT)
    doc["topology"][4] = "x"
    with pytest.raises(inasim.ScenarioError, match=r"^topology: keys must be strings, got 4"):
        inasim.run(doc)
    with pytest.raises(inasim.ScenarioError, match=r'^--set: must be a "PATH=VALUE" string, got 5'):
        inasim.validate(DEFAULT, sets=[5])


def test_numpy_numbers_are_plain_numbers():
    np = pytest.importorskip("numpy")
    doc = inasim.load(DEFAULT)
    doc["workload"]["bytes"] = np.int64(65536)
    doc["links"]["host_rate_gbps"] = np.float64(100.0)
    r = inasim.validate(doc)
    assert r["workload"]["bytes"] == 65536 and r["links"]["host_rate_gbps"] == 100
    doc["links"]["host_rate_gbps"] = np.float32("nan")
    with pytest.raises(inasim.ScenarioError, match=r"^links\.host_rate_gbps: must be a finite number"):
        inasim.validate(doc)


def test_tree_arguments_are_checked():
    t = inasim.topology(DEFAULT)
    with pytest.raises(inasim.ScenarioError, match=r"^root: must be an integer >= 0, got nan"):
        t.tree(float("nan"))
    with pytest.raises(inasim.ScenarioError, match=r"^hosts\[1\]: must be an integer >= 0, got inf"):
        t.tree(8, hosts=[0, float("inf")])
    with pytest.raises(inasim.ScenarioError, match=r"^n: must be an integer >= 1, got nan"):
        t.trees(float("nan"))


def test_check_sets_the_run_up_and_returns_the_resolved_scenario():
    r = inasim.check(DEFAULT, sets=["workload.bytes=65536"])
    assert r == inasim.validate(DEFAULT, sets=["workload.bytes=65536"])
    assert r["stop"]["max_sim_time_ms"] != 1e-6  # the check's short stop is not in what it returns
    # More jobs than the hosts allow (an error of the network setup). In a
    # child: a failed setup leaves ns-3 state behind.
    sets = ["workload.jobs=3", "topology.hosts=4", "workload.bytes=65536"]
    code = ("import inasim, sys\n"
            "try:\n"
            f"    inasim.check({str(DEFAULT)!r}, sets={sets!r})\n"
            "except inasim.ScenarioError as e:\n"
            "    print(e)\n")
    p = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("workload.jobs: 3 jobs need at least 2 hosts each; 4 hosts are selected")
