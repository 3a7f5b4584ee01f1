#!/usr/bin/python3
"""SwitchML Fig. 4: training batch speed-up over NCCL-RDMA at 100 Gb/s, P100 and a 10x faster GPU.

    /usr/bin/python3 analysis/fig_switchml_fig4.py [--small] [--out DIR] [--jobs N] [--resume]

The paper replays the profile traces behind its Table 1 (8 workers, P100s)
against SwitchML (DPDK, 256-value packets) and NCCL, and for a 10x faster
GPU divides the traces' times by 10. The traces are not published; Table 1
is (data/models/switchml-table1.csv). From each model's 100 Gb/s row this
script rebuilds one training step as a `workload.schedule`:

- batch B, communication C = Comm% x B, of which O = overlap% x C runs
  during compute; so the exposed part is E = C - O and the compute
  T = B - E;
- the gradient (Size MB) in buckets of the framework's size (PyTorch DDP's
  25 MiB for the PyTorch models, Horovod's 64 MiB fusion buffer for the
  TensorFlow ones; Table 3 says which), ready as they were sent in the
  profile: communication starts at T - O and runs contiguous at the profile's
  pace C, so a bucket is ready when the bytes before it are sent, or at T
  at the latest;
- a 10x faster GPU: T and every ready time / 10, the bytes unchanged.

The 10 Gb/s row checks the rebuild: the compute it implies (B - E at
10 Gb/s) should be the 100 Gb/s row's (panel e); where it is not, the
profile itself is not one fixed compute.

Each step runs on scenarios/switchml/fig4-training.json (8 workers, one
100 Gb/s rack) with SwitchML's DPDK workers and with NCCL over RoCE, two
iterations; speed-up = NCCL's mean step / SwitchML's (results.json
workload.step). Scale: every size and time x `scale` (0.1 full, 0.01
--small), one rule for both; a ratio of step times does not depend on it
while packets and latencies stay small beside the buckets.

Panels: (a) speed-up per model, P100; (b) the same, 10x GPU; (c) the highest
speed-up (x = 1 P100, 2 10x, 3 both); (d) the mean speed-up of the text's
three tiers at P100 (x = 1 DeepLight and LSTM, 2 BERT and NCF, 3 UGATIT,
SSD and ResNet-50); (e) compute per iteration implied by the 10 and 100 Gb/s
rows.
Writes OUT/fig_switchml_fig4.png and .csv and OUT/fig_switchml_fig4_steps.csv
(every model, GPU and protocol: schedule, step and exposed communication).
Exit status: 0 ok; 1 a run failed or was not correct; 2 bad input.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from figscript import ROOT, num  # noqa: E402

STEM = "fig_switchml_fig4"
TABLE1 = ROOT / "data" / "models" / "switchml-table1.csv"
CONFIGS = {
    "full": {"scenario": ROOT / "scenarios" / "switchml" / "fig4-training.json", "scale": 0.1},
    "small": {"scenario": ROOT / "scenarios" / "switchml" / "fig4-training.json", "scale": 0.01},
}
GPUS = [("P100", 1.0), ("10x GPU", 10.0)]
MIB = 1 << 20
# Table 3: the toolkit of each model; DDP's bucket_cap_mb default (torch/nn/parallel/distributed.py)
# and Horovod's HOROVOD_FUSION_THRESHOLD default (horovod/common/operations.cc), 64 MiB.
BUCKET_BYTES = {"PyT": 25 * MIB, "TF": 64 * MIB}
TOOLKIT = {"DeepLight": "PyT", "LSTM": "PyT", "NCF": "PyT", "VGG19": "PyT", "SSD": "PyT",
           "BERT": "TF", "UGATIT": "TF", "ResNet-50": "TF"}
# Fig. 4's text puts the models in three tiers, best first: "major improvements", "somewhat lower" and
# "Similarly ... modest" (one tier: the text does not order BERT and NCF), "not network-bound".
GROUPS = [("DeepLight, LSTM", ["DeepLight", "LSTM"]), ("BERT, NCF", ["BERT", "NCF"]),
          ("UGATIT, SSD, ResNet-50", ["UGATIT", "SSD", "ResNet-50"])]
PROTOCOLS = [("switchml", []), ("nccl", ['workload.protocol="nccl"', "workload.switchml=null"])]


def table1(path: Path = TABLE1):
    """The rows of data/models/switchml-table1.csv ('#' lines are its notes)."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    return [{k: (v if k == "model" else float(v)) for k, v in r.items()} for r in rows]


def profile(row, rate: str):
    """(batch, communication, overlapped, exposed, compute) in seconds, from one rate's columns."""
    b = row[f"batch_ms_{rate}"] * 1e-3
    c = row[f"comm_pct_{rate}"] / 100 * b
    o = row[f"overlap_pct_{rate}"] / 100 * c
    return b, c, o, c - o, b - (c - o)


def step_schedule(row, gpu_factor: float, scale: float):
    """The model's training step as workload.schedule (module doc), every size and time x scale."""
    _, c, o, _, t = profile(row, "100g")
    size = round(row["size_mb"] * 1e6 * scale / 4) * 4
    cap = max(4, round(BUCKET_BYTES[TOOLKIT[row["model"]]] * scale / 4) * 4)
    collectives, sent = [], 0
    while sent < size:
        b = min(cap, size - sent)
        ready = min(t, t - o + c * sent / size) / gpu_factor  # when the bytes before it were sent
        collectives.append({"bytes": b, "ready_us": round(ready * scale * 1e6, 6)})
        sent += b
    return {"compute_us": round(t / gpu_factor * scale * 1e6, 6), "after_us": 0, "collectives": collectives}


def run_steps(fig, rows):
    """Every model x GPU x protocol: the mean step and exposed communication."""
    scale = fig.cfg["scale"]
    points, keys = [], []
    for row in rows:
        for gpu, factor in GPUS:
            points.append({"workload.schedule": step_schedule(row, factor, scale)})
            keys.append((row["model"], gpu))
    out, ok = {}, {}
    for proto, sets in PROTOCOLS:
        results = fig.sweep(f"{fig.base['name']}-{proto}", points=points, sets=sets)
        for key, r in zip(keys, results):
            ok[key] = ok.get(key, True) and fig.check(r, f"{proto} {key[0]} {key[1]}")
            w = json.loads((r["cache_dir"] / "results.json").read_text())["workload"]
            out[(proto,) + key] = (num(w.get("step", {}).get("mean_s")), num(w.get("step", {}).get("exposed_comm_mean_s")))
    return out, ok


def speedup_panel(fig, rows, steps, gpu, panel_columns):
    names = [r["model"] for r in rows]
    x = list(range(1, len(names) + 1))
    ys = [steps[("nccl", m, gpu)][0] / steps[("switchml", m, gpu)][0] for m in names]
    f = fig.plot.Figure(f"speed-up over NCCL-RDMA, {gpu}", "model", "speed-up", "index", "ratio", legend_loc="upper right")
    f.line(x, ys, f"SwitchML / NCCL-RDMA, {gpu}", linestyle="none", marker="o",
           columns={"model": names, **panel_columns(names, gpu)})
    f.bound(x, [2.1] * len(x), "paper: at most 2.1x", legend="paper: at most 2.1x")
    return f.xticks(x, names), dict(zip(names, ys))


def draw(fig):
    rows = table1()
    steps, ok = run_steps(fig, rows)

    def columns(names, gpu):
        return {"switchml_step_s": [steps[("switchml", m, gpu)][0] for m in names],
                "nccl_step_s": [steps[("nccl", m, gpu)][0] for m in names],
                "switchml_exposed_s": [steps[("switchml", m, gpu)][1] for m in names],
                "nccl_exposed_s": [steps[("nccl", m, gpu)][1] for m in names]}

    pa, sp_p100 = speedup_panel(fig, rows, steps, "P100", columns)
    pb, sp_10x = speedup_panel(fig, rows, steps, "10x GPU", columns)
    highest = [max(sp_p100.values()), max(sp_10x.values()), max(max(sp_p100.values()), max(sp_10x.values()))]
    pc = fig.plot.Figure("highest speed-up over NCCL-RDMA", "GPU", "speed-up", "index", "ratio")
    pc.line([1, 2, 3], highest, "highest speed-up", linestyle="none", marker="o")
    pc.xticks([1, 2, 3], ["P100", "10x GPU", "both"])
    means = [sum(sp_p100[m] for m in ms) / len(ms) for _, ms in GROUPS]
    pd_ = fig.plot.Figure("the text's tiers, P100", "tier", "speed-up", "index", "ratio")
    pd_.line(list(range(1, len(GROUPS) + 1)), means, "tier mean, P100", linestyle="none", marker="o")
    pd_.xticks(list(range(1, len(GROUPS) + 1)), [g for g, _ in GROUPS])
    pe = consistency_panel(fig, rows)
    for r in rows:
        m = r["model"]
        print(f"{m:10s} speed-up P100 {sp_p100[m]:.3f}  10x {sp_10x[m]:.3f}  (steps: SwitchML "
              f"{steps[('switchml', m, 'P100')][0] * 1e3:.3f} ms, NCCL {steps[('nccl', m, 'P100')][0] * 1e3:.3f} ms)  "
              f"{'correct' if ok[(m, 'P100')] and ok[(m, '10x GPU')] else 'NOT CORRECT'}")
    return fig.save([pa, pb, pc, pd_, pe], title=f"SwitchML vs NCCL-RDMA, training step at 100 Gb/s, 8 workers "
                                                 f"(Table 1 profiles x {fig.cfg['scale']:g})",
                    tables={"steps": step_columns(fig, rows, steps)})


def consistency_panel(fig, rows):
    """Compute per iteration implied by the 100 Gb/s and the 10 Gb/s rows (a check of the rebuild)."""
    names = [r["model"] for r in rows]
    x = list(range(1, len(names) + 1))
    pe = fig.plot.Figure("compute implied by Table 1", "model", "compute", "index", "ms", legend_loc="upper left")
    for rate, label in (("100g", "from the 100 Gb/s row"), ("10g", "from the 10 Gb/s row")):
        pe.line(x, [profile(r, rate)[4] * 1e3 for r in rows], label, linestyle="none", marker="o",
                columns={"model": names})
    return pe.xticks(x, names)


def step_columns(fig, rows, steps):
    """Every model, GPU and protocol: its schedule, step and exposed communication (OUT/<stem>_steps.csv)."""
    cols = {k: [] for k in ("model", "gpu", "protocol", "collectives", "bytes", "compute_s", "step_s",
                            "exposed_comm_s")}
    for r in rows:
        for gpu, factor in GPUS:
            s = step_schedule(r, factor, fig.cfg["scale"])
            for proto, _ in PROTOCOLS:
                step, exposed = steps[(proto, r["model"], gpu)]
                for k, v in zip(cols, (r["model"], gpu, proto, len(s["collectives"]),
                                       sum(c["bytes"] for c in s["collectives"]), s["compute_us"] * 1e-6, step,
                                       exposed)):
                    cols[k].append(v)
    return cols


main = figscript.entry(STEM, __doc__, "every model at 1/100 of its size and time (a few minutes)", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
