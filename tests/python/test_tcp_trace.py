"""outputs.tcp_trace: the background TCP senders' congestion state over time
(src/congestion/tcp-trace.h), on PANAMA's reduced Fig. 10 (one DCTCP flow
sharing a 10 Gb/s port with an aggregation job).

- DCTCP's alpha rows follow DCTCP's recursion exactly: alpha = (1 - g) alpha'
  + g marked/acked, g = 1/16, from alpha = 1 (ns-3.37 TcpDctcp's defaults),
  with 0 <= marked <= acked: the columns are what ns-3 estimated, in the right
  order.
- Every row carries the current state: a cwnd row's cwnd_bytes is the value
  the next rows repeat until the next cwnd row; the flow enters CA_CWR and
  returns to CA_OPEN alternately (ECN, no loss), and each CWR entry comes
  right after ssthresh was set below the cwnd it entered with.
- Filters: flows, events, from_us/until_us, max_rows (the rest counted).
- Bad input exits 2 naming the key: a flow that does not exist, and the
  section without background flows."""

import json
import subprocess

import pytest

from helpers import SOURCE_DIR, child_env
from test_pcap import BIN

SMALL = "scenarios/panama/fig10-fairness-small.json"


def run(tmp_path, sets, name="out", scenario=SMALL, code=0):
    out = tmp_path / name
    args = [BIN, "run", str(SOURCE_DIR / scenario), "--out", str(out)]
    for s in sets:
        args += ["--set", s]
    p = subprocess.run(args, capture_output=True, text=True, env=child_env(), timeout=300)
    assert p.returncode == code, p.stderr
    return out, p


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    out, _ = run(tmp_path_factory.mktemp("tcp"), ['outputs.tcp_trace={"flows":[0]}'])
    import pandas as pd

    return out, pd.read_csv(out / "tcp_trace.csv")


def test_alpha_rows_follow_dctcps_recursion(traced):
    _, t = traced
    a = t[t.event == "alpha"]
    assert len(a) > 100
    assert (a.window_marked_bytes <= a.window_acked_bytes).all() and (a.window_acked_bytes > 0).all()
    assert a.window_marked_bytes.sum() > 0, "the shared port must mark some of the flow's bytes"
    g, prev = 1 / 16, 1.0
    for marked, acked, alpha in zip(a.window_marked_bytes, a.window_acked_bytes, a.alpha):
        prev = (1 - g) * prev + g * marked / acked
        assert alpha == pytest.approx(prev, rel=1e-5)


def test_rows_carry_the_current_state(traced):
    _, t = traced
    assert list(t.columns) == ["time_ps", "flow", "event", "cwnd_bytes", "ssthresh_bytes", "in_flight_bytes", "rtt_ps",
                               "state", "alpha", "window_acked_bytes", "window_marked_bytes"]
    assert (t.flow == 0).all() and t.time_ps.is_monotonic_increasing
    # Between two cwnd rows every row repeats the last cwnd.
    last = None
    for ev, cwnd in zip(t.event, t.cwnd_bytes):
        if ev == "cwnd":
            last = cwnd
        elif last is not None:
            assert cwnd == last
    states = list(t[t.event == "state"].state)
    assert len(states) > 20 and set(states) == {"CA_CWR", "CA_OPEN"}, "ECN cuts, no loss"
    assert all(a != b for a, b in zip(states, states[1:])), "CWR and OPEN alternate"
    entries = t.index[(t.event == "state") & (t.state == "CA_CWR")]
    for i in entries:
        # ns-3 sets ssthresh (DCTCP's GetSsThresh) just before it enters CWR.
        cut = t.loc[i - 1]
        assert cut.event == "ssthresh" and cut.time_ps == t.loc[i].time_ps and cut.state == "CA_OPEN"
        assert cut.ssthresh_bytes < t.loc[i].cwnd_bytes


def test_results_json_counts_the_rows(traced):
    out, t = traced
    r = json.loads((out / "results.json").read_text())
    assert r["outputs"]["tcp_trace"] == {"senders": 1, "rows": len(t), "left_out_max_rows": 0}


def test_filters(tmp_path, traced):
    _, full = traced
    out, _ = run(tmp_path, ['outputs.tcp_trace={"events":["alpha","state"],"from_us":20000,"until_us":40000,'
                            '"max_rows":50}'])
    import pandas as pd

    t = pd.read_csv(out / "tcp_trace.csv")
    want = full[full.event.isin(["alpha", "state"]) & (full.time_ps >= 20e9) & (full.time_ps < 40e9)]
    assert len(want) > 50 and len(t) == 50
    # The same rows as the unfiltered run's (its empty alpha cells make its columns floats).
    pd.testing.assert_frame_equal(t, want.head(50).reset_index(drop=True), check_dtype=False)
    r = json.loads((out / "results.json").read_text())
    assert r["outputs"]["tcp_trace"]["left_out_max_rows"] == len(want) - 50


def test_bad_input_exits_2_naming_the_key(tmp_path):
    _, p = run(tmp_path, ['outputs.tcp_trace={"flows":[0,3]}'], name="a", code=2)
    assert "outputs.tcp_trace.flows[1]: no flow 3 (this run has 1 background flows" in p.stderr
    assert not (tmp_path / "a").exists()
    _, p = run(tmp_path, ['outputs.tcp_trace={"flows":[0]}'], name="b", scenario="scenarios/panama/small-8.json",
               code=2)
    assert "outputs.tcp_trace" in p.stderr and "background.flows is not enabled" in p.stderr
    _, p = run(tmp_path, ['outputs.tcp_trace={"events":["cwnd","window"]}'], name="c", code=2)
    assert "outputs.tcp_trace.events" in p.stderr
