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
