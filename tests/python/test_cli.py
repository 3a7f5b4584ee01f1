"""End-to-end tests of the `inasim` command line: outputs, exit codes, atomic
result directories, determinism.

Run by ctest (test `python_cli`) with INASIM_BIN = the built binary and
INASIM_SOURCE_DIR = the repository root, or by hand:

    INASIM_BIN=build/inasim /usr/bin/python3 -m pytest tests/python
"""

import csv
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

SOURCE_DIR = Path(os.environ.get("INASIM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
DEFAULT = SOURCE_DIR / "scenarios" / "default.json"
BIN = os.environ.get("INASIM_BIN")

if not BIN or not os.access(BIN, os.X_OK):
    pytest.skip("INASIM_BIN is not set to the inasim binary", allow_module_level=True)

# Small enough to run in a fraction of a second (8 hosts, 256 KiB).
SMALL = ["--set", "workload.bytes=262144"]


def inasim(*args, cwd=None, timeout=120):
    return subprocess.run([BIN, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def load_results(d):
    with open(Path(d) / "results.json") as f:
        return json.load(f)


def without_perf(results):
    r = dict(results)
    r.pop("perf")
    return r


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def leftovers(parent, name):
    """Temporary siblings a run may leave next to its output directory."""
    return sorted(p.name for p in Path(parent).iterdir() if p.name.startswith(f".{name}."))


# ----------------------------------------------------------------- (a) outputs


def test_default_scenario_run(tmp_path):
    out = tmp_path / "default"
    p = inasim("run", DEFAULT, "--out", out, "--quiet", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout == ""  # --quiet

    r = load_results(out)
    for key in ("inasim_version", "scenario", "seed", "sim", "workload", "network", "perf", "correct"):
        assert key in r, key
    assert r["correct"] is True
    assert r["seed"] == 1
    assert r["scenario"]["name"] == "default"
    assert r["scenario"]["links"]["mtu_bytes"] == 1500  # defaults are echoed
    assert r["sim"]["stopped_by"] == "workload_done"
    w = r["workload"]
    assert w["type"] == "allreduce"
    assert w["ranks"] == 8
    assert w["mismatches"] == 0
    assert w["elements_checked"] == 8 * 1048576
    assert w["iterations_completed"] == 1
    assert r["network"]["drops_buffer"] == 0

    rows = read_csv(out / "collectives.csv")
    assert len(rows) == 2  # header + one collective
    header, row = rows
    assert header[0] == "iteration"
    assert row[header.index("correct")] == "1"
    assert int(row[header.index("elements_checked")]) == 8 * 1048576
    assert int(row[header.index("mismatches")]) == 0

    links = read_csv(out / "links.csv")
    assert links[0][:4] == ["link", "a", "b", "direction"]
    assert len(links) == 1 + 2 * 8  # 8 host links, both directions
    assert (out / "summary.txt").is_file()
    assert leftovers(tmp_path, "default") == []


def test_summary_printed_without_quiet(tmp_path):
    out = tmp_path / "o"
    p = inasim("run", DEFAULT, *SMALL, "--out", out, "--progress", "off")
    assert p.returncode == 0, p.stderr
    assert "CORRECT" in p.stdout
    assert f"{out}/results.json" in p.stdout
    assert p.stdout.startswith((out / "summary.txt").read_text())


# ----------------------------------------------------------- (b) determinism


def test_same_scenario_same_results(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        p = inasim("run", DEFAULT, *SMALL, "--out", d, "--quiet")
        assert p.returncode == 0, p.stderr
    ra, rb = load_results(a), load_results(b)
    assert "perf" in ra and "perf" in rb
    assert json.dumps(without_perf(ra), sort_keys=True) == json.dumps(without_perf(rb), sort_keys=True)
    # The raw files differ at most in the "perf" block.
    strip = lambda d: re.sub(r'"perf": \{.*?\n  \}', "", (d / "results.json").read_text(), flags=re.S)
    assert strip(a) == strip(b)
    for name in ("collectives.csv", "links.csv"):  # summary.txt has wall times
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_progress_does_not_change_results(tmp_path):
    a, b = tmp_path / "off", tmp_path / "on"
    assert inasim("run", DEFAULT, *SMALL, "--out", a, "--quiet", "--progress", "off").returncode == 0
    assert inasim("run", DEFAULT, *SMALL, "--out", b, "--quiet", "--progress", "on").returncode == 0
    assert without_perf(load_results(a)) == without_perf(load_results(b))
    assert (a / "links.csv").read_bytes() == (b / "links.csv").read_bytes()


def test_other_seed_other_results(tmp_path):
    a, b = tmp_path / "s1", tmp_path / "s2"
    assert inasim("run", DEFAULT, *SMALL, "--out", a, "--quiet").returncode == 0
    assert inasim("run", DEFAULT, *SMALL, "--out", b, "--quiet", "--seed", "2").returncode == 0
    ra, rb = load_results(a), load_results(b)
    assert ra["seed"] == 1 and rb["seed"] == 2
    assert rb["scenario"]["seed"] == 2
    assert without_perf(ra) != without_perf(rb)
    assert ra["correct"] is True and rb["correct"] is True


# ------------------------------------------------------------- (c) bad input


def _bad_json(tmp_path):
    f = tmp_path / "broken.json"
    f.write_text('{"topology": {"type": "single_rack", "hosts": 8},\n  "seed": ,\n}\n')
    return f


# (id, argv after the binary with {S} = default scenario, {BAD} = a broken JSON
#  file, {MISSING} = a file that does not exist; words the stderr must contain)
BAD_INPUTS = [
    ("unknown_key", ["run", "{S}", "--set", "workload.bogus=1"], ["workload.bogus", "unknown key"]),
    ("near_miss_key", ["run", "{S}", "--set", "workload.ring.windw_packets=8"],
     ["workload.ring.windw_packets", 'did you mean "window_packets"']),
    ("wrong_type", ["run", "{S}", "--set", "workload.bytes=lots"], ["workload.bytes", "integer"]),
    ("out_of_range", ["run", "{S}", "--set", "faults.loss_rate=1.5"], ["faults.loss_rate", "between 0 and 1"]),
    ("bad_enum", ["run", "{S}", "--set", "topology.type=torus"], ["topology.type", "must be one of"]),
    ("not_multiple_of_4", ["run", "{S}", "--set", "workload.bytes=1026"], ["workload.bytes", "multiple of 4"]),
    ("hosts_count_too_large", ["run", "{S}", "--set", "workload.hosts.count=9"],
     ["workload.hosts.count", "the topology has 8"]),
    ("host_id_out_of_range", ["run", "{S}", "--set", "workload.hosts=[0,8]"], ["workload.hosts[1]", "does not exist"]),
    ("fault_link_out_of_range", ["run", "{S}", "--set", 'faults.links=[{"link":99}]'],
     ["faults.links[0].link", "no link 99"]),
    ("background_missing_stop", ["run", "{S}", "--set", "background.flows={}"], ["background.flows.stop_us", "required"]),
    ("set_without_equals", ["run", "{S}", "--set", "workload.bytes"], ["--set workload.bytes", "PATH=VALUE"]),
    ("set_through_non_object", ["run", "{S}", "--set", "seed.x=1"], ["--set seed.x=1", "not an object"]),
    ("missing_file", ["run", "{MISSING}"], ["{MISSING}", "cannot open"]),
    ("invalid_json", ["run", "{BAD}"], ["{BAD}", "not valid JSON", "line 2"]),
    ("unknown_option", ["run", "{S}", "--frobnicate"], ['unknown option "--frobnicate"']),
    ("seed_not_a_number", ["run", "{S}", "--seed", "abc"], ["--seed", '"abc"']),
    ("seed_zero", ["run", "{S}", "--seed", "0"], ["--seed", "positive"]),
    ("seed_missing_value", ["run", "{S}", "--seed"], ["--seed", "needs a value"]),
    ("progress_bad", ["run", "{S}", "--progress", "maybe"], ["--progress", '"maybe"']),
    ("no_scenario", ["run"], ["missing SCENARIO.json"]),
    ("two_scenarios", ["run", "{S}", "{S}"], ["unexpected argument", "one scenario file"]),
    ("unknown_command", ["simulate", "{S}"], ['unknown command "simulate"']),
    ("validate_with_out", ["validate", "{S}"], ["validate takes only"]),
]


@pytest.mark.parametrize("argv,words", [(a, w) for _, a, w in BAD_INPUTS], ids=[i for i, _, _ in BAD_INPUTS])
def test_bad_input_exits_2_and_writes_nothing(tmp_path, argv, words):
    subst = {"{S}": str(DEFAULT), "{BAD}": str(_bad_json(tmp_path)), "{MISSING}": str(tmp_path / "nope.json")}
    argv = [subst.get(a, a) for a in argv]
    words = [subst.get(w, w) for w in words]
    before = sorted(p.name for p in tmp_path.iterdir())
    out = tmp_path / "res"
    # --out right after the command, so that a flag missing its value stays last.
    p = inasim(argv[0], "--out", out, *argv[1:], cwd=tmp_path)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert p.stdout == ""
    assert p.stderr.startswith("inasim: ")
    for w in words:
        assert w in p.stderr, (w, p.stderr)
    assert "internal error" not in p.stderr
    assert not out.exists()
    assert not (tmp_path / "out").exists()  # the default output directory
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing else either (no .res.tmp-*)


def test_usage_without_arguments():
    p = inasim()
    assert p.returncode == 2
    assert "usage: inasim run" in p.stderr
    p = inasim("--help")
    assert p.returncode == 0
    assert "usage: inasim run" in p.stdout


# ------------------------------------------------------- (d) atomic outputs


def test_existing_output_dir_is_replaced(tmp_path):
    out = tmp_path / "res"
    out.mkdir()
    (out / "stale.txt").write_text("from an older run")
    (out / "results.json").write_text("{}")
    p = inasim("run", DEFAULT, *SMALL, "--out", out, "--quiet")
    assert p.returncode == 0, p.stderr
    assert not (out / "stale.txt").exists()
    assert load_results(out)["correct"] is True
    assert sorted(x.name for x in out.iterdir()) == ["collectives.csv", "links.csv", "results.json", "summary.txt"]
    assert sorted(x.name for x in tmp_path.iterdir()) == ["res"]  # no .res.tmp-* / .res.old-* left


def test_bad_input_leaves_existing_output_alone(tmp_path):
    out = tmp_path / "res"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    p = inasim("run", DEFAULT, "--set", "workload.bytes=3", "--out", out)
    assert p.returncode == 2
    assert sorted(x.name for x in out.iterdir()) == ["keep.txt"]
    assert sorted(x.name for x in tmp_path.iterdir()) == ["res"]


def test_output_dir_parents_are_created(tmp_path):
    out = tmp_path / "deep" / "er" / "res"
    assert inasim("run", DEFAULT, *SMALL, "--out", out, "--quiet").returncode == 0
    assert (out / "results.json").is_file()


def test_default_output_dir_is_out_slash_name(tmp_path):
    p = inasim("run", DEFAULT, *SMALL, "--set", "name=tiny", "--quiet", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert load_results(tmp_path / "out" / "tiny")["scenario"]["name"] == "tiny"


# -------------------------------------------------- (e) validate, --version


def test_validate_default():
    p = inasim("validate", DEFAULT)
    assert p.returncode == 0, p.stderr
    assert 'valid scenario "default"' in p.stdout


def test_validate_with_set_and_bad_set(tmp_path):
    p = inasim("validate", DEFAULT, "--set", 'topology={"type":"fat_tree","k":4}', "--set=workload.hosts.count=16",
               cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    p = inasim("validate", DEFAULT, "--set=workload.hosts.count=17", cwd=tmp_path)
    assert p.returncode == 2
    assert "workload.hosts.count" in p.stderr
    assert list(tmp_path.iterdir()) == []  # validate never writes


def test_version(tmp_path):
    p = inasim("--version")
    assert p.returncode == 0
    m = re.fullmatch(r"inasim (\d+\.\d+\.\d+\S*)\n", p.stdout)
    assert m, p.stdout
    out = tmp_path / "v"
    assert inasim("run", DEFAULT, *SMALL, "--out", out, "--quiet").returncode == 0
    assert load_results(out)["inasim_version"] == m.group(1)


# ------------------------------------------- (f) a run that cannot finish


@pytest.mark.parametrize(
    "sets",
    [
        ["--set", "stop.max_sim_time_ms=0.001"],
        ["--set", "faults.loss_rate=1", "--set", "stop.max_sim_time_ms=1"],
    ],
    ids=["time_limit", "all_lost"],
)
def test_unfinished_workload_exits_1_with_results(tmp_path, sets):
    out = tmp_path / "res"
    p = inasim("run", DEFAULT, *SMALL, *sets, "--out", out, "--quiet")
    assert p.returncode == 1, (p.returncode, p.stderr)
    r = load_results(out)
    assert r["correct"] is False
    assert r["workload"]["correct"] is False
    assert r["workload"]["iterations_completed"] == 0
    assert r["sim"]["stopped_by"] == "max_sim_time"
    assert len(read_csv(out / "collectives.csv")) == 1  # header only
    assert sorted(x.name for x in tmp_path.iterdir()) == ["res"]
