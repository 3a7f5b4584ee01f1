#!/usr/bin/env python3
"""Why PANAMA's aggregation gets less than the DCTCP flow in Fig. 10 (issue 29):
the two senders' windows decomposed, from PANAMA's window trace
(`workload.panama.window_trace`, rank 0) and the flow's `outputs.tcp_trace`.

Both senders share one queue, so they see the same RTT and the same marked
fraction; each one's rate is its bytes in flight over that RTT (Little), and
their share is the ratio of their windows. In a sawtooth's steady state a
window W gains G packets per second by additive increase and loses R cuts per
second of a fraction f each, so W = G / (R f). f is alpha/2 at the cut:
DCTCP cuts at the first ECE with the alpha of earlier windows (ns-3.37
TcpDctcp::GetSsThresh; PktsAcked updates alpha once per window), Fig. 5 with
the alpha it has just updated with the marked window itself; the script
gives both senders' alpha at their cuts and on average. The script measures G, R, f and
W for both senders over the steady state (from 30 ms until the job ends) of
each Fig. 10 configuration, and writes them with W's prediction:

    PYTHONPATH=python:build/python /usr/bin/python3 analysis/panama_fig10_windows.py [--small] [--out DIR]

Units: DCTCP's packets are MSS-sized segments; PANAMA's are results.
DCTCP's cuts are its CWR entries (an ECN cut), f = 1 - ssthresh / cwnd at the
entry; its additive increases are +1 MSS steps of cwnd while CA_OPEN (PRR's
steps during CWR are left out). PANAMA's are Fig. 5's: a cut is a decrease of
cwnd, an increase a step up."""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import inasim  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RUNS = [("Fig. 5 (default)", ["workload.panama.increase=unmarked_windows"]),
        ("every window", ["workload.panama.increase=every_window"]),
        ("Fig. 5 + CWR", ["workload.panama.increase=unmarked_windows", "workload.panama.cut=once_per_flight"])]
TRACES = ["workload.panama.window_trace=true", 'outputs.tcp_trace={"flows":[0]}', "outputs.links_csv=false"]
STEADY_FROM_S = 0.030


def time_weighted_mean(t, v, t0, t1):
    t = np.append(np.asarray(t, float), t1)
    return float(np.sum(np.asarray(v, float) * np.diff(t)) / (t1 - t0))


def dctcp_sender(tcp, t0, t1):
    """G, R, f, W (segments) and marked fraction of the DCTCP flow."""
    mss = 1448
    tcp = tcp[(tcp.t >= t0) & (tcp.t < t1)].reset_index(drop=True)
    cw = tcp[tcp.event == "cwnd"]
    step = cw.cwnd_bytes.diff()
    grow = int(((step == mss) & (cw.state == "CA_OPEN")).sum())
    entries = tcp.index[(tcp.event == "state") & (tcp.state == "CA_CWR")]
    cuts = 1 - tcp.loc[entries, "ssthresh_bytes"].values / tcp.loc[entries, "cwnd_bytes"].values
    est = tcp[tcp.event == "alpha"]
    span = t1 - t0
    return {"G_per_s": grow / span, "R_per_s": len(entries) / span, "f": float(cuts.mean()),
            "W": time_weighted_mean(cw.t, cw.in_flight_bytes, t0, t1) / mss,
            "marked": float(est.window_marked_bytes.sum() / est.window_acked_bytes.sum()),
            "alpha_at_cut": float(tcp.loc[entries, "alpha"].mean()), "alpha_mean": float(est.alpha.mean())}


def panama_sender(w, t0, t1):
    """G, R, f, W (results) and marked fraction of rank 0's tree."""
    w = w[(w.time_s >= t0) & (w.time_s < t1)]
    c = w.cwnd.values
    step = np.diff(c)
    down = np.where(step < 0)[0]
    span = t1 - t0
    return {"G_per_s": float(step[step > 0].sum()) / span, "R_per_s": len(down) / span,
            "f": float(np.mean(1 - c[down + 1] / c[down])),
            "W": time_weighted_mean(w.time_s, w.in_flight, t0, t1), "marked": float(w.ecn_marked.mean()),
            "alpha_at_cut": float(w.alpha.values[down + 1].mean()), "alpha_mean": float(w.alpha.mean())}


def measure(scenario, sets):
    r = inasim.run(ROOT / scenario, sets + TRACES)
    t1 = float(r.frame("collectives").end_s.max())
    tcp = r.frame("tcp_trace")
    tcp["t"] = tcp.time_ps * 1e-12
    return {"DCTCP flow": dctcp_sender(tcp, STEADY_FROM_S, t1),
            "aggregation": panama_sender(r.frame("panama_windows"), STEADY_FROM_S, t1)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="the reduced scenario (fig10-fairness-small.json)")
    ap.add_argument("--out", default="out/panama-fig10-windows", help="where windows.csv goes")
    a = ap.parse_args()
    scenario = "scenarios/panama/fig10-fairness" + ("-small" if a.small else "") + ".json"
    cols = ("G_per_s", "R_per_s", "f", "W", "W_predicted", "marked", "alpha_at_cut", "alpha_mean")
    lines = ["configuration,sender," + ",".join(cols)]
    for label, sets in RUNS:
        senders = measure(scenario, sets)
        for who, m in senders.items():
            m["W_predicted"] = m["G_per_s"] / (m["R_per_s"] * m["f"])
            lines.append(f"{label},{who}," + ",".join(f"{m[k]:.4g}" for k in cols))
        d, p = senders["DCTCP flow"], senders["aggregation"]
        print(f"{label}: W ratio {p['W'] / d['W']:.3f} = G {p['G_per_s'] / d['G_per_s']:.3f} x 1/R "
              f"{d['R_per_s'] / p['R_per_s']:.3f} x 1/f {d['f'] / p['f']:.3f} "
              f"(product {p['W_predicted'] / d['W_predicted']:.3f})")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "windows.csv").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {out / 'windows.csv'}")


if __name__ == "__main__":
    main()
