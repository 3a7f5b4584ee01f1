"""Sweeps (python/inasim/sweep.py, docs/SWEEPS.md): expansion, validation
before anything runs, the cache and resume, repetitions and seeds, local
processes vs a Dask cluster, and the `python3 -m inasim.sweep` command line.

Run by ctest (test `python_sweep`) with PYTHONPATH=python:build/python, or:

    PYTHONPATH=python:build/python /usr/bin/python3 -m pytest -q tests/python/test_sweep.py
"""

import concurrent.futures
import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import DEFAULT, SOURCE_DIR, child_env, import_inasim

inasim = import_inasim()
from inasim import sweep as sw

pd = pytest.importorskip("pandas")
np = pytest.importorskip("numpy")

RING_SMALL = SOURCE_DIR / "scenarios" / "sweeps" / "ring-small.json"

HOSTS = [4, 8]
BYTES = [65536, 131072]
GRID = {
    "name": "grid4",
    "scenario": str(DEFAULT),
    "grid": {"topology.hosts": HOSTS, "workload.bytes": BYTES},
}


def no_perf(df):
    return df.drop(columns=[c for c in df.columns if c.startswith("perf.")])


def mtimes(out):
    return {p.parent.name: p.stat().st_mtime_ns for p in (Path(out) / "cache").glob("*/results.json")}


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    """The 2x2 grid run once with two local processes: (out dir, DataFrame)."""
    out = tmp_path_factory.mktemp("local") / "grid4"
    df = sw.run_sweep(GRID, out=out, jobs=2, progress=False)
    return out, df


# ------------------------------------------------------------------ grid


def test_grid_rows_and_columns(local):
    out, df = local
    assert len(df) == 4
    cols = list(df.columns)
    assert cols[:8] == ["point", "repetition", "seed", "key", "inasim_version", "build", "topology.hosts",
                        "workload.bytes"]
    assert set(df["inasim_version"]) == {inasim.version()} and set(df["build"]) == {inasim.build_id()}
    metrics = cols[8:]
    assert metrics == sorted(metrics)
    for c in ("correct", "sim.end_time_s", "workload.mean_duration_s", "network.ecn_marks", "perf.wall_s"):
        assert c in metrics, c
    assert "scenario" not in metrics and not any(c.startswith("scenario.") for c in metrics)
    # Expansion order: first key outer, last key fastest.
    assert list(df["point"]) == [0, 1, 2, 3]
    assert list(zip(df["topology.hosts"], df["workload.bytes"])) == [(h, b) for h in HOSTS for b in BYTES]
    assert list(df["repetition"]) == [0] * 4
    assert df["correct"].map(lambda v: v == True).all()  # noqa: E712
    assert df["key"].nunique() == 4
    for h in HOSTS:
        d = df[df["topology.hosts"] == h].sort_values("workload.bytes")["workload.mean_duration_s"].tolist()
        assert d[0] < d[1], (h, d)
    # One atomic, complete result directory per run; no temporaries left.
    for k in df["key"]:
        assert (out / "cache" / k / "results.json").is_file()
    assert not [p.name for p in (out / "cache").iterdir() if p.name.startswith(".")]
    # sweep.csv is the returned table; sweep.json echoes the definition.
    csv = pd.read_csv(out / "sweep.csv")
    assert list(csv.columns) == cols and len(csv) == 4
    assert list(csv["key"]) == list(df["key"])
    echo = json.loads((out / "sweep.json").read_text())
    assert echo["sweep"] == GRID
    assert echo["inasim_version"] == inasim.version() and echo["build"] == inasim.build_id()
    assert [p["key"] for p in echo["points"]] == list(df["key"])
    assert echo["points"][3]["values"] == {"topology.hosts": 8, "workload.bytes": 131072}


def test_cache_key_is_resolved_scenario_and_simulator_hash(local):
    out, df = local
    entry = out / "cache" / df["key"][0]
    results = json.loads((entry / "results.json").read_text())
    assert sw.cache_key(results["scenario"]) == df["key"][0]
    canonical = json.dumps({"scenario": results["scenario"], "inasim_version": inasim.version(),
                            "build": inasim.build_id()}, sort_keys=True, separators=(",", ":"))
    assert df["key"][0] == hashlib.sha256(canonical.encode()).hexdigest()
    assert json.loads((entry / "identity.json").read_text()) == {
        "inasim_version": inasim.version(), "build": inasim.build_id(),
        "scenario_sha256": sw.scenario_hash(results["scenario"])}


# ---------------------------------------------------------------- resume


def test_resume(local, tmp_path):
    src, first = local
    out = tmp_path / "grid4"
    shutil.copytree(src, out)  # copy2: mtimes preserved
    before = mtimes(out)
    assert len(before) == 4

    again = sw.run_sweep(GRID, out=out, jobs=2, progress=False)
    assert again.attrs["ran"] == [] and sorted(again.attrs["cached"]) == sorted(before)
    assert mtimes(out) == before
    assert (out / "sweep.csv").read_bytes() == (src / "sweep.csv").read_bytes()

    victim = first["key"][2]
    shutil.rmtree(out / "cache" / victim)
    third = sw.run_sweep(GRID, out=out, jobs=2, progress=False)
    assert third.attrs["ran"] == [victim]
    after = mtimes(out)
    assert set(after) == set(before)
    assert {k: v for k, v in after.items() if k != victim} == {k: v for k, v in before.items() if k != victim}
    pd.testing.assert_frame_equal(no_perf(third), no_perf(first))

    # --no-resume / resume=False re-runs everything.
    fourth = sw.run_sweep(GRID, out=out, jobs=2, progress=False, resume=False)
    assert sorted(fourth.attrs["ran"]) == sorted(before)
    assert all(after[k] != v for k, v in mtimes(out).items())


# ----------------------------------------------------------- repetitions


def test_repetitions_seeds_and_keys(tmp_path):
    sweep = {
        "scenario": str(DEFAULT),
        "set": ["topology.hosts=4"],
        "points": [{"workload.bytes": 65536}],
        "repetitions": 2,
        "seed": 7,
    }
    df = sw.run_sweep(sweep, out=tmp_path / "reps", jobs=2, progress=False)
    assert list(df["point"]) == [0, 0]
    assert list(df["repetition"]) == [0, 1]
    assert list(df["seed"]) == [7, 8]
    assert df["key"].nunique() == 2
    assert df["correct"].map(lambda v: v == True).all()  # noqa: E712
    for k, s in zip(df["key"], df["seed"]):
        assert json.loads((tmp_path / "reps" / "cache" / k / "results.json").read_text())["seed"] == s


def test_default_base_seed_is_the_scenarios(tmp_path):
    plan = sw.plan_sweep(
        {"scenario": str(DEFAULT), "points": [{"workload.bytes": 65536}], "repetitions": 3}, out=tmp_path / "x"
    )
    base = inasim.load(str(DEFAULT)).get("seed", 1)
    assert [r.seed for r in plan.runs] == [base, base + 1, base + 2]
    assert not (tmp_path / "x").exists()


# ------------------------------------------------------------- bad input


def test_bad_point_fails_before_anything_runs(tmp_path):
    sweep = dict(GRID, grid={"topology.hosts": [4], "workload.bytes": [65536, 1026]})
    out = tmp_path / "bad"
    with pytest.raises(sw.SweepError) as e:
        sw.run_sweep(sweep, out=out, jobs=2, progress=False)
    msg = str(e.value)
    assert msg.startswith("point 1 (topology.hosts=4, workload.bytes=1026): workload.bytes: must be a multiple of 4")
    assert "\n" not in msg
    assert not out.exists()


@pytest.mark.parametrize(
    "change, expect",
    [
        ({"grdi": {}}, 'unknown key "grdi"'),
        ({"points": [{"workload.bytes": 65536}]}, 'exactly one of "grid" and "points"'),
        ({"repetitions": 0}, '"repetitions" must be an integer >= 1'),
        ({"seed": 0}, '"seed" must be a positive integer'),
        ({"grid": {"workload.bytes": []}}, 'grid "workload.bytes" must be a non-empty list'),
        ({"grid": {"seed": [1, 2]}}, '"seed" cannot be swept'),
        ({"scenario": "no-such-file.json"}, "no-such-file.json"),
    ],
)
def test_bad_sweep_definitions(tmp_path, change, expect):
    with pytest.raises(sw.SweepError) as e:
        sw.plan_sweep(dict(GRID, **change), out=tmp_path / "x")
    assert expect in str(e.value)


def test_flatten_metrics():
    doc = {
        "scenario": {"seed": 1},
        "correct": True,
        "seed": 3,
        "sim": {"end_time_s": 1.5e-5, "stopped_by": "workload_done", "hist": [1, 2], "none": None},
        "background": {"flows": {"fct": {"all": {"fct_s": {"p99": 0.25}}}}},
    }
    assert sw.flatten_metrics(doc) == {
        "correct": True,
        "seed": 3,
        "sim.end_time_s": 1.5e-5,
        "sim.stopped_by": "workload_done",
        "background.flows.fct.all.fct_s.p99": 0.25,
    }


# ------------------------------------------------------------------ Dask


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # tornado, inside distributed
def test_dask_local_cluster_matches_local(local, tmp_path):
    distributed = pytest.importorskip("distributed")
    _, expected = local
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
    ) as cluster:
        df = sw.run_sweep(GRID, out=tmp_path / "dask", scheduler=cluster, progress=False)
        assert len(df.attrs["ran"]) == 4
        # A Client is accepted too (and left open); everything is cached now.
        with distributed.Client(cluster) as client:
            again = sw.run_sweep(GRID, out=tmp_path / "dask", scheduler=client, progress=False)
            assert again.attrs["ran"] == [] and client.status == "running"
    pd.testing.assert_frame_equal(no_perf(df), no_perf(expected))
    pd.testing.assert_frame_equal(no_perf(again), no_perf(expected))


# ------------------------------------------------------------------- CLI


def cli(*args, cwd=None):
    # child_env: PYTHONPATH made absolute, so that cwd= does not lose inasim.
    return subprocess.run(
        [sys.executable, "-m", "inasim.sweep", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=child_env(),
    )


def test_cli_ring_small(tmp_path):
    out = tmp_path / "ring"
    p = cli(RING_SMALL, "--out", out, "--jobs", "2", "--progress", "off")
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    df = pd.read_csv(out / "sweep.csv")
    assert len(df) == 4 and df["correct"].all()
    assert list(df.columns[4:8]) == ["inasim_version", "build", "topology.hosts", "workload.bytes"]
    assert json.loads((out / "sweep.json").read_text())["name"] == "ring-small"
    assert "4 ran, 0 cached" in p.stdout
    p = cli(RING_SMALL, "--out", out, "--jobs", "2", "--progress", "off")
    assert p.returncode == 0 and "0 ran, 4 cached" in p.stdout


def test_cli_default_out_is_relative_to_cwd(tmp_path):
    sweep = tmp_path / "defs" / "tiny.json"
    sweep.parent.mkdir()
    sweep.write_text(json.dumps({"scenario": str(DEFAULT), "points": [{"topology.hosts": 4, "workload.bytes": 65536}]}))
    p = cli(sweep, "--jobs", "1", "--progress", "off", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "out" / "sweeps" / "tiny" / "sweep.csv").is_file()


def test_cli_unknown_key_exits_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(dict(GRID, repetitons=2)))
    p = cli(bad, "--out", tmp_path / "o", "--progress", "off")
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and 'unknown key "repetitons"' in lines[0] and '"repetitions"' in lines[0]
    assert not (tmp_path / "o").exists()


def test_cli_bad_point_exits_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(dict(GRID, grid={"workload.bytes": [65536, 1026]})))
    p = cli(bad, "--out", tmp_path / "o", "--progress", "off")
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "point 1 (workload.bytes=1026): workload.bytes: must be a multiple of 4" in lines[0]
    assert not (tmp_path / "o").exists()


def test_cli_not_valid_json_exits_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    p = cli(bad, "--progress", "off", cwd=tmp_path)
    assert p.returncode == 2 and "not valid JSON" in p.stderr


def test_cli_incorrect_result_exits_1(monkeypatch, capsys, tmp_path):
    df = pd.DataFrame({"point": [0, 1], "repetition": [0, 0], "correct": [True, False]})
    df.attrs.update({"out": str(tmp_path), "ran": ["a", "b"], "cached": []})
    monkeypatch.setattr(sw, "run_sweep", lambda *a, **k: df)
    assert sw.main([str(RING_SMALL), "--progress", "off"]) == 1
    assert "1 run(s) not correct: point 1 repetition 0" in capsys.readouterr().err


def test_progress_line():
    import io

    stream = io.StringIO()
    bar = sw._Progress(4, 1, True, stream=stream)
    bar.update()
    bar.close()
    text = stream.getvalue()
    assert text.startswith("\r[1/4] 25% elapsed 0:00 eta ?")
    assert "\r[2/4] 50% elapsed 0:00 eta 0:0" in text and text.endswith("\n")
    assert "\n" not in text[:-1]
    quiet = io.StringIO()
    sw._Progress(4, 0, False, stream=quiet).close()
    assert quiet.getvalue() == ""


# ------------------------------------------- issue 24 §3: robustness of sweeps


def py_cli(*args, cwd=None, timeout=300):
    """`python3 -m inasim ...`: what `inasim sweep|compare` execs."""
    return subprocess.run(
        [sys.executable, "-m", "inasim", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout,
        env=child_env(),
    )


def process_group(pgid):
    """PIDs of live (not zombie) processes in process group `pgid`, from /proc."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # state ppid pgrp ...
        if fields[0] != "Z" and int(fields[2]) == pgid:
            pids.append(int(d))
    return pids


def cached_results(out):
    c = Path(out) / "cache"
    return sorted(p.parent.name for p in c.glob("*/results.json")) if c.is_dir() else []


FAST = [{"workload.bytes": 65536}, {"workload.bytes": 131072}]
# Minutes each on this machine: certainly running when the signal comes.
SLOW = [{"workload.bytes": 4194304, "workload.iterations": 100}, {"workload.bytes": 4194304, "workload.iterations": 101}]


@pytest.mark.parametrize("sig, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_kills_workers_and_keeps_the_cache(tmp_path, sig, status):
    sweep = tmp_path / "slow.json"
    sweep.write_text(json.dumps({"scenario": str(DEFAULT), "points": FAST + SLOW}))
    out = tmp_path / "out"
    # Its own session: the sweep's pid is the process group of everything it starts.
    p = subprocess.Popen(
        [sys.executable, "-m", "inasim", "sweep", str(sweep), "--out", str(out), "--jobs", "2", "--progress", "off"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while len(cached_results(out)) < 2 and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.1)
        assert len(cached_results(out)) == 2, "the two fast points did not finish"
        time.sleep(0.5)  # the two slow points are now running in the workers
        workers = [pid for pid in process_group(p.pid) if pid != p.pid]
        assert len(workers) >= 2, workers
        assert p.poll() is None
        p.send_signal(sig)  # to the sweep alone, as kill and batch schedulers do
        t0 = time.monotonic()
        _, err = p.communicate(timeout=30)
        assert time.monotonic() - t0 < 15
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == status, err
    assert "run again to resume" in err and "Traceback" not in err
    deadline = time.monotonic() + 10  # the resource tracker exits on its own when the sweep is gone
    while process_group(p.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert process_group(p.pid) == [], "processes of the sweep survived it"
    # No half-written result left behind; the finished ones are kept.
    cache = out / "cache"
    assert [e.name for e in cache.iterdir() if e.name.startswith(".")] == []
    done = {k: (cache / k / "results.json").stat().st_mtime_ns for k in cached_results(out)}
    assert len(done) == 2
    # Rerun (slow points made short): the cached points are not run again.
    sweep.write_text(json.dumps({"scenario": str(DEFAULT), "points": FAST + [{"workload.bytes": 262144}]}))
    again = py_cli("sweep", sweep, "--out", out, "--jobs", "2", "--progress", "off")
    assert again.returncode == 0, again.stderr
    assert "1 ran, 2 cached" in again.stdout
    assert {k: (cache / k / "results.json").stat().st_mtime_ns for k in done} == done


# More jobs than 2 hosts each allow: valid keys and values, an error that
# needs the topology and the chosen hosts (found by the network setup that
# precedes every sweep's runs, or by validation where it checks placement).
SETUP_ERROR = {
    "scenario": str(DEFAULT),
    "set": ["workload.bytes=65536"],
    "grid": {"topology.hosts": [8, 4], "workload.jobs": [1, 2, 3]},
}
SETUP_MESSAGE = ("point 5 (topology.hosts=4, workload.jobs=3): workload.jobs: 3 jobs need at least 2 hosts each; "
                 "4 hosts are selected")


def test_setup_error_deep_in_grid_fails_before_any_run(tmp_path):
    out = tmp_path / "bad"
    with pytest.raises(sw.SweepError) as e:
        sw.run_sweep(SETUP_ERROR, out=out, jobs=2, progress=False)
    assert str(e.value).startswith(SETUP_MESSAGE) and "\n" not in str(e.value)
    assert not out.exists()  # points 0-4 are fine: none of them ran


def test_cli_setup_error_exits_2_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(SETUP_ERROR))
    for extra in ([], ["--dry-run"]):
        p = py_cli("sweep", bad, "--out", tmp_path / "o", "--jobs", "2", "--progress", "off", *extra)
        assert p.returncode == 2, p.stderr
        assert p.stderr.startswith(f"inasim sweep: {SETUP_MESSAGE}") and p.stderr.count("\n") == 1
        assert p.stdout == ""
        assert not (tmp_path / "o").exists()


def test_setup_error_with_repetitions_names_the_repetition(tmp_path):
    # workload.jobs splits hosts at random by seed: each repetition is checked
    # (validation finds this one for any seed: then no repetition is named).
    sweep = dict(SETUP_ERROR, grid={"workload.jobs": [5]}, repetitions=2)
    with pytest.raises(sw.SweepError, match=r"^point 0 \(workload.jobs=5\)(, repetition [01])?: workload.jobs: "):
        sw.run_sweep(sweep, out=tmp_path / "o", jobs=1, progress=False)
    assert not (tmp_path / "o").exists()


def test_setup_check_runs_in_the_workers_before_any_run(tmp_path, monkeypatch):
    # What validation cannot see (here: a stand-in for a setup error) stops
    # the sweep before any run, names the first bad point in sweep order.
    calls = []

    def fake_check(resolved, base_dir=None):
        calls.append(resolved["workload"]["bytes"])
        return "workload: bad setup" if resolved["workload"]["bytes"] in (131072, 262144) else None

    monkeypatch.setattr(sw, "check_point", fake_check)
    monkeypatch.setattr(sw, "run_point", lambda *a: pytest.fail("a run started"))

    monkeypatch.setattr(sw, "_local_pool", InProcess)  # no processes: the monkeypatched functions apply
    sweep = dict(GRID, grid={"workload.bytes": [65536, 262144, 131072]})
    with pytest.raises(sw.SweepError) as e:
        sw.run_sweep(sweep, out=tmp_path / "o", jobs=2, progress=False)
    assert str(e.value) == "point 1 (workload.bytes=262144): workload: bad setup"
    assert sorted(calls) == [65536, 131072, 262144]
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("dry", [False, True])
def test_cli_out_is_a_file_exits_2(tmp_path, dry):
    f = tmp_path / "file"
    f.write_text("keep me\n")
    extra = ["--dry-run"] if dry else []
    cases = [
        (f, "exists and is not a directory"),
        (f / "sub", f"cannot be created: {f} is not a directory"),
        ("/proc/self/inasim-out", "cannot be created: /proc/self is not writable"),  # read-only even for root
    ]
    for out, problem in cases:
        p = py_cli("sweep", RING_SMALL, "--out", out, "--progress", "off", *extra)
        assert p.returncode == 2, p.stderr
        assert p.stderr == f"inasim sweep: out {out}: {problem}\n"
    assert f.read_text() == "keep me\n" and sorted(x.name for x in tmp_path.iterdir()) == ["file"]


def test_out_inside_is_blocked(tmp_path):
    (tmp_path / "o" / "sweep.csv").mkdir(parents=True)
    with pytest.raises(sw.SweepError, match="sweep.csv inside it is a directory"):
        sw.plan_sweep(GRID, out=tmp_path / "o")
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "cache").write_text("")
    with pytest.raises(sw.SweepError, match="cache inside it exists and is not a directory"):
        sw.run_sweep(GRID, out=tmp_path / "p", jobs=1, progress=False)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_out_parent_not_writable(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    with pytest.raises(sw.SweepError, match=f"cannot be created: {ro} is not writable"):
        sw.plan_sweep(GRID, out=ro / "o")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_nan_in_a_sweep_dict_is_named_by_key(tmp_path, value):
    sweep = dict(GRID, grid={"workload.bytes": [65536, value]})
    with pytest.raises(sw.SweepError) as e:
        sw.plan_sweep(sweep, out=tmp_path / "x")
    assert str(e.value).startswith('sweep: grid["workload.bytes"][1]: must be a finite number, got ')
    scenario = inasim.load(str(DEFAULT))
    scenario["links"]["host_rate_gbps"] = value
    with pytest.raises(sw.SweepError, match=r"^sweep: scenario\.links\.host_rate_gbps: must be a finite number"):
        sw.plan_sweep(dict(GRID, scenario=scenario), out=tmp_path / "x")
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_in_a_sweep_file_exits_2(tmp_path, literal):
    bad = tmp_path / "bad.json"
    bad.write_text('{"scenario": "%s", "points": [{"workload.bytes": 65536}, {"workload.bytes": %s}]}'
                   % (DEFAULT, literal))
    p = py_cli("sweep", bad, "--out", tmp_path / "o", "--progress", "off")
    assert p.returncode == 2
    assert p.stderr == f'inasim sweep: {bad}: points[1]["workload.bytes"]: {literal} is not valid JSON (use a finite number)\n'
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "text, where",
    [
        ('{"scenario": "S", "grid": {"workload.bytes": [65536]}, "grid": {"topology.hosts": [4]}}',
         'top level: duplicate key "grid"'),
        ('{"scenario": "S", "grid": {"workload.bytes": [65536], "workload.bytes": [131072]}}',
         'grid: duplicate key "workload.bytes"'),
        ('{"scenario": {"topology": {"hosts": 4, "hosts": 8}}, "points": [{"workload.bytes": 65536}]}',
         'scenario.topology: duplicate key "hosts"'),
    ],
)
def test_duplicate_keys_in_a_sweep_file_exit_2(tmp_path, text, where):
    bad = tmp_path / "dup.json"
    bad.write_text(text.replace('"S"', json.dumps(str(DEFAULT))))
    with pytest.raises(sw.SweepError) as e:
        sw.load_sweep(bad)
    assert str(e.value) == f"{bad}: {where}"
    p = py_cli("sweep", bad, "--out", tmp_path / "o", "--progress", "off")
    assert p.returncode == 2 and p.stderr == f"inasim sweep: {bad}: {where}\n"
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("argv", [["--help"], ["-h"], ["sweep", "--help"], ["sweep", "-h"], ["compare", "--help"],
                                  ["compare", "-h"]])
def test_help_exits_0_with_usage_on_stdout(argv):
    p = py_cli(*argv)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("usage: ") and p.stderr == ""
    for mod in ("inasim.sweep", "inasim.compare"):
        q = subprocess.run([sys.executable, "-m", mod, "--help"], capture_output=True, text=True, timeout=60)
        assert q.returncode == 0 and q.stdout.startswith("usage: inasim "), q.stderr


@pytest.mark.parametrize("argv, words", [([], "usage: "), (["bogus"], 'unknown command "bogus"'),
                                         (["sweep"], "SWEEP.json"),
                                         (["sweep", "x.json", "--bogus"], "unrecognized arguments: --bogus")])
def test_usage_errors_exit_2(argv, words):
    p = py_cli(*argv)
    assert p.returncode == 2 and words in p.stderr and p.stdout == ""
    assert "Traceback" not in p.stderr


# ------------------------------------------------ issue 27: what sweeps lacked

SMALL = ["topology.hosts=4", "workload.bytes=65536"]


class InProcess:
    """The local pool without processes: the runs happen in this process, so
    what a test monkeypatches (inasim.build_id) holds for them too."""

    def __init__(self, *args):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def submit(self, fn, *args):
        f = concurrent.futures.Future()
        try:
            f.set_result(fn(*args))
        except Exception as e:  # noqa: BLE001 - as a worker would hand it back
            f.set_exception(e)
        return f


def scenario_of(out, key):
    return json.loads((Path(out) / "cache" / key / "results.json").read_text())["scenario"]


# §1 the protocol as a sweep axis

# A base that carries SwitchML's tuning and float32 data: what a plain
# `--set workload.protocol=...` (today's point) cannot turn into a ring or a
# Canary run.
PROTOCOL_BASE = [*SMALL, "workload.dtype=float32", "workload.switchml.pool_size=64"]


def test_protocol_axis_gets_each_protocols_scenario(tmp_path):
    # Today's point document is the base, `set`, then the point's overrides as
    # --set: the ring keeps SwitchML's section, Canary keeps float32.
    for protocol in ("ring", "canary"):
        with pytest.raises(inasim.ScenarioError, match='^workload.switchml: only read with protocol "switchml"'):
            inasim.validate(str(DEFAULT), sets=[*PROTOCOL_BASE, f"workload.protocol={protocol}"])
    with pytest.raises(inasim.ScenarioError, match="^workload.dtype: "):
        inasim.validate(str(DEFAULT), sets=[*SMALL, "workload.dtype=float32", "workload.protocol=canary"])

    sweep = {"scenario": str(DEFAULT), "set": PROTOCOL_BASE,
             "grid": {"workload.protocol": ["ring", "switchml", "canary"]}}
    df = sw.run_sweep(sweep, out=tmp_path / "p", jobs=2, progress=False)
    assert list(df["workload.protocol"]) == ["ring", "switchml", "canary"]
    assert df["correct"].map(lambda v: v == True).all()  # noqa: E712
    assert (df["sim.stopped_by"] == "workload_done").all()
    w = {p: scenario_of(tmp_path / "p", k)["workload"] for p, k in zip(df["workload.protocol"], df["key"])}
    assert [w[p]["protocol"] for p in w] == ["ring", "switchml", "canary"]
    assert "switchml" not in w["ring"] and "switchml" not in w["canary"]
    assert w["switchml"]["switchml"]["pool_size"] == 64  # the base's tuning of the protocol in use stays
    assert (w["ring"]["dtype"], w["switchml"]["dtype"], w["canary"]["dtype"]) == ("float32", "float32", "int32")


def test_protocol_axis_keeps_the_points_own_protocol_settings(tmp_path):
    sweep = {"scenario": str(DEFAULT), "set": SMALL,
             "grid": {"workload.protocol": ["ring", "switchml"], "workload.switchml.pool_size": [32, 64]}}
    out = tmp_path / "pool"
    df = sw.run_sweep(sweep, out=out, jobs=2, progress=False)
    assert df["correct"].map(lambda v: v == True).all()  # noqa: E712
    assert list(df["workload.switchml.pool_size"]) == [32, 64, 32, 64]  # the swept values, as given
    keys = list(df["key"])
    assert keys[0] == keys[1] and len(set(keys)) == 3  # the ring has no pool: one run for both ring points
    assert [scenario_of(out, k)["workload"].get("switchml", {}).get("pool_size") for k in keys] == [None, None, 32, 64]
    echo = json.loads((out / "sweep.json").read_text())["points"]
    assert [p.get("not_applied") for p in echo] == [["workload.switchml.pool_size"]] * 2 + [None] * 2


def test_protocol_axis_keeps_the_experiments_workload_keys(tmp_path):
    # protocol_scenario lists workload.jobs as no allreduce's key; the sweep
    # keeps it: a grid over the protocol compares them on the same jobs.
    base = inasim.load(str(DEFAULT))
    base["workload"].update(bytes=65536, jobs=2, job_split="contiguous", canary={"timeout_us": 2})
    plan = sw.plan_sweep({"scenario": base, "grid": {"workload.protocol": ["ring", "canary"]}}, out=tmp_path / "x")
    for run, protocol in zip(plan.runs, ["ring", "canary"]):
        w = run.resolved["workload"]
        assert (w["protocol"], w["jobs"], w["job_split"]) == (protocol, 2, "contiguous")
    assert "canary" not in plan.runs[0].resolved["workload"]
    assert plan.runs[1].resolved["workload"]["canary"]["timeout_us"] == 2


def test_protocol_in_the_fixed_set_gets_its_scenario(tmp_path):
    base = inasim.load(str(DEFAULT))
    base["workload"].update(bytes=65536, canary={"timeout_us": 2})
    sweep = {"scenario": base, "set": ["workload.protocol=ring"], "points": [{"workload.ring.window_packets": 4}]}
    (run,) = sw.plan_sweep(sweep, out=tmp_path / "x").runs
    assert run.resolved["workload"]["protocol"] == "ring" and "canary" not in run.resolved["workload"]
    assert run.resolved["workload"]["ring"]["window_packets"] == 4


def test_unknown_protocol_names_the_point_and_the_known_ones(tmp_path):
    from inasim import compare

    known = ", ".join(compare.PROTOCOLS)
    sweep = {"scenario": str(DEFAULT), "set": SMALL, "grid": {"workload.protocol": ["ring", "rign"]}}
    with pytest.raises(sw.SweepError) as e:
        sw.run_sweep(sweep, out=tmp_path / "x", jobs=1, progress=False)
    assert str(e.value) == ('point 1 (workload.protocol=rign): workload.protocol: unknown protocol "rign" '
                            f"(known protocols: {known})")
    with pytest.raises(sw.SweepError, match=r'^sweep: "set": workload.protocol: unknown protocol "rign" \(known'):
        sw.plan_sweep(dict(sweep, set=[*SMALL, "workload.protocol=rign"], grid={"workload.bytes": [65536]}),
                      out=tmp_path / "x")
    assert not (tmp_path / "x").exists()


# §2 the simulator's identity in the cache key


def today_key(resolved):
    """The cache key before this change: the resolved scenario alone."""
    return hashlib.sha256(json.dumps(resolved, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


HINT = "; --reuse-build BUILD takes a build's that behaves the same (docs/SWEEPS.md)"


def test_another_build_reruns_everything(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sw, "_local_pool", InProcess)
    sweep = {"scenario": str(DEFAULT), "set": SMALL, "grid": {"workload.iterations": [1, 2]}}
    out = tmp_path / "o"
    first = sw.run_sweep(sweep, out=out, jobs=1, progress=False)
    assert len(first.attrs["ran"]) == 2 and first.attrs["other_builds"] == 0
    real = f"{inasim.version()}/{inasim.build_id()}"

    monkeypatch.setattr(inasim, "build_id", lambda: "0123456789abcdef")
    # Today's key is the same for the new build: today's sweep would have found
    # cache/<key>/results.json of the old build for every run, all cached.
    assert [today_key(r.resolved) for r in sw.plan_sweep(sweep, out=out).runs] == \
        [today_key(scenario_of(out, k)) for k in first["key"]]
    capsys.readouterr()
    second = sw.run_sweep(sweep, out=out, jobs=1, progress=False)
    assert second.attrs["cached"] == [] and len(second.attrs["ran"]) == 2
    assert second.attrs["other_builds"] == 2
    assert capsys.readouterr().err == f"sweep: 2 cached results of other builds ignored ({real}){HINT}\n"
    assert not set(second["key"]) & set(first["key"])
    csv = pd.read_csv(out / "sweep.csv")
    assert len(csv) == 2 and set(csv["build"]) == {"0123456789abcdef"}  # never mixed with the old build's rows
    assert json.loads((out / "sweep.json").read_text())["build"] == "0123456789abcdef"

    # A result cached by today's code (key = the scenario's hash, no
    # identity.json) is another build's too, of a build nobody recorded.
    for k in first["key"]:
        legacy = out / "cache" / today_key(scenario_of(out, k))
        shutil.copytree(out / "cache" / k, legacy)
        (legacy / "identity.json").unlink()
    third = sw.run_sweep(sweep, out=out, jobs=1, progress=False)
    assert sorted(third.attrs["cached"]) == sorted(second["key"]) and third.attrs["other_builds"] == 4
    assert capsys.readouterr().err == (f"sweep: 4 cached results of other builds ignored "
                                       f"({real}, {inasim.version()}/unknown build){HINT}\n")


def test_reuse_builds_takes_the_named_builds_results_and_says_so(tmp_path, monkeypatch, capsys):
    """A build the caller vouches for (reuse_builds) answers the runs this
    build has not cached; each row keeps the build, version and directory
    it came from, sweep.json says so, and nothing runs. Another build's
    results are still ignored, and a bad build id is refused."""
    monkeypatch.setattr(sw, "_local_pool", InProcess)
    sweep = {"scenario": str(DEFAULT), "set": SMALL, "grid": {"workload.iterations": [1, 2]}}
    out = tmp_path / "o"
    first = sw.run_sweep(sweep, out=out, jobs=1, progress=False)
    old_build, old_version = inasim.build_id(), inasim.version()
    monkeypatch.setattr(inasim, "build_id", lambda: "0123456789abcdef")
    capsys.readouterr()
    with pytest.raises(sw.SweepError, match="not a build id"):
        sw.run_sweep(sweep, out=out, jobs=1, progress=False, reuse_builds=["xyz"])
    again = sw.run_sweep(sweep, out=out, jobs=1, progress=False, reuse_builds=["fedcba9876543210", old_build])
    assert again.attrs["ran"] == [] and len(again.attrs["reused"]) == 2 and again.attrs["other_builds"] == 0
    assert capsys.readouterr().err == f"sweep: 2 results of {old_version}/{old_build} reused (reuse_builds)\n"
    csv = pd.read_csv(out / "sweep.csv", dtype={"build": str})
    assert list(csv["key"]) == list(first["key"]) and set(csv["build"]) == {old_build}
    assert list(csv["sim.fingerprint"]) == list(first["sim.fingerprint"])
    echo = json.loads((out / "sweep.json").read_text())
    assert echo["build"] == "0123456789abcdef"
    assert [p["reused_from"]["key"] for p in echo["points"]] == list(first["key"])
    assert all(p["reused_from"]["build"] == old_build for p in echo["points"])
    # Without reuse_builds the old build's results are not taken.
    third = sw.run_sweep(sweep, out=out, jobs=1, progress=False)
    assert len(third.attrs["ran"]) == 2 and third.attrs["other_builds"] == 2


def test_worker_of_another_build_is_a_failure(tmp_path, monkeypatch):
    # This client says it is another build; the spawned worker loads the real one.
    sweep = {"scenario": str(DEFAULT), "set": SMALL, "points": [{}]}
    monkeypatch.setattr(inasim, "build_id", lambda: "0123456789abcdef")
    with pytest.raises(sw.SweepRunError) as e:
        sw.run_sweep(sweep, out=tmp_path / "o", jobs=1, progress=False)
    msg = str(e.value)
    assert f"runs build {inasim.version()}/" in msg and f"this client build {inasim.version()}/0123456789abcdef" in msg
    assert "worker local process " in msg
    assert not list((tmp_path / "o" / "cache").iterdir())  # refused before simulating
    assert len(e.value.table) == 0 and len(e.value.failures) == 1


def test_result_of_another_build_is_not_taken(tmp_path, monkeypatch):
    # A worker that does not check (say, another checkout's run_point) and
    # hands back another identity: the client refuses the result.
    monkeypatch.setattr(sw, "_local_pool", InProcess)
    real = sw.run_point

    def other_build(resolved, out, base_dir=None, expect=None):
        return dict(real(resolved, out, base_dir), identity={"inasim_version": "0.0.1", "build": "feedfeedfeedfeed"})

    monkeypatch.setattr(sw, "run_point", other_build)
    with pytest.raises(sw.SweepRunError) as e:
        sw.run_sweep({"scenario": str(DEFAULT), "set": SMALL, "points": [{}]}, out=tmp_path / "o", jobs=1,
                     progress=False)
    assert "runs build 0.0.1/feedfeedfeedfeed, this client build" in str(e.value)
    assert pd.read_csv(tmp_path / "o" / "sweep.csv").empty


# §3 a failing point leaves a partial sweep.csv and failures.csv


def test_failing_run_leaves_partial_csv_and_failures_csv(tmp_path):
    sweep = {"scenario": str(DEFAULT), "set": ["topology.hosts=4"], "grid": {"workload.bytes": [65536, 131072, 262144]}}
    out = tmp_path / "o"
    # A real failure in a real worker: point 1's cache slot holds a file of
    # someone's that no run writes, so its run cannot store its results.
    victim = sw.plan_sweep(sweep, out=out).runs[1]
    (out / "cache" / victim.key).mkdir(parents=True)
    (out / "cache" / victim.key / "notes.txt").write_text("mine\n")
    with pytest.raises(sw.SweepRunError) as e:
        sw.run_sweep(sweep, out=out, jobs=2, progress=False)
    assert f"1 of 3 runs failed, listed in {out / 'failures.csv'}" in str(e.value)
    csv = pd.read_csv(out / "sweep.csv")
    assert list(csv["point"]) == [0, 2] and list(csv["workload.bytes"]) == [65536, 262144]
    assert csv["correct"].all() and victim.key not in set(csv["key"])
    failures = pd.read_csv(out / "failures.csv")
    assert list(failures.columns) == ["point", "repetition", "seed", "key", "workload.bytes", "error"]
    f = failures.iloc[0]
    assert (f["point"], f["repetition"], f["seed"], f["key"]) == (1, 0, victim.seed, victim.key)
    assert f["workload.bytes"] == 131072
    assert f["error"].startswith(f"point 1 (workload.bytes=131072), seed {victim.seed}: ScenarioError: ")
    assert "notes.txt" in f["error"]
    summary = pd.read_csv(out / "summary.csv")
    assert summary[summary["point"] == 1][["n", "missing"]].drop_duplicates().values.tolist() == [[0, 1]]
    assert [p["point"] for p in json.loads((out / "sweep.json").read_text())["failed"]] == [1]

    # The command line: exit 1, one line naming failures.csv.
    (tmp_path / "s.json").write_text(json.dumps(sweep))
    p = py_cli("sweep", tmp_path / "s.json", "--out", out, "--jobs", "1", "--progress", "off", timeout=120)
    assert p.returncode == 1 and p.stderr.count("\n") == 1, p.stderr
    assert p.stderr.startswith(f"inasim sweep: 1 of 1 runs failed, listed in {out / 'failures.csv'}")

    shutil.rmtree(out / "cache" / victim.key)
    again = sw.run_sweep(sweep, out=out, jobs=2, progress=False)
    assert again.attrs["ran"] == [victim.key] and len(again) == 3
    assert not (out / "failures.csv").exists()


# §4 per-point summary with confidence intervals


def test_summary_csv_mean_std_and_ci(tmp_path):
    from scipy import stats

    sweep = {"scenario": str(DEFAULT), "set": SMALL, "points": [{"workload.protocol": "ring"}], "repetitions": 3}
    df = sw.run_sweep(sweep, out=tmp_path / "o", jobs=2, progress=False)
    rows = pd.read_csv(tmp_path / "o" / "sweep.csv")
    summary = pd.read_csv(tmp_path / "o" / "summary.csv")
    assert list(summary.columns) == ["point", "workload.protocol", "metric", "n", "missing", "mean", "std",
                                     "ci95_low", "ci95_high"]
    pd.testing.assert_frame_equal(df.attrs["summary"], summary, check_dtype=False)
    assert set(summary["point"]) == {0} and set(summary["workload.protocol"]) == {"ring"}
    assert "correct" not in set(summary["metric"]) and "sim.stopped_by" not in set(summary["metric"])
    assert {"workload.mean_duration_s", "perf.wall_s", "network.bytes_tx"} <= set(summary["metric"])
    t = stats.t.ppf(0.975, 2)
    spread = 0
    for _, s in summary.iterrows():
        x = rows[s["metric"]].to_numpy(dtype=float)
        mean, std = np.mean(x), np.std(x, ddof=1)
        assert (s["n"], s["missing"]) == (3, 0), s["metric"]
        assert s["mean"] == pytest.approx(mean, rel=1e-12, abs=1e-300), s["metric"]
        assert s["std"] == pytest.approx(std, rel=1e-9, abs=1e-300), s["metric"]
        half = t * std / np.sqrt(3)
        assert (s["ci95_low"], s["ci95_high"]) == (pytest.approx(mean - half, rel=1e-9, abs=1e-300),
                                                   pytest.approx(mean + half, rel=1e-9, abs=1e-300)), s["metric"]
        spread += std > 0
    assert spread > 0  # perf.wall_s at least varies: the interval is not a point


# §5 Dask: a real dask-scheduler with two dask-workers


@pytest.fixture(scope="module")
def dask_scheduler(tmp_path_factory):
    """`dask-scheduler` and two `dask-worker --nthreads 1` started here, each
    in its own session (killed with everything they started, whatever
    happens); yields the scheduler's address once both workers are in."""
    distributed = pytest.importorskip("distributed")
    if not (os.access("/usr/bin/dask-scheduler", os.X_OK) and os.access("/usr/bin/dask-worker", os.X_OK)):
        pytest.skip("no /usr/bin/dask-scheduler, /usr/bin/dask-worker (python3-distributed)")

    d = tmp_path_factory.mktemp("dask")
    file = d / "scheduler.json"
    env = child_env()
    procs = []

    def start(name, *argv):
        log = open(d / f"{name}.log", "w")
        procs.append(subprocess.Popen(argv, env=env, cwd=d, stdout=log, stderr=subprocess.STDOUT,
                                      start_new_session=True))
        log.close()

    try:
        start("scheduler", "/usr/bin/dask-scheduler", "--port", "0", "--no-dashboard", "--scheduler-file", str(file))
        for i in range(2):
            start(f"worker{i}", "/usr/bin/dask-worker", "--scheduler-file", str(file), "--nthreads", "1",
                  "--nworkers", "1", "--no-dashboard")
        deadline = time.monotonic() + 20
        while not file.is_file() and time.monotonic() < deadline:
            time.sleep(0.1)
        with distributed.Client(scheduler_file=str(file), timeout=10) as client:
            client.wait_for_workers(2, timeout=max(1, deadline - time.monotonic()))
            yield client.scheduler.address, set(client.scheduler_info()["workers"])
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # tornado, inside distributed
def test_dask_scheduler_with_two_workers_matches_local(dask_scheduler, local, tmp_path):
    address, workers = dask_scheduler
    _, expected = local
    df = sw.run_sweep(GRID, out=tmp_path / "dask", scheduler=address, progress=False)
    assert len(df.attrs["ran"]) == 4
    pd.testing.assert_frame_equal(no_perf(df), no_perf(expected))
    ran_on = set(df.attrs["workers"].values())
    assert ran_on == workers and len(ran_on) == 2  # both workers ran something


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_dask_worker_of_another_build_is_a_failure(dask_scheduler, tmp_path, monkeypatch):
    address, workers = dask_scheduler
    monkeypatch.setattr(inasim, "build_id", lambda: "0123456789abcdef")  # this client; not the workers
    with pytest.raises(sw.SweepRunError):
        sw.run_sweep({"scenario": str(DEFAULT), "set": SMALL, "points": [{}]}, out=tmp_path / "o", scheduler=address,
                     progress=False)
    (error,) = pd.read_csv(tmp_path / "o" / "failures.csv")["error"]
    worker = error.split("worker ", 1)[1].split(" ", 1)[0]
    assert worker in workers
    assert f"runs build {inasim.version()}/" in error and "this client build" in error and "0123456789abcdef" in error


# §6 a script without the main guard


UNGUARDED = """\
from inasim.sweep import run_sweep

df = run_sweep({{"scenario": {scenario!r}, "set": {sets!r}, "grid": {{"workload.iterations": [1, 2]}}}},
               out={out!r}, jobs=2, progress=False)
print("rows", len(df))
"""


def test_unguarded_script_gets_the_main_guard_message(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED.format(scenario=str(DEFAULT), sets=SMALL, out=str(tmp_path / "o")))
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=child_env(), cwd=tmp_path,
                       timeout=60)
    assert time.monotonic() - t0 < 30
    assert p.returncode != 0 and p.stdout == ""
    last = p.stderr.rstrip().splitlines()[-1]
    assert last.startswith("inasim.sweep.SweepError: ") and "re-import" in last, p.stderr
    assert 'the script must guard its entry point with `if __name__ == "__main__":`' in last
    assert "bootstrapping phase" not in p.stderr  # multiprocessing's own RuntimeError never comes
    assert not (tmp_path / "o").exists()  # stopped at the setup check, before anything ran

    # The same script guarded runs.
    body = "\n".join("    " + line if line else line for line in script.read_text().splitlines()[2:])
    script.write_text(f'from inasim.sweep import run_sweep\n\nif __name__ == "__main__":\n{body}\n')
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=child_env(), cwd=tmp_path,
                       timeout=60)
    assert p.returncode == 0 and p.stdout == "rows 2\n", p.stderr


# §7 progress for Python callers


def test_progress_callable_and_tqdm(tmp_path, capsys):
    sweep = {"scenario": str(DEFAULT), "set": SMALL, "grid": {"workload.iterations": [1, 2]}}
    out = tmp_path / "o"
    sw.run_sweep(sweep, out=out, jobs=2, progress=False)
    calls = []
    more = dict(sweep, grid={"workload.iterations": [1, 2, 3, 4]})
    df = sw.run_sweep(more, out=out, jobs=2, progress=calls.append)
    assert len(df.attrs["cached"]) == 2 and len(calls) == 4 - 2
    assert [c["done"] for c in calls] == [3, 4]
    last = calls[-1]
    assert {k: last[k] for k in ("done", "total", "ran", "cached", "failed", "eta_s")} == \
        {"done": 4, "total": 4, "ran": 2, "cached": 2, "failed": 0, "eta_s": 0.0}
    assert last["elapsed_s"] > 0 and calls[0]["eta_s"] >= 0

    capsys.readouterr()
    sw.run_sweep(more, out=out, jobs=2, progress="tqdm", resume=False)
    err = capsys.readouterr().err
    assert "sweep sweep" in err and "4/4" in err

    with pytest.raises(sw.SweepError, match=r'^progress: expected None, True, False, "tqdm" or a callable, got '):
        sw.run_sweep(sweep, out=out, progress="bar")
