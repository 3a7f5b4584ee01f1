"""`workload.schedule` (src/ina/iteration-schedule.h): a training step whose
gradient buckets are allreduced as they become ready during the backward
pass, overlapping the compute still to come (PyTorch DDP's buckets, in
order, on one stream). Checked on SwitchML, Canary, static trees, PANAMA and
on the host rings (UDP, NCCL, Gloo) (src/ina/rank-collectives.h), to the picosecond, from hosts.csv (each rank's
start and end of each bucket) and iterations.csv (each rank's step):

- a bucket starts (is launched) at a rank at max(iteration start + its
  ready time, the end of the bucket before it there), and the first bucket's
  allreduce ends before the backward pass does (the overlap the schedule
  exists for); a ring's bucket ends nowhere before its last rank launched it
  (a ring step needs both neighbours);
- the next iteration starts after_us after both the compute and the last
  bucket are done;
- step_s and exposed_comm_s are those times' differences, every aggregate
  exact;
- without a schedule, an iteration's tensors run back to back and
  compute_gap_us falls only between iterations (what docs/SCENARIO.md says);
- bad schedules exit 2 naming the key."""

import json
import subprocess

import pytest

from helpers import SOURCE_DIR, child_env
from test_pcap import BIN

SWITCHML = "scenarios/switchml/fig9-pool-small.json"
RING = "scenarios/default.json"
# Each protocol's run: scenario and settings (hashed data: values checked).
PROTOCOLS = {"switchml": (SWITCHML, []),
             "nccl": (RING, ["workload.protocol=nccl", "workload.dtype=float32"]),
             "gloo": (RING, ["workload.protocol=gloo", "workload.dtype=float32"]),
             "canary": ("scenarios/canary/small-64.json", []),
             "static_tree": ("scenarios/canary/small-64.json", ["workload.protocol=static_tree", "workload.canary=null"]),
             "panama": ("scenarios/panama/small-8.json", []),
             "ring": (RING, [])}
PS = 1e-12
# Four buckets ready during the backward pass, then one allreduce 100 us
# after the rank's compute ends (after: "compute") and one 30 us after that
# one ends at the rank (after: 4); both waits bind (the test checks).
SCHEDULE = {"compute_us": 400, "after_us": 10,
            "collectives": [{"bytes": 262144, "ready_us": 100}, {"bytes": 262144, "ready_us": 200},
                            {"bytes": 262144, "ready_us": 300}, {"bytes": 131072, "ready_us": 400},
                            {"bytes": 4096, "ready_us": 100, "after": "compute"},
                            {"bytes": 4096, "ready_us": 30, "after": 4}]}
PER_ITERATION = len(SCHEDULE["collectives"])


def run(tmp_path, sets, name="out", scenario=SWITCHML):
    out = tmp_path / name
    args = [BIN, "run", str(SOURCE_DIR / scenario), "--out", str(out)]
    for s in sets:
        args += ["--set", s]
    return subprocess.run(args, capture_output=True, text=True, env=child_env(), timeout=300), out


def ps(seconds):
    return round(seconds / PS)


@pytest.fixture(scope="module", params=sorted(PROTOCOLS))
def step(request, tmp_path_factory):
    import pandas as pd

    scenario, sets = PROTOCOLS[request.param]
    p, out = run(tmp_path_factory.mktemp("step"),
                 sets + ["workload.iterations=3", "workload.schedule=" + json.dumps(SCHEDULE)], scenario=scenario)
    assert p.returncode == 0, p.stderr
    return pd.read_csv(out / "hosts.csv"), pd.read_csv(out / "iterations.csv"), json.loads(
        (out / "results.json").read_text())


def test_buckets_start_when_ready_and_in_order(step):
    hosts, iters, result = step
    assert result["correct"] and result["workload"]["collectives_completed"] == 3 * PER_ITERATION
    assert result["workload"]["check"].startswith("values"), "hashed or uniform data: values checked"
    compute = ps(SCHEDULE["compute_us"] * 1e-6)
    for (rank, it), rows in hosts.groupby(["rank", "iteration"]):
        start = ps(iters[(iters["rank"] == rank) & (iters.iteration == it)].start_s.iloc[0])
        rows = rows.sort_values("collective")
        ends = []
        for c, row in enumerate(rows.itertuples()):
            spec = SCHEDULE["collectives"][c]
            after = spec.get("after", "start")
            base = start if after == "start" else start + compute if after == "compute" else ends[after]
            want = base + ps(spec["ready_us"] * 1e-6)
            if ends:
                want = max(want, ends[-1])
            assert ps(row.start_s) == want, (rank, it, c)
            ends.append(ps(row.end_s))
        # The dependency, not the bucket before, sets the last start (and the
        # one after the compute, where the buckets ended by then: not on
        # PANAMA's 10 Gb/s).
        assert ps(rows.start_s.iloc[5]) == ends[4] + ps(30e-6) > ends[4], (rank, it)
        assert ps(rows.start_s.iloc[4]) == max(start + compute + ps(100e-6), ends[3]), (rank, it)


def test_a_bucket_ends_nowhere_before_every_rank_launched_it(step):
    hosts, _, _ = step
    for _, rows in hosts.groupby(["iteration", "collective"]):
        assert ps(rows.end_s.min()) > ps(rows.start_s.max())


def test_communication_overlaps_the_backward_pass(step):
    hosts, iters, _ = step
    compute = ps(SCHEDULE["compute_us"] * 1e-6)
    first = hosts[hosts.collective % PER_ITERATION == 0]
    for row in first.itertuples():
        start = ps(iters[(iters["rank"] == row.rank) & (iters.iteration == row.iteration)].start_s.iloc[0])
        assert ps(row.end_s) < start + compute, "bucket 0 finished during the backward pass"


def test_next_iteration_after_compute_last_bucket_and_optimizer(step):
    hosts, iters, _ = step
    compute, after = ps(400e-6), ps(10e-6)
    for rank, rows in iters.groupby("rank"):
        rows = rows.sort_values("iteration")
        starts = [ps(x) for x in rows.start_s]
        # At 0, or once Gloo's TCP pairs are connected (before any collective, as Gloo's context).
        assert starts[0] == ps(iters.start_s.min()) and starts[0] < ps(5e-6)
        for it in range(1, len(starts)):
            last_end = ps(hosts[(hosts["rank"] == rank) & (hosts.iteration == it - 1)].end_s.max())
            assert starts[it] == max(starts[it - 1] + compute, last_end) + after
        for row in rows.itertuples():
            comm_end, compute_end = ps(row.comm_end_s), ps(row.compute_end_s)
            assert ps(row.step_s) == max(comm_end, compute_end) - ps(row.start_s)
            assert ps(row.exposed_comm_s) == max(0, comm_end - compute_end)
            assert row.collectives == PER_ITERATION


def test_without_a_schedule_tensors_run_back_to_back(tmp_path):
    import pandas as pd

    p, out = run(tmp_path, ["workload.iterations=2", "workload.compute_gap_us=50",
                            "workload.switchml.tensors=[65536,65536,65536]"])
    assert p.returncode == 0, p.stderr
    hosts = pd.read_csv(out / "hosts.csv")
    assert not (out / "iterations.csv").exists()
    for rank, rows in hosts.groupby("rank"):
        rows = rows.sort_values("collective")
        ends, starts = [ps(x) for x in rows.end_s], [ps(x) for x in rows.start_s]
        assert starts[1] == ends[0] and starts[2] == ends[1], "tensors of an iteration back to back"
        assert starts[3] == ends[2] + ps(50e-6), "compute_gap_us between iterations"
        assert starts[4] == ends[3] and starts[5] == ends[4]


@pytest.mark.parametrize("sets,key,words", [
    (["workload.protocol=p4sgd", "workload.switchml=null"], "workload.schedule", "switchml"),
    ([], "workload.schedule.collectives[1].ready_us", "after the iteration's compute"),
    (["workload.compute_gap_us=5"], "workload.compute_gap_us", "after_us"),
    (["workload.switchml.tensors=[1024]"], "workload.switchml.tensors", "not used with workload.schedule"),
])
def test_bad_schedules_exit_2(tmp_path, sets, key, words):
    schedule = {"compute_us": 100, "collectives": [{"bytes": 1024, "ready_us": 50}, {"bytes": 1024, "ready_us": 150}]}
    if "ready_us" not in key:
        schedule["collectives"][1]["ready_us"] = 90
    p, out = run(tmp_path, ["workload.schedule=" + json.dumps(schedule)] + sets)
    assert p.returncode == 2, p.stderr
    assert key in p.stderr and words in p.stderr, p.stderr
    assert not out.exists()


@pytest.mark.parametrize("collectives,key", [
    ([{"bytes": 1022}], "collectives[0].bytes"),
    ([{"bytes": 1024, "ready": 1}], "collectives[0].ready"),
    ([], "workload.schedule.collectives"),
    ([{"bytes": 1024, "ready_us": -1}], "collectives[0].ready_us"),
    ([{"bytes": 1024, "after": 0}], "collectives[0].after: must be \"start\", \"compute\" or the index of an "
                                    "earlier collective (there is none before the first), got 0"),
    ([{"bytes": 1024}, {"bytes": 1024, "after": 1}], "collectives[1].after: must be \"start\", \"compute\" or "
                                                     "the index of an earlier collective (0..0), got 1"),
    ([{"bytes": 1024}, {"bytes": 1024, "after": "end"}], "collectives[1].after"),
    ([{"bytes": 1024}, {"bytes": 1024, "after": -1}], "collectives[1].after"),
])
def test_bad_collectives_exit_2(tmp_path, collectives, key):
    p, out = run(tmp_path, ["workload.schedule=" + json.dumps({"compute_us": 100, "collectives": collectives})])
    assert p.returncode == 2, p.stderr
    assert key in p.stderr, p.stderr
    assert not out.exists()


def test_panama_schedule_runs_one_job_only(tmp_path):
    schedule = {"compute_us": 100, "collectives": [{"bytes": 1024, "ready_us": 50}]}
    p, out = run(tmp_path, ["workload.schedule=" + json.dumps(schedule),
                            'workload.panama.jobs=[{"hosts": {"count": 4}, "bytes": 4096}]'],
                 scenario="scenarios/panama/small-8.json")
    assert p.returncode == 2, p.stderr
    assert "workload.panama.jobs" in p.stderr and "workload.schedule" in p.stderr, p.stderr
    assert not out.exists()


def test_a_collective_trace_file_is_the_same_schedule(tmp_path):
    """workload.schedule.file: a CSV (or JSON) collective trace runs exactly
    the schedule written inline."""
    csv = tmp_path / "buckets.csv"
    csv.write_text("# DDP buckets\nready_us,bytes,after\n" +
                   "".join(f"{c['ready_us']},{c['bytes']},{c.get('after', 'start')}\n" for c in SCHEDULE["collectives"])
                   + "\n")
    js = tmp_path / "buckets.json"
    js.write_text(json.dumps({"collectives": SCHEDULE["collectives"]}))
    inline = {k: v for k, v in SCHEDULE.items()}
    outs = {}
    for name, sched in [("inline", inline),
                        ("csv", {"compute_us": 400, "after_us": 10, "file": str(csv)}),
                        ("json", {"compute_us": 400, "after_us": 10, "file": str(js)})]:
        p, out = run(tmp_path, ["workload.iterations=2", "workload.schedule=" + json.dumps(sched)], name=name)
        assert p.returncode == 0, p.stderr
        outs[name] = (out / "hosts.csv").read_text(), (out / "iterations.csv").read_text()
    assert outs["csv"] == outs["inline"] and outs["json"] == outs["inline"]


@pytest.mark.parametrize("text,words", [
    ("bytes,ready_us\n1024,10\n1022,20\n", ":3: bytes: is required: a multiple of 4"),
    ("bytes,ready_us\n1024,ten\n", ":2: ready_us: \"ten\" is not a number"),
    ("bytes,when\n1024,1\n", ":1: column \"when\": unknown"),
    ("bytes,ready_us\n1024\n", ":2: 1 fields, the header has 2"),
    ("ready_us\n5\n", ":1: the header must name the column bytes once"),
    ("# nothing\n", ":1: no collectives"),
    ("bytes,ready_us\n1024,-1\n", ":2: ready_us: must be a number of microseconds"),
    ("bytes,after\n1024,start\n1024,1\n", ":3: after: must be \"start\", \"compute\" or the index of an earlier "
                                             "collective (0..0), got 1"),
    ("bytes,after\n1024,later\n", ":2: after: must be"),
])
def test_bad_trace_files_name_the_line_and_field(tmp_path, text, words):
    f = tmp_path / "t.csv"
    f.write_text(text)
    p, out = run(tmp_path, ["workload.schedule=" + json.dumps({"compute_us": 100, "file": str(f)})])
    assert p.returncode == 2, p.stderr
    assert "workload.schedule.file" in p.stderr and str(f) + words in p.stderr, p.stderr
    assert not out.exists()


@pytest.mark.parametrize("extra,key,words", [
    ({"collectives": [{"bytes": 1024}]}, "workload.schedule.collectives", "not both"),
    ({}, "workload.schedule.file", "cannot open"),
])
def test_bad_trace_file_keys_exit_2(tmp_path, extra, key, words):
    sched = {"compute_us": 100, "file": str(tmp_path / "missing.csv"), **extra}
    p, out = run(tmp_path, ["workload.schedule=" + json.dumps(sched)])
    assert p.returncode == 2 and key in p.stderr and words in p.stderr, p.stderr


def test_a_device_is_refused_as_a_trace_file(tmp_path):
    p, _ = run(tmp_path, ["workload.schedule=" + json.dumps({"compute_us": 100, "file": "/dev/zero"})])
    assert p.returncode == 2 and "workload.schedule.file" in p.stderr and "not a regular file" in p.stderr, p.stderr


def test_results_step_summary_is_iterations_csv(step):
    """results.json workload.step (what `inasim compare` tabulates) is
    iterations.csv's mean and largest step and exposed communication."""
    _, iters, result = step
    s = result["workload"]["step"]
    complete = iters[iters.collectives == len(SCHEDULE["collectives"])]
    assert s["rank_iterations"] == len(complete) == len(iters)
    assert s["mean_s"] == pytest.approx(complete.step_s.mean(), rel=1e-9)
    assert s["max_s"] == pytest.approx(complete.step_s.max(), rel=1e-9)
    assert s["exposed_comm_mean_s"] == pytest.approx(complete.exposed_comm_s.mean(), rel=1e-9, abs=1e-15)
    from inasim import compare_report

    row = compare_report.row_from_results("x", result)
    assert row["step_s"] == s["mean_s"] and row["exposed_comm_s"] == s["exposed_comm_mean_s"]


@pytest.mark.parametrize("protocol", ["switchml", "nccl"])
def test_a_straggler_computes_slower_and_holds_everyone_back(tmp_path, protocol):
    """stragglers: rank 2 computes x 1.5 (and fills its buckets x 1.5 later);
    iterations.csv shows its compute, and every rank's step waits for it (an
    allreduce needs every rank's bucket)."""
    import pandas as pd

    scenario, sets = PROTOCOLS[protocol]
    sched = {**SCHEDULE, "stragglers": {"ranks": [2], "factor": 1.5}}
    p, out = run(tmp_path, sets + ["workload.iterations=2", "workload.schedule=" + json.dumps(sched)],
                 scenario=scenario)
    assert p.returncode == 0, p.stderr
    iters = pd.read_csv(out / "iterations.csv")
    compute = ps(SCHEDULE["compute_us"] * 1e-6)
    for row in iters.itertuples():
        want = compute * 3 // 2 if row.rank == 2 else compute
        assert ps(row.compute_end_s) - ps(row.start_s) == want, row
    # The last bucket (ready at the end of compute) cannot start before the straggler's is ready.
    hosts = pd.read_csv(out / "hosts.csv")
    first_it = iters[iters.iteration == 0]
    last = hosts[(hosts.iteration == 0) & (hosts.collective == 3)]
    assert ps(last.end_s.min()) > ps(first_it.start_s.max()) + compute * 3 // 2


def test_jitter_changes_with_the_seed_and_not_between_runs(tmp_path):
    import pandas as pd

    sched = {**SCHEDULE, "jitter_cv": 0.1}
    got = {}
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        p, out = run(tmp_path, ["workload.iterations=2", f"seed={seed}", "workload.schedule=" + json.dumps(sched)],
                     name=name)
        assert p.returncode == 0, p.stderr
        got[name] = pd.read_csv(out / "iterations.csv")
    assert got["a"].equals(got["b"])
    computes = got["a"].compute_end_s - got["a"].start_s
    assert computes.nunique() == len(computes), "each rank and iteration draws its own compute"
    assert not got["a"].compute_end_s.equals(got["c"].compute_end_s)


@pytest.mark.parametrize("stragglers,key,words", [
    ({"ranks": [9], "factor": 2}, "workload.schedule.stragglers.ranks[0]", "the job has 4 ranks"),
    ({"ranks": [1], "factor": 0.5}, "workload.schedule.stragglers.factor", "from 1 to 1000"),
    ({"ranks": [], "factor": 2}, "workload.schedule.stragglers.ranks", "non-empty"),
    ({"ranks": [1], "factor": 2, "slow": 1}, "workload.schedule.stragglers.slow", "unknown key"),
])
def test_bad_stragglers_exit_2(tmp_path, stragglers, key, words):
    p, out = run(tmp_path, ["workload.schedule=" + json.dumps({**SCHEDULE, "stragglers": stragglers})])
    assert p.returncode == 2 and key in p.stderr and words in p.stderr, p.stderr
    assert not out.exists()


def test_compare_relates_training_steps_only_with_a_schedule():
    """inasim compare's "Relative to" table gains the step and exposed
    communication ratios (paired per repetition) when the runs have a
    schedule, and stays as it was without one."""
    from inasim import compare_report as cr

    def row(p, rep, time_s, step=float("nan"), exposed=float("nan")):
        return {"protocol": p, "repetition": rep, "time_s": time_s, "bg_fct_p99_s": float("nan"), "step_s": step,
                "exposed_comm_s": exposed}

    plain = [row("ring", 0, 2.0), row("switchml", 0, 1.0)]
    title, header, body, _ = cr._paired_table(plain, ["ring", "switchml"])
    assert header == ["protocol", "time / ring's", "background FCT p99 / ring's"] and body == [["switchml", "0.500", "—"]]
    steps = [row("ring", 0, 2.0, 10.0, 4.0), row("switchml", 0, 1.0, 8.0, 1.0),
             row("ring", 1, 2.0, 10.0, 4.0), row("switchml", 1, 1.0, 9.0, 3.0)]
    _, header, body, _ = cr._paired_table(steps, ["ring", "switchml"])
    assert header[3:] == ["training step / ring's", "exposed communication / ring's"]
    assert body[0][3].startswith("0.850 ± ") and body[0][4].startswith("0.500 ± ")


RETRANSMITTED = {"ring": lambda r, rows: rows.retransmissions.sum(),
                 "nccl": lambda r, rows: r["workload"]["nccl"]["packets_retransmitted"],
                 "nccl-tcp": lambda r, rows: r["workload"]["nccl"]["tcp_fast_recoveries"]
                 + r["workload"]["nccl"]["tcp_timeouts"]}


@pytest.mark.parametrize("ring,sets", [
    ("ring", []),
    ("nccl", ["workload.protocol=nccl"]),
    ("nccl-tcp", ["workload.protocol=nccl", "workload.nccl.transport=tcp"]),
])
def test_rings_run_reduce_scatter_and_all_gather(tmp_path, ring, sets):
    """`kind` on the UDP ring and on NCCL (RoCE and TCP): a reduce-scatter
    (each rank ends with one segment's exact sum, E checks in all) and an
    all-gather (each rank ends with every other rank's segment, its owner's
    values, (n-1) E checks), each about half an allreduce's time on the same
    ring; exact under loss too (recovered, not avoided)."""
    import pandas as pd

    n, size = 8, 1 << 20
    sched = {"compute_us": 0, "collectives": [{"bytes": size}, {"bytes": size, "kind": "reduce_scatter"},
                                              {"bytes": size, "kind": "all_gather"}]}
    for loss in (0, 0.001):
        p, out = run(tmp_path, sets + ["workload.iterations=2", f"faults.loss_rate={loss}",
                                       "workload.schedule=" + json.dumps(sched)], name=f"loss{loss}", scenario=RING)
        assert p.returncode == 0, p.stderr
        result = json.loads((out / "results.json").read_text())
        assert result["correct"], p.stdout
        rows = pd.read_csv(out / "collectives.csv")
        e = size // 4
        assert list(rows.elements_checked) == [n * e, e, (n - 1) * e] * 2
        assert (rows.mismatches == 0).all()
        if loss:
            assert RETRANSMITTED[ring](result, rows) > 0, "the loss was recovered, not avoided"
            continue
        ar, rs, ag = rows.duration_s[:3]
        assert 0.4 < rs / ar < 0.6 and 0.4 < ag / ar < 0.6, (ar, rs, ag)
        if ring == "ring":
            assert (rows.bound_ratio < 1).all()


BROADCASTERS = {"roce": (["workload.protocol=nccl"], "packets_retransmitted"),
                "tcp": (["workload.protocol=nccl", "workload.nccl.transport=tcp"], "tcp_fast_recoveries"),
                "ring": ([], None)}


@pytest.mark.parametrize("transport", ["roce", "tcp", "ring"])
def test_rings_broadcast_from_any_root(tmp_path, transport):
    """NCCL's ring broadcast (broadcast.h: a chain from the root, chunks of an
    eighth of the buffer) and the UDP ring's (the same chain, packet by
    packet): every rank but the root ends with the root's tensor, (n-1) E
    checks, for roots 0 and 5; exact under loss; a 64 MiB broadcast runs
    within 1.3x of S / B (the pipeline fills once)."""
    import pandas as pd

    n, size = 8, 1 << 20
    sets, key = BROADCASTERS[transport]
    sched = {"compute_us": 0, "collectives": [{"bytes": size, "kind": "broadcast"},
                                              {"bytes": size, "kind": "broadcast", "root": 5}, {"bytes": size}]}
    for loss in (0, 0.001):
        p, out = run(tmp_path, sets + [f"faults.loss_rate={loss}", "workload.schedule=" + json.dumps(sched)],
                     name=f"loss{loss}", scenario=RING)
        assert p.returncode == 0, p.stderr
        result = json.loads((out / "results.json").read_text())
        assert result["correct"], p.stdout
        rows = pd.read_csv(out / "collectives.csv")
        assert list(rows.elements_checked) == [(n - 1) * size // 4] * 2 + [n * size // 4]
        assert (rows.mismatches == 0).all()
        if loss:
            resent = result["workload"]["nccl"][key] if key else rows.retransmissions.sum()
            assert resent > 0, "the loss was recovered, not avoided"
    big = {"compute_us": 0, "collectives": [{"bytes": 64 << 20, "kind": "broadcast", "root": 3}]}
    p, out = run(tmp_path, sets + ["workload.schedule=" + json.dumps(big)], name="big", scenario=RING)
    assert p.returncode == 0, p.stderr
    own = json.loads((out / "results.json").read_text())["workload"]["nccl" if key else "ring"]
    duration = pd.read_csv(out / "collectives.csv").duration_s[0]
    assert own["analytic_bound_formula"] == "S / B"
    if key:
        assert own["chunk_bytes"] == own["slice_bytes"]
    assert 1 < duration / own["analytic_bound_s"] < 1.3, duration


def test_gloo_broadcast_is_the_binomial_tree_over_its_mesh(tmp_path):
    """gloo/broadcast.cc on 8 ranks from root 3: vranks v = r - 3 mod 8; the
    root sends the whole tensor to vranks 1, 2, 4 (ranks 4, 5, 7), vrank 1
    to 3 and 5 (ranks 6, 0), vrank 2 to 6 (rank 1), vrank 3 to 7 (rank 2),
    one message per edge over its own TCP pair (ranks 3-5, 4-0, 5-1 and 6-2
    are no ring neighbours). So each host's uplink carries its children's
    count times the tensor (plus TCP/IP and 48-byte preambles), every rank
    but the root checks the root's tensor, and rank 2, three hops down,
    ends last. Then root 0 and an allreduce in the same schedule."""
    import pandas as pd

    size = 1 << 20
    sched = {"compute_us": 0, "collectives": [{"bytes": size, "kind": "broadcast", "root": 3}]}
    p, out = run(tmp_path, ["workload.protocol=gloo", "workload.schedule=" + json.dumps(sched)], scenario=RING)
    assert p.returncode == 0, p.stderr
    result = json.loads((out / "results.json").read_text())
    assert result["correct"] and result["workload"]["gloo"]["analytic_bound_formula"] == "ceil(log2 n) * S / B"
    assert list(pd.read_csv(out / "collectives.csv").elements_checked) == [7 * size // 4]
    links = pd.read_csv(out / "links.csv")
    up = {int(r.a[1:]): r.tx_bytes for r in links.itertuples() if r.direction == "a->b"}
    children = {3: 3, 4: 2, 5: 1, 6: 1, 0: 0, 1: 0, 2: 0, 7: 0}
    for rank, c in children.items():
        assert c * size <= up[rank] <= c * size * 1.06 + 0.04 * size, (rank, up[rank])  # + ACKs of what it got
    ends = pd.read_csv(out / "hosts.csv").groupby("rank").end_s.max()
    assert ends.idxmax() == 2 and ends[2] > ends[6] > ends[4]
    mixed = {"compute_us": 0, "collectives": [{"bytes": size, "kind": "broadcast"}, {"bytes": size},
                                              {"bytes": size, "kind": "broadcast", "root": 5}]}
    p, out = run(tmp_path, ["workload.protocol=gloo", "faults.loss_rate=0.001", "workload.schedule=" + json.dumps(mixed)],
                 name="mixed", scenario=RING)
    assert p.returncode == 0, p.stderr
    assert json.loads((out / "results.json").read_text())["correct"]
    assert list(pd.read_csv(out / "collectives.csv").elements_checked) == [7 * size // 4, 8 * size // 4, 7 * size // 4]


@pytest.mark.parametrize("collective,words", [
    ({"bytes": 4096, "kind": "broadcast", "root": 8}, "collectives[1].root: 8, but the smallest group it runs in has 8"),
    ({"bytes": 4096, "root": 1}, 'collectives[1].root: is only for kind "broadcast"'),
    ({"bytes": 4096, "kind": "broadcast", "root": -1}, "collectives[1].root: must be a rank"),
])
def test_a_bad_root_exits_2(tmp_path, collective, words):
    sched = {"compute_us": 0, "collectives": [{"bytes": 4096}, collective]}
    sets = ["workload.protocol=nccl", "workload.schedule=" + json.dumps(sched)]
    p, out = run(tmp_path, sets, scenario=RING)
    assert p.returncode == 2 and words in p.stderr, p.stderr
    assert not out.exists()
    args = [BIN, "validate", str(SOURCE_DIR / RING)]
    for s in sets:
        args += ["--set", s]
    v = subprocess.run(args, capture_output=True, text=True, env=child_env(), timeout=60)
    assert v.returncode == 2 and words in v.stderr, v.stderr


@pytest.mark.parametrize("loss", [0, 0.001])
def test_gloo_all_gathers_on_its_own_ring(tmp_path, loss):
    """Gloo's all-gather (gloo/allgather.cc: its own ring towards rank + 1,
    each rank's part in two halves, two transfers in flight): every rank ends
    with every other rank's part, its owner's values, (n-1) E checks, in
    about half an allreduce's time; exact under loss (TCP recovers it)."""
    import pandas as pd

    n, size = 8, 1 << 22
    sched = {"compute_us": 0, "collectives": [{"bytes": size}, {"bytes": size, "kind": "all_gather"}]}
    p, out = run(tmp_path, ["workload.protocol=gloo", f"faults.loss_rate={loss}", "workload.schedule=" + json.dumps(sched)],
                 scenario=RING)
    assert p.returncode == 0, p.stderr
    result = json.loads((out / "results.json").read_text())
    assert result["correct"]
    rows = pd.read_csv(out / "collectives.csv")
    assert list(rows.elements_checked) == [n * size // 4, (n - 1) * size // 4]
    if loss:
        assert result["workload"]["gloo"]["tcp_fast_recoveries"] + result["workload"]["gloo"]["tcp_timeouts"] > 0
    else:
        ar, ag = rows.duration_s
        assert 0.4 < ag / ar < 0.6, (ar, ag)


def test_gloo_reduce_scatters_as_pytorch_does_with_an_allreduce(tmp_path):
    """PyTorch's Gloo has no reduce-scatter: reduce_scatter_tensor is
    allreduce(input).chunk(world_size)[rank] (pytorch/pytorch#118911). So a
    Gloo reduce-scatter costs an allreduce of the whole tensor (every rank
    checked on every element) where NCCL's costs about half of one."""
    import pandas as pd

    n, size = 8, 1 << 20
    sched = {"compute_us": 0, "collectives": [{"bytes": size}, {"bytes": size, "kind": "reduce_scatter"}]}
    p, out = run(tmp_path, ["workload.protocol=gloo", "workload.schedule=" + json.dumps(sched)], scenario=RING)
    assert p.returncode == 0, p.stderr
    rows = pd.read_csv(out / "collectives.csv")
    assert json.loads((out / "results.json").read_text())["correct"]
    assert list(rows.elements_checked) == [n * size // 4] * 2
    ar, rs = rows.duration_s
    assert 0.9 < rs / ar < 1.1, (ar, rs)


def test_nccl_refuses_a_segment_that_does_not_split_per_rank(tmp_path):
    """ncclReduceScatter / ncclAllGather take a count per rank: 8 ranks and
    1,001 elements cannot be cut into 8 equal segments."""
    sched = {"compute_us": 0, "collectives": [{"bytes": 4096}, {"bytes": 4004, "kind": "all_gather"}]}
    p, out = run(tmp_path, ["workload.protocol=nccl", "workload.schedule=" + json.dumps(sched)], scenario=RING)
    assert p.returncode == 2, p.stderr
    assert "workload.schedule.collectives[1].bytes" in p.stderr and "8 equal segments" in p.stderr, p.stderr
    assert not out.exists()
    v = subprocess.run([BIN, "validate", str(SOURCE_DIR / RING), "--set", "workload.protocol=nccl",
                        "--set", "workload.schedule=" + json.dumps(sched)], capture_output=True, text=True,
                       env=child_env(), timeout=60)
    assert v.returncode == 2 and "collectives[1].bytes" in v.stderr, v.stderr


@pytest.mark.parametrize("scenario,sets,kind,key,words", [
    (SWITCHML, [], "all_gather", "collectives[1].kind", 'protocol "switchml" does not run "all_gather" '
                                                         '(the protocols that do: "gloo", "nccl" and "ring")'),
    (RING, [], "gather", "collectives[1].kind",
     'must be "allreduce", "reduce_scatter", "all_gather" or "broadcast", got "gather"'),
    (SWITCHML, [], "broadcast", "collectives[1].kind",
     'does not run "broadcast" (the protocols that do: "gloo", "nccl" and "ring")'),
])
def test_a_kind_the_protocol_does_not_run_exits_2(tmp_path, scenario, sets, kind, key, words):
    sched = {"compute_us": 0, "collectives": [{"bytes": 4096}, {"bytes": 4096, "kind": kind}]}
    p, out = run(tmp_path, sets + ["workload.schedule=" + json.dumps(sched)], scenario=scenario)
    assert p.returncode == 2 and key in p.stderr and words in p.stderr, p.stderr
    assert not out.exists()


def test_a_trace_file_gives_kinds(tmp_path):
    """The CSV trace's `kind` column runs what the inline `kind` does."""
    csv = tmp_path / "t.csv"
    csv.write_text("bytes,kind\n65536,allreduce\n65536,reduce_scatter\n65536,all_gather\n")
    inline = {"compute_us": 0, "collectives": [{"bytes": 65536}, {"bytes": 65536, "kind": "reduce_scatter"},
                                               {"bytes": 65536, "kind": "all_gather"}]}
    texts = []
    for name, sched in [("csv", {"compute_us": 0, "file": str(csv)}), ("inline", inline)]:
        p, out = run(tmp_path, ["workload.schedule=" + json.dumps(sched)], name=name, scenario=RING)
        assert p.returncode == 0, p.stderr
        texts.append((out / "collectives.csv").read_text())
    assert texts[0] == texts[1]


TP_DP = {"tp": [[0, 1, 2, 3], [4, 5, 6, 7]], "dp": [[0, 4], [1, 5], [2, 6], [3, 7]]}


@pytest.mark.parametrize("sets", [[], ["workload.protocol=nccl"],
                                  ["workload.protocol=nccl", "workload.nccl.transport=tcp"],
                                  ["workload.protocol=gloo"]])
def test_communicators_run_each_group_apart_with_its_own_sum(tmp_path, sets):
    """Communicators on the UDP ring, on NCCL over RoCE and TCP (each
    communicator its own rings, as ncclCommSplit makes) and on Gloo (each
    group its own context, as ProcessGroupGloo per new_group) (8 ranks; tensor-parallel groups of 4,
    data-parallel pairs across them). Ranks 4-7 compute 3x slower, so TP
    group 0's first bucket is ready at 50 us and group 1's at 150 us: group
    0 runs both its TP allreduces before group 1 begins its first, and a DP
    pair ends only after its slower member launched it. Each group's sum is
    over its own ranks (hashed data, different per group), checked exact:
    m x E checks per group of m for an allreduce, E per group for a
    reduce-scatter (Gloo's is an allreduce: m x E)."""
    import pandas as pd

    sched = {"compute_us": 200, "communicators": TP_DP, "stragglers": {"ranks": [4, 5, 6, 7], "factor": 3},
             "collectives": [{"bytes": 262144, "ready_us": 50, "communicator": "tp"},
                             {"bytes": 262144, "ready_us": 50, "communicator": "tp"},
                             {"bytes": 262144, "ready_us": 50, "communicator": "dp"},
                             {"bytes": 262144, "ready_us": 50, "communicator": "tp", "kind": "reduce_scatter"}]}
    p, out = run(tmp_path, sets + ["workload.schedule=" + json.dumps(sched)], scenario=RING)
    assert p.returncode == 0, p.stderr
    assert json.loads((out / "results.json").read_text())["correct"]
    e = 262144 // 4
    rs = 8 * e if "workload.protocol=gloo" in sets else 2 * e  # Gloo's reduce-scatter: an allreduce, all checked
    assert list(pd.read_csv(out / "collectives.csv").elements_checked) == [8 * e, 8 * e, 8 * e, rs]
    h = pd.read_csv(out / "hosts.csv")
    start = {(r.rank, r.collective): ps(r.start_s) for r in h.itertuples()}
    end = {(r.rank, r.collective): ps(r.end_s) for r in h.itertuples()}
    t0 = ps(pd.read_csv(out / "iterations.csv").start_s.min())  # NCCL over TCP connects first
    fast, slow = [0, 1, 2, 3], [4, 5, 6, 7]
    assert all(start[r, 0] == t0 + ps(50e-6) for r in fast) and all(start[r, 0] == t0 + ps(150e-6) for r in slow)
    # Group 0's second allreduce is over before group 1 began its first.
    assert max(end[r, 1] for r in fast) < t0 + ps(150e-6)
    # Each rank launches its next collective when it ended its last.
    for r in range(8):
        ready = t0 + ps(50e-6) * (3 if r in slow else 1)
        for c in (1, 2, 3):
            assert start[r, c] == max(end[r, c - 1], ready), (r, c)
    # A DP pair (r, r + 4) runs once both launched: it ends after the slow member's launch.
    for r in fast:
        assert end[r, 2] > start[r + 4, 2] > start[r, 2]


@pytest.mark.parametrize("transport,key", [("roce", "packets_retransmitted"), ("tcp", "tcp_fast_recoveries")])
def test_nccl_mixes_communicators_kinds_and_the_world_under_loss(tmp_path, transport, key):
    """NCCL with each communicator's own rings: TP allreduce, DP allreduce,
    TP all-gather, DP broadcast from place 1, a world allreduce, 3
    iterations at 0.1 % loss. A rank may begin its next collective on
    another communicator's rings while its last one still owes slices on
    the old ones (they are sent as the old ring grants them); every group's
    result is exact."""
    import pandas as pd

    sched = {"compute_us": 0, "communicators": TP_DP,
             "collectives": [{"bytes": 1 << 20, "communicator": "tp"}, {"bytes": 1 << 20, "communicator": "dp"},
                             {"bytes": 1 << 20, "communicator": "tp", "kind": "all_gather"},
                             {"bytes": 1 << 20, "communicator": "dp", "kind": "broadcast", "root": 1},
                             {"bytes": 1 << 20}]}
    p, out = run(tmp_path, ["workload.protocol=nccl", f"workload.nccl.transport={transport}", "faults.loss_rate=0.001",
                            "workload.iterations=3", "workload.schedule=" + json.dumps(sched)], scenario=RING)
    assert p.returncode == 0, p.stderr
    result = json.loads((out / "results.json").read_text())
    assert result["correct"] and result["workload"]["nccl"][key] > 0
    e = (1 << 20) // 4
    # tp: 2 groups of 4 (allreduce 4E each, all-gather 3E each); dp: 4 pairs (2E, E); world 8E.
    assert list(pd.read_csv(out / "collectives.csv").elements_checked) == [8 * e, 8 * e, 6 * e, 4 * e, 8 * e] * 3


def test_gloo_mixes_communicators_kinds_and_the_world_under_loss(tmp_path):
    """Gloo with a context per group (its own pairs, listening on port + the
    set's index): TP allreduce, DP allreduce, TP all-gather, DP broadcast
    from place 1 (a pair: the ring's own connection), a world allreduce, 2
    iterations at 0.1 % loss; every group's result is exact and TCP
    recovered the loss."""
    import pandas as pd

    sched = {"compute_us": 0, "communicators": TP_DP,
             "collectives": [{"bytes": 1 << 20, "communicator": "tp"}, {"bytes": 1 << 20, "communicator": "dp"},
                             {"bytes": 1 << 20, "communicator": "tp", "kind": "all_gather"},
                             {"bytes": 1 << 20, "communicator": "dp", "kind": "broadcast", "root": 1},
                             {"bytes": 1 << 20, "communicator": "tp", "kind": "broadcast", "root": 2},
                             {"bytes": 1 << 20}]}
    p, out = run(tmp_path, ["workload.protocol=gloo", "faults.loss_rate=0.001", "workload.iterations=2",
                            "workload.schedule=" + json.dumps(sched)], scenario=RING)
    assert p.returncode == 0, p.stderr
    result = json.loads((out / "results.json").read_text())
    gloo = result["workload"]["gloo"]
    assert result["correct"] and gloo["tcp_fast_recoveries"] + gloo["tcp_timeouts"] > 0
    e = (1 << 20) // 4
    # tp: 2 groups of 4 (allreduce 4E, all-gather 3E, broadcast 3E each); dp: 4 pairs (2E, broadcast E); world 8E.
    assert list(pd.read_csv(out / "collectives.csv").elements_checked) == [8 * e, 8 * e, 6 * e, 4 * e, 6 * e, 8 * e] * 2


@pytest.mark.parametrize("sets,comms,collective,key,words", [
    (["workload.protocol=switchml"], TP_DP, {"communicator": "tp"}, "workload.schedule.communicators",
     'protocol "switchml" runs every collective over all its ranks (the protocols with communicators: "gloo", '
     '"nccl" and "ring")'),
    (["workload.protocol=gloo"], {"tp": [[0, 1, 2], [3, 4, 5, 6, 7]]}, {"communicator": "tp", "kind": "all_gather"},
     "workload.schedule.collectives[0]", "a Gloo all-gather needs a multiple of the ranks' count (a group of 3)"),
    ([], {"tp": [[0, 1, 2, 3], [4, 5, 6]]}, {"communicator": "tp"}, "workload.schedule.communicators.tp",
     "rank 7 is in 0 groups"),
    ([], {"tp": [[0, 1, 2, 3], [3, 4, 5, 6, 7]]}, {"communicator": "tp"}, "workload.schedule.communicators.tp",
     "rank 3 is in 2 groups"),
    ([], {"tp": [[0, 1, 2, 3], [4, 5, 6, 7, 8]]}, {"communicator": "tp"}, "workload.schedule.communicators.tp",
     "rank 8, but the job has 8 ranks (0..7)"),
    ([], {"tp": [[0], [1, 2, 3, 4, 5, 6, 7]]}, {"communicator": "tp"}, "workload.schedule.communicators.tp[0]",
     "at least 2 ranks"),
    ([], {"world": [[0, 1, 2, 3], [4, 5, 6, 7]]}, {}, "workload.schedule.communicators.world", "not \"world\""),
    ([], TP_DP, {"communicator": "pp"}, "workload.schedule.collectives[0].communicator",
     'must be a communicator ("world", "dp", "tp"), got "pp"'),
    (["workload.protocol=nccl", "workload.nccl.channels=32"], TP_DP, {"communicator": "tp"},
     "workload.schedule.communicators", "make 96 connections per rank, more than 64"),
])
def test_bad_communicators_exit_2(tmp_path, sets, comms, collective, key, words):
    sched = {"compute_us": 0, "communicators": comms, "collectives": [{"bytes": 4096, **collective}]}
    p, out = run(tmp_path, sets + ["workload.schedule=" + json.dumps(sched)], scenario=RING)
    assert p.returncode == 2 and key in p.stderr and words in p.stderr, p.stderr
    assert not out.exists()
