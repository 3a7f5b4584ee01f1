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
    assert header[:9] == ["job", "iteration", "start_s", "end_s", "duration_s", "goodput_gbps", "correct",
                          "elements_checked", "mismatches"]  # the core columns, every protocol
    assert row[header.index("correct")] == "1"
    assert int(row[header.index("elements_checked")]) == 8 * 1048576
    assert int(row[header.index("mismatches")]) == 0

    links = read_csv(out / "links.csv")
    assert links[0][:4] == ["link", "a", "b", "direction"]
    assert len(links) == 1 + 2 * 8  # 8 host links, both directions
    assert (out / "summary.txt").is_file()
    assert (out / ".inasim-results").is_file()  # how a later run knows it may replace this directory
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


RESULT_FILES = [".inasim-results", "collectives.csv", "hosts.csv", "links.csv", "results.json", "summary.txt"]


def test_existing_output_dir_is_replaced(tmp_path):
    out = tmp_path / "res"
    assert inasim("run", DEFAULT, *SMALL, "--seed", "2", "--out", out, "--quiet").returncode == 0
    (out / "flows.csv").write_text("from an older run with background flows")  # a file a run writes
    p = inasim("run", DEFAULT, *SMALL, "--out", out, "--quiet")
    assert p.returncode == 0, p.stderr
    assert not (out / "flows.csv").exists()
    assert load_results(out)["seed"] == 1
    assert sorted(x.name for x in out.iterdir()) == RESULT_FILES
    assert sorted(x.name for x in tmp_path.iterdir()) == ["res"]  # no .res.tmp-* / .res.old-* left


def test_results_of_an_older_inasim_are_replaced(tmp_path):
    # Written before the marker file existed: recognised by results.json's keys.
    out = tmp_path / "res"
    assert inasim("run", DEFAULT, *SMALL, "--out", out, "--quiet").returncode == 0
    (out / ".inasim-results").unlink()
    assert inasim("run", DEFAULT, *SMALL, "--seed", "3", "--out", out, "--quiet").returncode == 0
    assert load_results(out)["seed"] == 3


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


def test_protocols_lists_the_registry_one_folder_each(tmp_path):
    p = inasim("protocols", "--json")
    assert p.returncode == 0, p.stderr
    reg = json.loads(p.stdout)
    names = [m["name"] for m in reg]
    folders = sorted(d.name for d in (SOURCE_DIR / "protocols").iterdir() if (d / "protocol.json").is_file())
    assert names == folders  # generated from protocols/*/protocol.json, in folder order
    assert set(names) == {"ring", "gloo", "nccl", "switchml", "canary", "static_tree", "panama", "p4sgd",
                          "permutation"}
    for m in reg:  # each entry is its folder's file, as written, and where that folder is
        assert m.pop("folder") == f"protocols/{m['name']}"
        assert m == json.loads((SOURCE_DIR / "protocols" / m["name"] / "protocol.json").read_text())
    text = inasim("protocols")
    assert text.returncode == 0 and len(text.stdout.splitlines()) == len(names)
    assert all(line.split()[0] in names for line in text.stdout.splitlines())
    bad = inasim("protocols", "--yaml")
    assert bad.returncode == 2 and 'unknown option "--yaml"' in bad.stderr
    # A protocol the registry does not know is named with the ones it does.
    v = inasim("validate", DEFAULT, "--set", "workload.protocol=sharp")
    assert v.returncode == 2
    assert v.stderr.strip() == ('inasim: workload.protocol: must be one of "canary", "gloo", "nccl", "p4sgd", "panama", "ring", '
                                '"static_tree", "switchml", got "sharp"')


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


# ----------------------------------------------- (g) issue 24: bad input


P4 = Path(BIN).parent / "inasim-p4"


def inasim_p4(*args, stdin=None, timeout=30):
    return subprocess.run([str(P4), *map(str, args)], input=stdin, capture_output=True, text=True, timeout=timeout)


def tree(d):
    """Every path under d with its content (files) or None (directories)."""
    return {str(p.relative_to(d)): (p.read_bytes() if p.is_file() else None) for p in sorted(Path(d).rglob("*"))}


def assert_refused(p, *words):
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert p.stderr.startswith("inasim") and "internal error" not in p.stderr, p.stderr
    for w in words:
        assert w in p.stderr, (w, p.stderr)


def test_out_never_replaces_a_scenario_file(tmp_path):
    # Defect: `run s.json --out s.json` replaced the scenario file with a results directory.
    scenario = tmp_path / "s.json"
    scenario.write_text(DEFAULT.read_text())
    before = tree(tmp_path)
    assert_refused(inasim("run", scenario, *SMALL, "--out", scenario), "--out", "is a file", "results directory")
    assert tree(tmp_path) == before


@pytest.mark.parametrize("kind", ["foreign_file", "foreign_results_json", "subdirectory", "symlink", "empty_json"])
def test_out_never_replaces_anything_but_results(tmp_path, kind):
    out = tmp_path / "res"
    if kind == "symlink":
        (tmp_path / "real").mkdir()
        (tmp_path / "real" / "results.json").write_text("{}")
        out.symlink_to(tmp_path / "real")
    else:
        out.mkdir()
        if kind == "foreign_file":
            (out / "results.json").write_text(json.dumps({"inasim_version": "x", "scenario": {}}))
            (out / "thesis.tex").write_text("months of work")
        elif kind == "foreign_results_json":
            (out / "results.json").write_text(json.dumps({"mine": True}))
        elif kind == "subdirectory":
            (out / "results.json").write_text(json.dumps({"inasim_version": "x", "scenario": {}}))
            (out / "data").mkdir()
        else:
            (out / "results.json").write_text("{}")
    before = tree(tmp_path)
    assert_refused(inasim("run", DEFAULT, *SMALL, "--out", out), f"--out {out}: exists and")
    assert tree(tmp_path) == before


def test_default_out_dir_and_names_that_are_not_one_file_name(tmp_path):
    # A scenario named "." used to replace the whole out/ directory.
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("x")
    before = tree(tmp_path)
    for name in [".", "..", "a/b", "/", '""', "x" * 256]:
        assert_refused(inasim("run", DEFAULT, *SMALL, "--set", f"name={name}", cwd=tmp_path), "inasim: name: ",
                       "it names the output directory out/<name>")
    nul = tmp_path / "nul.json"
    nul.write_text(json.dumps({"name": "a\0b", "topology": {"type": "single_rack", "hosts": 8}}))
    assert_refused(inasim("run", nul, cwd=tmp_path), "name: must not contain a NUL")
    (tmp_path / "out" / "default").mkdir()
    (tmp_path / "out" / "default" / "notes.txt").write_text("mine")
    before = tree(tmp_path)
    assert_refused(inasim("run", DEFAULT, *SMALL, cwd=tmp_path), "--out out/default: exists and holds \"notes.txt\"")
    assert tree(tmp_path) == before


def test_unwritable_or_impossible_out_fails_before_the_run(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for out, words in [(afile / "res", ["cannot create", "Not a directory"]),
                       ("/proc/inasim-res", ["cannot write into /proc"])]:
        assert_refused(inasim("run", DEFAULT, *SMALL, "--out", out), f"--out {out}", *words)
    assert afile.read_text() == "x"
    # Missing parents are created before the run, and removed again when the run fails.
    deep = tmp_path / "new" / "deeper" / "res"
    assert inasim("run", DEFAULT, *SMALL, "--out", deep, "--quiet").returncode == 0
    assert (deep / "results.json").is_file()


def dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_leftovers_of_killed_runs_are_removed(tmp_path):
    dead, alive = dead_pid(), os.getpid()
    for name, files in [(f".res.tmp-{dead}", ["results.json"]), (f".res.old-{dead}", RESULT_FILES),
                        (f".other.tmp-{dead}", [".inasim-results"]), (f".res.tmp-{alive}", ["results.json"]),
                        (f".mine.tmp-{dead}", ["thesis.tex"])]:
        (tmp_path / name).mkdir()
        for f in files:
            (tmp_path / name / f).write_text("partial")
    (tmp_path / f".plain.tmp-{dead}").write_text("a file, not a directory of ours")
    assert inasim("run", DEFAULT, *SMALL, "--out", tmp_path / "res", "--quiet").returncode == 0
    left = sorted(p.name for p in tmp_path.iterdir())
    # Gone: the dead process's directories of our files. Kept: a live process's, and anything foreign.
    assert left == sorted(["res", f".res.tmp-{alive}", f".mine.tmp-{dead}", f".plain.tmp-{dead}"])


def test_input_files_are_capped_and_must_be_regular(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate((64 << 20) + 1)  # sparse
    for path, words in [("/dev/zero", ["/dev/zero: is a character device, not a regular file"]),
                        (fifo, [f"{fifo}: is a FIFO"]), (big, ["too large", "64 MiB"])]:
        assert_refused(inasim("validate", path, timeout=20), *words)
    for key, value in [("background.flows", json.dumps({"stop_us": 50, "size_distribution": "/dev/zero"})),
                       ("background.flows", json.dumps({"stop_us": 50, "size_distribution": str(fifo)})),
                       ("workload", json.dumps({"protocol": "p4sgd", "p4sgd": {"dataset": "/dev/zero"}}))]:
        p = inasim("run", DEFAULT, "--set", f"{key}={value}", "--out", tmp_path / "res", timeout=20)
        assert_refused(p, "is a", "not a regular file")
        assert p.stderr.startswith(("inasim: background.flows.size_distribution: ", "inasim: workload.p4sgd.dataset: "))
    assert not (tmp_path / "res").exists()


def test_inasim_p4_files_are_capped_and_must_be_regular(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for args, words in [(["--config", "/dev/zero"], ["--config /dev/zero: is a character device"]),
                        (["--config", fifo], ["is a FIFO"]),
                        (["--input", "/dev/zero"], ["--input /dev/zero: is a character device", "stdin"]),
                        (["--input", fifo], ["is a FIFO"])]:
        p = inasim_p4("replay", "canary", *args, stdin="", timeout=20)
        assert p.returncode == 2, p.stderr
        for w in words:
            assert w in p.stderr, (w, p.stderr)
    # An endless line on stdin stops at the 1 MiB cap instead of filling memory.
    with open("/dev/zero", "rb") as zero:
        p = subprocess.run([str(P4), "replay", "canary"], stdin=zero, capture_output=True, timeout=30)
    assert p.returncode == 2 and b"stdin:1: line longer than 1 MiB" in p.stderr, p.stderr


@pytest.mark.parametrize("sets,words", [
    (["topology.hosts=33", "workload.protocol=switchml"], ["workload.hosts:", "at most 32 children"]),
    (["topology.hosts=17", "workload.protocol=switchml"],
     ["workload.hosts:", "(1024 B) packets aggregates at most 16 children", "tor would have 17"]),
    (["topology.hosts=33", "workload.protocol=p4sgd"], ["workload.hosts:", "1..32 workers"]),
    (['topology={"type":"leaf_spine","leaves":2,"spines":1,"hosts_per_leaf":2}', "workload.protocol=p4sgd"],
     ["workload.hosts:", "p4sgd runs on one switch"]),
    (["workload.protocol=canary", "workload.jobs=5"], ["workload.jobs:", "5 jobs need at least 2 hosts each"]),
    (["topology.hosts=65", "workload.protocol=canary"], ["workload.protocol:", "65 ports"]),
], ids=["switchml_33", "switchml_17_at_1024_bytes", "p4sgd_33", "p4sgd_two_switches", "jobs_vs_hosts",
        "canary_65_ports"])
def test_validate_rejects_what_run_rejects(tmp_path, sets, words):
    args = [a for s in sets for a in ("--set", s)]
    for cmd in (["validate"], ["run", "--out", tmp_path / "res"]):
        assert_refused(inasim(*cmd, DEFAULT, *args), *words)
    assert not (tmp_path / "res").exists()


@pytest.mark.parametrize("sets,words", [
    (["topology.hosts=1024", "workload.bytes=1099511627776"], ["workload.bytes:", "of memory"]),
    (["topology.hosts=1024", 'background.flows={"stop_us":1000000000,"load":1}'],
     ["background.flows.stop_us:", "flows"]),
], ids=["bytes_at_maximum", "flows_stop_us"])
def test_memory_estimate_refuses_before_bad_alloc(tmp_path, sets, words):
    args = [a for s in sets for a in ("--set", s)]
    p = inasim("run", DEFAULT, *args, "--out", tmp_path / "res", timeout=60)
    assert_refused(p, *words)
    assert not (tmp_path / "res").exists()


def test_duplicate_keys_are_rejected_with_both_places(tmp_path):
    f = tmp_path / "dup.json"
    f.write_text('{"topology": {"type": "single_rack", "hosts": 8},\n "workload": {"bytes": 1024,\n "bytes": 4096}}\n')
    assert_refused(inasim("validate", f), f'duplicate key "workload.bytes"', "line 2, column 15", "line 3, column 2")
    assert_refused(inasim("validate", DEFAULT, "--set", 'workload={"bytes": 1024, "bytes": 2048}'),
                   'duplicate key "workload.bytes"')
    cfg = tmp_path / "cfg.json"
    cfg.write_text('{"num_ports": 8,\n "num_ports": 16}')
    p = inasim_p4("replay", "canary", "--config", cfg, stdin="")
    assert p.returncode == 2 and 'duplicate key "num_ports"' in p.stderr and "line 2, column 2" in p.stderr, p.stderr


@pytest.mark.parametrize("program,config,words", [
    ("switchml", {"switch_mac": "02:00:00:00:00:fe", "switch_ip": "10.0.0.254",
                  "workers": [{"id": 65537, "port": 1, "mac": "02:00:00:00:00:01", "ip": "10.0.0.1"}]},
     ["workers[0].id: must be an integer in 0..31, got 65537"]),
    ("p4sgd", {"num_workers": 2, "workers": [{"id": 0, "port": 70000}, {"id": 1, "port": 1}]},
     ["workers[0].port: must be an integer in 0..65535, got 70000"]),
    ("canary", {"udp_port": 70000}, ["udp_port: must be an integer in 0..65535"]),
    ("panama", {"jobs": [{"jid": 65536, "ports": [0]}]}, ["jobs[0].jid: must be an integer"]),
    ("canary", {"num_ports": 1.5}, ["num_ports: must be an integer"]),
    ("switchml", {"switch_mac": "02:00:00:00:00:fe", "switch_ip": "10.0.0.254", "workers": [], "pool": 1},
     ['unknown key "pool" (known: ', "pool_size"]),
    ("canary", {"tabel_size": 8}, ['unknown key "tabel_size" (known: ', "table_size"]),
], ids=["switchml_worker_id", "p4sgd_port", "canary_udp_port", "panama_jid", "fraction", "switchml_unknown",
        "canary_unknown"])
def test_inasim_p4_config_integers_are_range_checked_and_keys_known(tmp_path, program, config, words):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps(config))
    p = inasim_p4("replay", program, "--config", cfg, stdin="")
    assert p.returncode == 2, (p.returncode, p.stderr)
    for w in words:
        assert w in p.stderr, (w, p.stderr)


@pytest.mark.parametrize("value", ["abc", "-5", "1e3", "", "99999999999999999999999"])
def test_inasim_p4_now_ns_must_be_a_non_negative_integer(value):
    p = inasim_p4("replay", "canary", "--now-ns", value, stdin="")
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "--now-ns: must be a non-negative integer" in p.stderr and "internal error" not in p.stderr


@pytest.mark.parametrize("argv,words", [
    (["--help"], ["usage: inasim run"]), (["-h"], ["usage: inasim run"]),
    (["run", "--help"], ["usage: inasim run", "--out DIR", "Exit codes"]), (["run", "-h"], ["usage: inasim run"]),
    (["run", "{S}", "--help"], ["usage: inasim run"]),
    (["validate", "--help"], ["usage: inasim validate"]), (["validate", "-h"], ["usage: inasim validate"]),
])
def test_every_inasim_command_answers_help(tmp_path, argv, words):
    p = inasim(*[str(DEFAULT) if a == "{S}" else a for a in argv], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    for w in words:
        assert w in p.stdout, (w, p.stdout)
    assert list(tmp_path.iterdir()) == []  # --help runs nothing


@pytest.mark.parametrize("command", ["sweep", "compare"])
def test_python_commands_answer_help_through_python(command):
    p = inasim(command, "--help")
    assert p.returncode == 0, p.stderr
    assert "usage:" in p.stdout and command in p.stdout


@pytest.mark.parametrize("argv,words", [
    (["--help"], ["usage: inasim-p4 replay", "check", "manifest"]), (["-h"], ["usage: inasim-p4 replay"]),
    (["replay", "--help"], ["usage: inasim-p4 replay"]), (["replay", "canary", "-h"], ["usage: inasim-p4 replay"]),
    (["check", "--help"], ["usage: inasim-p4 check"]), (["check", "-h"], ["usage: inasim-p4 check"]),
    (["manifest", "--help"], ["inasim-p4 manifest"]), (["manifest", "-h"], ["inasim-p4 manifest"]),
])
def test_every_inasim_p4_command_answers_help(argv, words):
    p = inasim_p4(*argv)
    assert p.returncode == 0, p.stderr
    for w in words:
        assert w in p.stdout, (w, p.stdout)


def test_slow_settings_warn_before_the_run(tmp_path):
    # stderr is a pipe here, not a terminal: the warning must come anyway, and first.
    p = inasim("run", DEFAULT, *SMALL, "--set", "workload.ring.rto_us=0.001", "--set", "stop.max_sim_time_ms=0.001",
               "--out", tmp_path / "res", "--progress", "off")
    assert p.returncode == 1, p.stderr
    assert p.stderr.startswith("inasim: warning: workload.ring.rto_us: 0.001 us is shorter than one 1500-byte frame")
    p = inasim("validate", DEFAULT, "--set", "outputs.sample_interval_us=0.001")
    assert p.returncode == 0 and "inasim: warning: outputs.sample_interval_us:" in p.stderr
    assert inasim("validate", DEFAULT).stderr == ""


def shipped_scenarios():
    # Not scenarios: sweep definitions, a paper's claims and the committed
    # figure results with their provenance (docs/PAPER-CLAIMS.md).
    return sorted(p for p in (SOURCE_DIR / "scenarios").rglob("*.json")
                  if p.parent.name != "sweeps" and p.name != "paper-claims.json"
                  and "results" not in p.relative_to(SOURCE_DIR / "scenarios").parts)


def test_every_shipped_scenario_validates_without_warnings():
    for f in shipped_scenarios():
        p = inasim("validate", f)
        assert p.returncode == 0 and p.stderr == "", (f, p.stderr)


# ------------------------------- (h) property: validate accepts => run runs

PROTOCOL_DTYPE = {"ring": "int32", "switchml": "int32", "canary": "int32", "static_tree": "int32",
                  "panama": "float32", "p4sgd": "int32"}
TOPOLOGIES = [
    {"type": "single_rack", "hosts": 2}, {"type": "single_rack", "hosts": 8}, {"type": "single_rack", "hosts": 33},
    {"type": "single_rack", "hosts": 65}, {"type": "leaf_spine", "leaves": 2, "spines": 2, "hosts_per_leaf": 4},
    {"type": "leaf_spine", "leaves": 3, "spines": 1, "hosts_per_leaf": 40},
    {"type": "leaf_spine", "leaves": 4, "spines": 4, "hosts_per_leaf": 2}, {"type": "fat_tree", "k": 4},
]


def variant_sets(rng):
    """--set arguments mutating a scenario's topology, protocol, jobs and hosts."""
    sets = [f"topology={json.dumps(rng.choice(TOPOLOGIES))}"]
    if rng.random() < 0.7:
        protocol = rng.choice(sorted(PROTOCOL_DTYPE))
        sets += [f"workload.type=allreduce", f"workload.protocol={protocol}",
                 f"workload.dtype={PROTOCOL_DTYPE[protocol]}", "workload.data=hashed", "workload.bytes=65536"]
        sets += [f"workload.{other}=null" for other in sorted(PROTOCOL_DTYPE) if other != protocol]
        if protocol not in ("canary", "static_tree"):
            sets.append("workload.send_noise=null")
    if rng.random() < 0.4:
        sets.append(f"workload.jobs={rng.choice([1, 2, 3, 5])}")
    if rng.random() < 0.5:
        sets.append(f"workload.hosts={json.dumps(rng.choice(['all', {'count': 2}, {'count': 3}, {'count': 33}]))}")
    return sets


def hosts_of(scenario_file):
    t = json.loads(Path(scenario_file).read_text())["topology"]
    if t["type"] == "single_rack":
        return t["hosts"]
    if t["type"] == "leaf_spine":
        return t["leaves"] * t["hosts_per_leaf"]
    return t.get("hosts_per_edge", t["k"] // 2) * t["k"] ** 2 // 2


def test_property_validate_accepts_only_what_runs(tmp_path):
    """Issue 24: `validate` accepted what `run` then rejected (exit 2 or 3
    after building the workload). Every variant validate accepts must build
    and run (here for 0.01 ms of simulated time): exit 0 or 1."""
    import random
    rng = random.Random(24)
    files = shipped_scenarios()
    # The shipped scenarios as they are (the small ones: a large fabric takes seconds to build),
    # then random mutations of any of them onto small topologies.
    variants = [(f, []) for f in files if hosts_of(f) <= 64]
    variants += [(rng.choice(files), variant_sets(rng)) for _ in range(80)]
    accepted = 0
    for i, (f, sets) in enumerate(variants):
        args = [a for s in sets for a in ("--set", s)]
        v = inasim("validate", f, *args)
        assert v.returncode in (0, 2), (f, sets, v.stderr)
        if v.returncode != 0:
            continue
        accepted += 1
        r = inasim("run", f, *args, "--set", "stop.max_sim_time_ms=0.01", "--out", tmp_path / f"r{i}", "--quiet",
                   "--progress", "off", timeout=60)
        assert r.returncode in (0, 1), (f, sets, r.returncode, r.stderr)
    assert accepted >= 50, accepted  # the mutations must not all be rejected
