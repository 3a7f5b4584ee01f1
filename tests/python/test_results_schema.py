"""One results schema (issue 25): every registered allreduce protocol reports
the same core keys in results.json's "workload" and the same leading columns
of collectives.csv (docs/SCENARIO.md, "results.json"), with the same meaning.

The protocols and their runs come from the registry (`inasim protocols
--json`): each one's `smoke` runs, and, for a protocol that runs concurrent
jobs from `workload.jobs`, its first smoke run with two jobs. Checked: the
core keys and their types, the protocol's own keys under
workload.<protocol>, collectives.csv's core columns and rows against the
`collectives` array, mean_duration_s as the mean of the listed collectives'
durations (warm-up rows aside; with several jobs the mean of the jobs'
means), goodput_gbps = bytes x 8 / mean_duration_s, and elements_checked /
mismatches as the sums over the rows."""

import csv
import io
import json
import os
import subprocess

import pytest

from helpers import SOURCE_DIR

BIN = os.environ.get("INASIM_BIN", str(SOURCE_DIR / "build" / "inasim"))
if not os.access(BIN, os.X_OK):
    pytest.skip(f"{BIN} is not built (set INASIM_BIN)", allow_module_level=True)

REGISTRY = json.loads(subprocess.run([BIN, "protocols", "--json"], capture_output=True, text=True,
                                     check=True).stdout)
CORE_COLUMNS = ["job", "iteration", "start_s", "end_s", "duration_s", "goodput_gbps", "correct",
                "elements_checked", "mismatches"]
INT, NUM = (int,), (int, float)
CORE_KEYS = {"type": str, "protocol": str, "collective_unit": str, "bytes": INT, "ranks": INT, "jobs": INT,
             "iterations_requested": INT, "iterations_completed": INT, "collectives_requested": INT,
             "collectives_completed": INT, "collectives_listed": INT, "mean_duration_s": NUM, "goodput_gbps": NUM,
             "elements_checked": INT, "mismatches": INT, "correct": bool, "check": str, "collectives": list}


def runs():
    """(id, protocol, arguments) per smoke run of every allreduce protocol, plus two jobs where they apply."""
    out = []
    for p in REGISTRY:
        if p["workload_type"] != "allreduce":
            continue
        for i, args in enumerate(p["smoke"]):
            out.append((f"{p['name']}-{i}", p["name"], args))
        if p["concurrent_jobs"] == "jobs":
            out.append((f"{p['name']}-jobs", p["name"], p["smoke"][0] + ["--set", "workload.jobs=2"]))
    return out


RUNS = runs()


def test_every_allreduce_protocol_has_a_run():
    names = {p["name"] for p in REGISTRY if p["workload_type"] == "allreduce"}
    assert names and {name for _, name, _ in RUNS} == names


@pytest.mark.parametrize("protocol,args", [r[1:] for r in RUNS], ids=[r[0] for r in RUNS])
def test_core_keys_and_collectives(tmp_path, protocol, args):
    out = tmp_path / "out"
    p = subprocess.run([BIN, "run", *args, "--out", str(out), "--quiet", "--progress", "off"],
                       cwd=SOURCE_DIR, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    r = json.loads((out / "results.json").read_text())
    w = r["workload"]
    for key, kind in CORE_KEYS.items():
        assert key in w, key
        assert isinstance(w[key], kind) and not (kind != bool and isinstance(w[key], bool)), (key, w[key])
    assert w["type"] == "allreduce" and w["protocol"] == protocol
    assert w["collective_unit"] in ("iteration", "tensor", "op")
    assert isinstance(w[protocol], dict) and w[protocol]  # the protocol's own keys
    assert r["correct"] is w["correct"] is True and r["check"] == w["check"]
    assert w["collectives_completed"] == w["collectives_requested"] >= w["collectives_listed"] > 0
    assert 0 < w["iterations_completed"] == w["iterations_requested"]

    rows = w["collectives"]
    table = list(csv.reader(io.StringIO((out / "collectives.csv").read_text())))
    assert table[0][:len(CORE_COLUMNS)] == CORE_COLUMNS
    assert len(rows) == len(table) - 1 == w["collectives_listed"]
    for row, line in zip(rows, table[1:]):
        cells = dict(zip(table[0], line))
        assert int(cells["job"]) == row["job"] and int(cells["iteration"]) == row["iteration"]
        assert int(cells["elements_checked"]) == row["elements_checked"]
        assert int(cells["mismatches"]) == row["mismatches"] and cells["correct"] == ("1" if row["correct"] else "0")
        assert row["duration_s"] == pytest.approx(row["end_s"] - row["start_s"], rel=1e-9, abs=1e-15)
        assert float(cells["duration_s"]) == pytest.approx(row["duration_s"], abs=1e-12)

    if w["collectives_listed"] == w["collectives_completed"]:
        assert w["elements_checked"] == sum(c["elements_checked"] for c in rows)
        assert w["mismatches"] == sum(c["mismatches"] for c in rows) == 0
        means = []
        for j in range(w["jobs"]):
            durations = [c["duration_s"] for c in rows if c["job"] == j and not c.get("warmup", False)]
            means.append(sum(durations) / len(durations))
        assert w["mean_duration_s"] == pytest.approx(sum(means) / len(means), rel=1e-12)
    if w["jobs"] == 1:
        assert "per_job" not in w
        assert w["goodput_gbps"] == pytest.approx(w["bytes"] * 8 / w["mean_duration_s"] / 1e9, rel=1e-12)
        return
    per_job = w["per_job"]
    assert [j["job"] for j in per_job] == list(range(w["jobs"])) and sum(j["ranks"] for j in per_job) == w["ranks"]
    goodputs = [j["goodput_gbps"] for j in per_job]
    assert w["goodput_gbps"] == pytest.approx(sum(goodputs) / len(goodputs), rel=1e-12)
    assert (w["min_goodput_gbps"], w["max_goodput_gbps"]) == (min(goodputs), max(goodputs))
    for j in per_job:
        assert j["goodput_gbps"] == pytest.approx(j.get("bytes", w["bytes"]) * 8 / j["mean_duration_s"] / 1e9,
                                                  rel=1e-12)
    assert sum(j["elements_checked"] for j in per_job) == w["elements_checked"]


def test_permutation_reports_the_core_keys_that_apply(tmp_path):
    """The permutation workload (no aggregation) keeps its own type; protocol, ranks, jobs, correct are core."""
    for p in REGISTRY:
        if p["workload_type"] != "permutation":
            continue
        out = tmp_path / p["name"]
        run = subprocess.run([BIN, "run", *p["smoke"][0], "--out", str(out), "--quiet", "--progress", "off"],
                             cwd=SOURCE_DIR, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        w = json.loads((out / "results.json").read_text())["workload"]
        assert w["type"] == "permutation" and w["protocol"] == p["name"] and w["jobs"] == 1
        assert w["ranks"] == w["flows"] > 0 and w["correct"] is True
        assert "collectives" not in w and not (out / "collectives.csv").exists()
