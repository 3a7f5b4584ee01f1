"""SwitchML figure scripts end to end: analysis/fig_switchml_{ate,loss,pool,hierarchy,fig4}.py
--small (exit status, PNG, tidy CSV with the expected series, the physics each
figure is about) and exit 1 when a run is not correct.

Run by hand (about 30 s) with PYTHONPATH=python:build/python:

    PYTHONPATH=python:build/python /usr/bin/python3 -m pytest -q tests/python/test_switchml_figures.py
"""

import math

import pytest

from helpers import (SOURCE_DIR, small_run_tests, import_inasim, load_script, read_csv, small_runs,
                     spoil_last_run)

inasim = import_inasim()

ANALYSIS = SOURCE_DIR / "analysis"
SCRIPTS = ("ate", "loss", "pool", "hierarchy", "fig4")
FRAMING = 76  # bytes around 4k payload bytes: SwitchML 10 + UDP 8 + IPv4 20 + Ethernet 14 + wire 24


def script(name):
    return ANALYSIS / f"fig_switchml_{name}.py"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Each script's --small run: name -> (out dir, CompletedProcess)."""
    return small_runs(tmp_path_factory, {name: script(name) for name in SCRIPTS}, jobs=1)


# Each --small run exits 0 with its PNG and CSV; its paper claims (scenarios/*/paper-claims.json)
# that survive --small reach their reduced verdicts; its CSV is the committed one.
test_small_run_exits_zero_and_writes_png_and_csv, test_paper_claims_reach_their_reduced_verdicts, \
    test_committed_small_results_are_current = \
    small_run_tests("fig_switchml_", SCRIPTS)


SERIES = ("SwitchML k=64", "SwitchML k=256", "SwitchML RDMA k=256", "ring allreduce", "Gloo (TCP)", "NCCL (RoCE)",
          "NCCL (TCP)", "PS dedicated",
          "PS co-located")


def test_ate(runs):
    out, p = runs["ate"]
    assert "k=32: 62.7 %" in p.stdout and "k=64: 77.1 %" in p.stdout and "k=256: 93.1 %" in p.stdout
    assert len([l for l in p.stdout.splitlines() if "ATE/bound" in l]) == 2 * len(SERIES)  # workers {4, 8}
    rows = read_csv(out / "fig_switchml_ate.csv")
    assert {r["panel"] for r in rows} == {"a"}  # --small: 100 Gb/s only
    sim = {(r["series"], int(r["workers"])): r for r in rows if r["kind"] == "sim"}
    assert set(sim) == {(s, n) for s in SERIES for n in (4, 8)}
    bounds = {r["series"] for r in rows if r["kind"] == "bound"}
    assert bounds == {"goodput bound k=64", "goodput bound k=256", "ring bound"}
    for r in rows:
        if r["series"].startswith("goodput bound k="):
            k = int(r["k"])
            assert float(r["bound_ate_per_s"]) == pytest.approx(100e9 / 8 / (4 * k + FRAMING) * k, rel=1e-12)
    ate = {key: float(r["ate_per_s"]) for key, r in sim.items()}
    ratio = {key: float(r["ratio"]) for key, r in sim.items()}
    for n in (4, 8):
        # SwitchML above every host ring (Fig. 3: "outperform ... NCCL, even when it uses RDMA").
        assert ate[("SwitchML k=256", n)] > ate[("SwitchML k=64", n)] > ate[("ring allreduce", n)], n
        for ring in ("ring allreduce", "Gloo (TCP)", "NCCL (RoCE)", "NCCL (TCP)"):
            assert ate[("SwitchML k=256", n)] > ate[(ring, n)], (ring, n)
            assert 0.8 < ratio[(ring, n)] <= 1.0, (ring, n)
        # The DPDK workers fall short of the line at 100 Gb/s (4 MB: their first window and drains weigh more).
        assert 0.7 < ratio[("SwitchML k=256", n)] < 0.95, n
        assert float(sim[("SwitchML k=256", n)]["y"]) == pytest.approx(ate[("SwitchML k=256", n)] / 1e9, rel=1e-9)
        # RDMA: the NIC segments 16-packet messages at line rate, one core posts them (Fig. 3: above
        # DPDK, near the goodput limit; 4 MB: the first window and the last RTT cost ~3 %). Its
        # bound is its own framing: BTH 12 + ICRC 4 per packet, RETH 16 + immediate 4 per message.
        rd = sim[("SwitchML RDMA k=256", n)]
        assert float(rd["bound_ate_per_s"]) == pytest.approx(
            100e9 / 8 / (16 * (1024 + FRAMING - 10 + 16) + 20) * 16 * 256, rel=1e-12)
        assert 0.95 < ratio[("SwitchML RDMA k=256", n)] <= 1.0, n
        assert ate[("SwitchML RDMA k=256", n)] > ate[("SwitchML k=256", n)], n
        # The dedicated PS falls short of SwitchML (it pays the packet cost the switch does not).
        assert ate[("PS dedicated", n)] < ate[("SwitchML k=256", n)], n
    # Co-located servers share the workers' links: at 8 workers, near their volume bound n/(2(n-1)) = 0.571.
    assert ratio[("PS co-located", 8)] == pytest.approx(8 / (2 * 7), rel=0.05)
    assert ate[("PS co-located", 8)] < ate[("PS dedicated", 8)]
    # ATE/s flat in workers for SwitchML, falling for the ring (2(n-1)/n).
    for s_ in ("SwitchML k=64", "SwitchML k=256"):
        assert ate[(s_, 8)] == pytest.approx(ate[(s_, 4)], rel=0.01)
    assert ate[("ring allreduce", 8)] < ate[("ring allreduce", 4)]


def test_loss(runs):
    out, p = runs["loss"]
    assert len([l for l in p.stdout.splitlines() if "inflation" in l]) == 20  # 5 series x 4 losses
    rows = read_csv(out / "fig_switchml_loss.csv")
    a = [r for r in rows if r["panel"] == "a" and r["kind"] == "sim"]
    infl = {(r["protocol"], float(r["loss_rate"])): float(r["inflation"]) for r in a}
    assert set(infl) == {(p_, l) for p_ in ("switchml", "gloo", "nccl", "nccl_tcp", "ring") for l in (1e-4, 1e-3, 1e-2)}
    for proto in ("switchml", "ring"):
        assert infl[(proto, 1e-2)] > infl[(proto, 1e-4)] >= 1.0, proto
        assert infl[(proto, 1e-2)] >= infl[(proto, 1e-3)] >= infl[(proto, 1e-4)], proto
    # TCP's and RoCE's timeouts: at 1 % the baselines inflate far more than SwitchML (Fig. 6).
    for proto in ("gloo", "nccl", "nccl_tcp"):
        assert infl[(proto, 1e-2)] > 2 * infl[("switchml", 1e-2)], proto
    assert infl[("switchml", 1e-4)] < 1.5  # 0.01 % loss barely matters
    assert all(float(r["y"]) == float(r["inflation"]) and float(r["x"]) == float(r["loss_rate"]) * 100 for r in a)
    timeouts = {float(r["loss_rate"]): float(r["timeouts"]) for r in a if r["protocol"] == "switchml"}
    assert 0 < timeouts[1e-4] < timeouts[1e-3] < timeouts[1e-2]

    # (b) the timeline: loss 0 sends each packet exactly once; loss retransmits.
    b = [r for r in rows if r["panel"] == "b"]
    timeline = {}
    for r in b:
        if r["kind"] == "sim" and r["series"].startswith("loss "):
            timeline.setdefault(float(r["loss_rate"]), []).append(r)
    assert set(timeline) == {0.0, 1e-4, 1e-2}
    # fig6-loss-small.json: 8 MB of float32 in 256-element packets, plus one batch of pool (128)
    # packets: the library's float32 exponents travel one batch ahead (src/ina/README.md).
    packets = math.ceil(8_000_000 / 1024) + 128
    sent = {l: sum(int(r["packets_sent"]) for r in pts) for l, pts in timeline.items()}
    assert sent[0.0] == packets and sent[1e-4] >= packets and sent[1e-2] > packets * 1.01, sent
    bars = {float(r["loss_rate"]): r for r in b if r["series"].startswith("TAT loss")}
    assert set(bars) == {0.0, 1e-4, 1e-2}
    assert float(bars[1e-2]["tat_s"]) > float(bars[1e-4]["tat_s"]) >= float(bars[0.0]["tat_s"])
    for l, pts in timeline.items():
        assert max(float(r["x"]) for r in pts) <= float(bars[l]["tat_s"]) * 1e3 + 1.0  # bins end with the TAT (ms)


def test_pool(runs):
    out, p = runs["pool"]
    rows = read_csv(out / "fig_switchml_pool.csv")
    for panel, rate in (("a", 100), ("b", 10)):
        tat = {int(r["pool_size"]): r for r in rows if r["panel"] == panel and r["series"] == f"TAT {rate} Gb/s"}
        assert sorted(tat) == [16, 64, 256, 1024]
        assert all(float(r["tat_s"]) >= float(r["framing_bound_s"]) for r in tat.values())
        knee = int(tat[16]["pool_knee"])
        best = min(float(r["tat_s"]) for r in tat.values())
        # The knee: the smallest pool within 2 % of the best TAT, and no smaller one is.
        assert float(tat[knee]["tat_s"]) <= best * 1.02
        assert all(float(tat[s]["tat_s"]) > best * 1.02 for s in tat if s < knee)
        assert f"TAT stops improving at pool {knee}" in p.stdout
        # The RTT split: the wire's two host links, the switch (an ideal host at pool 16), the host the rest.
        wire = 2 * (1100 * 8 / (rate * 1e9) * 1e6 + 0.5)
        assert float(tat[16]["rtt_wire_us"]) == pytest.approx(wire, rel=1e-9)
        assert float(tat[16]["rtt_switch_us"]) > 0 and float(tat[16]["rtt_host_at_knee_us"]) > 0
        assert float(tat[knee]["rtt_p50_us"]) == pytest.approx(
            wire + float(tat[16]["rtt_switch_us"]) + float(tat[16]["rtt_host_at_knee_us"]), rel=1e-9)
        # Past the knee the window only queues: the RTT grows with the pool.
        rtt = {s: float(r["rtt_p50_us"]) for s, r in tat.items()}
        assert rtt[1024] > rtt[256] > rtt[64]
        marks = [r for r in rows if r["panel"] == panel and r["series"] == "knee"]
        assert marks and all(float(r["x"]) == knee for r in marks)
    # 100 Gb/s: the DPDK host needs a larger window than the 10 Gb/s link does.
    knees = {int(r["rate_gbps"]): int(r["pool_knee"]) for r in rows if r["series"].startswith("TAT ")}
    assert knees[100] > knees[10]


def test_hierarchy(runs):
    out, p = runs["hierarchy"]
    rows = read_csv(out / "fig_switchml_hierarchy.csv")
    sim = {int(r["workers"]): r for r in rows if r["panel"] == "a" and r["kind"] == "sim"}
    assert sorted(sim) == [4, 16]
    assert (int(sim[4]["levels"]), int(sim[16]["levels"])) == (1, 2)
    for r in sim.values():  # the DPDK workers, on a 2 MB tensor: well below the line
        assert 0.6 < float(r["ate_per_s"]) / float(r["ate_per_s_bound"]) <= 1.0
        assert float(r["ate_per_s_bound"]) == pytest.approx(100e9 / 8 / 1100 * 256, rel=1e-12)
    table = read_csv(out / "fig_switchml_hierarchy_programs.csv")
    # 8 DPDK threads a worker (100 Gb/s), each packetizing its slice of 62,500 elements: 8 x 245.
    packets = 8 * math.ceil(500_000 / 8 / 256)
    leaf = next(r for r in table if r["config"] == "4x4 leaf-spine" and r["level"] == "1")
    root = next(r for r in table if r["config"] == "4x4 leaf-spine" and r["level"] == "2")
    assert leaf["switches"] == "4" and leaf["root"] == "false" and root["root"] == "true"
    assert int(leaf["partials_up"]) == int(leaf["results_down"]) == 4 * packets
    assert int(root["broadcasts"]) == packets and int(root["partials_up"]) == 0
    assert "partials_up" in p.stdout


@pytest.mark.parametrize("name", SCRIPTS)
def test_exit_1_when_a_run_is_not_correct(runs, name, monkeypatch, capsys):
    """The cached --small sweep, with one row's `correct` turned false, gives exit 1."""
    out, p = runs[name]
    assert p.returncode == 0
    spoil_last_run(monkeypatch)
    assert load_script(script(name)).main(["--small", "--out", str(out), "--resume"]) == 1
    captured = capsys.readouterr()
    assert "not correct" in captured.err and "NOT CORRECT" in captured.out


def test_fig4_rebuilds_a_step_from_its_table1_row():
    """Worked example, ResNet-50 at 100 Gb/s (Table 1: B = 270 ms, Comm 3 %,
    overlap 94 %, 87 MB, TensorFlow): C = 8.1 ms, O = 7.614 ms, compute
    T = 270 - 0.486 = 269.514 ms; Horovod's 64 MiB buckets: 67,108,864 and
    19,891,136 bytes, ready at T - O = 261.9 ms and 8.1 ms x 67108864 / 87e6
    later = 268.148 ms; a 10x GPU divides the times, not the bytes."""
    fig4 = load_script(script("fig4"))
    row = next(r for r in fig4.table1() if r["model"] == "ResNet-50")
    s = fig4.step_schedule(row, 1.0, 1.0)
    assert s["compute_us"] == pytest.approx(269514.0)
    assert [c["bytes"] for c in s["collectives"]] == [67108864, 19891136]
    assert [c["ready_us"] for c in s["collectives"]] == pytest.approx([261900.0, 268148.0666], abs=1e-3)
    fast = fig4.step_schedule(row, 10.0, 1.0)
    assert fast["compute_us"] == pytest.approx(26951.4)
    assert [c["ready_us"] for c in fast["collectives"]] == pytest.approx([26190.0, 26814.80666], abs=1e-4)
    assert [c["bytes"] for c in fast["collectives"]] == [67108864, 19891136]
    # x 0.01: every byte and time scaled, whole int32 elements.
    small = fig4.step_schedule(row, 1.0, 0.01)
    assert sum(c["bytes"] for c in small["collectives"]) == 870000 and small["compute_us"] == pytest.approx(2695.14)


def test_fig4_speedups_are_nccls_step_over_switchmls(runs):
    out, _ = runs["fig4"]
    steps = read_csv(out / "fig_switchml_fig4_steps.csv")
    by = {(r["model"], r["gpu"], r["protocol"]): float(r["step_s"]) for r in steps}
    assert len(by) == 8 * 2 * 2
    rows = read_csv(out / "fig_switchml_fig4.csv")
    p100 = {r["model"]: float(r["y"]) for r in rows if r["panel"] == "a" and r["kind"] == "sim"}
    assert set(p100) == {m for m, _, _ in by}
    for m, y in p100.items():
        assert y == pytest.approx(by[(m, "P100", "nccl")] / by[(m, "P100", "switchml")], rel=1e-12)
        # A step is never shorter than its compute.
        compute = next(float(r["compute_s"]) for r in steps if r["model"] == m and r["gpu"] == "P100")
        assert by[(m, "P100", "switchml")] >= compute and by[(m, "P100", "nccl")] >= compute
