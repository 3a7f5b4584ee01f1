#!/usr/bin/python3
"""PANAMA Fig. 1: the fraction of training time spent communicating, and the expected speed-up of in-network aggregation, per DNN and GPU generation.

    /usr/bin/python3 analysis/fig_panama_fig1.py [--small] [--out DIR]

Analytic, as the paper's (§2): no simulation. Per model and GPU, one
iteration computes for batch / (images/s) seconds on one GPU, then
communicates its fp32 gradients (4 bytes per parameter) over one link at
10 Gb/s (P100), 40 Gb/s (V100) or 100 Gb/s (A100), the paper's pairing.
  (a) comm / (comm + comp), the paper's Fig. 1a;
  (b) (comp + comm) / (comp + comm / 2): in-network aggregation at best
      halves the communication time of Ring-AllReduce (§2, Klenk et al.),
      with no overlap of computation and communication (the paper's
      "optimal case"); the paper's Fig. 1b;
  (c) per GPU (and over all): the lowest, highest and mean fraction;
  (d) per GPU: the lowest and highest speed-up (what the paper's text quotes).

The five models are the TensorFlow benchmark suite's (VGG16, AlexNet,
ResNet-152, ResNet-50, InceptionV3; batch 64, AlexNet 512), the suite the
paper takes its batch sizes from. Parameters, batches and P100 rates are
data/models/dnn-models.csv (the file the simulator compiles in, so the
simulator and this figure share one table); V100 and A100 rates are
scenarios/panama/fig1-gpu-throughput.csv (every row with its source).
--small is the same computation (it is analytic).

Writes OUT/fig_panama_fig1.png and .csv, OUT/fig_panama_fig1_table.csv (every
input and result per model and GPU). Exit status: 0 ok; 2 bad input.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # figscript.py, also when loaded by path (tests)
import figscript  # noqa: E402
from figscript import ROOT  # noqa: E402

STEM = "fig_panama_fig1"
MODELS = ROOT / "data" / "models" / "dnn-models.csv"
GPU_DATA = ROOT / "scenarios" / "panama" / "fig1-gpu-throughput.csv"
CONFIGS = {"full": {}, "small": {}}  # analytic: the reduced run is the full one
# The paper's pairing of GPU generation and link rate (§2: "we assume link
# bandwidths of 10 Gbps, 40 Gbps, and 100 Gbps for P100, V100, and A100").
GPUS = [("P100", 10e9), ("V100", 40e9), ("A100", 100e9)]
BYTES_PER_GRADIENT = 4  # fp32 (the paper gives no other precision)
# The best in-network aggregation can do against Ring-AllReduce: halve the
# communication time (§2, citing Klenk et al., 2020).
INA_COMM_FACTOR = 0.5


def table_models(path: Path = MODELS):
    """The P100 rows of data/models/dnn-models.csv: [{name, parameters, batch,
    p100}] in its order. The file is the one home of these numbers and their
    sources ('#' lines are its notes)."""
    with open(path, newline="", encoding="utf-8") as f:
        lines = [line for line in f if not line.startswith("#") and line.strip()]
    rows = [{"name": r["name"], "parameters": int(r["parameters"]), "batch": int(r["batch"]),
             "p100": float(r["images_per_s"])} for r in csv.DictReader(lines) if r["gpu"] == "P100"]
    if not rows:
        raise ValueError(f"{path}: no P100 rows")
    return rows


def gpu_rates(path: Path = GPU_DATA):
    """{(model, gpu): images/s} of the V100/A100 data file ('#' lines are its notes)."""
    with open(path, newline="", encoding="utf-8") as f:
        lines = [line for line in f if not line.startswith("#")]
    return {(r["model"], r["gpu"]): float(r["images_per_s"]) for r in csv.DictReader(lines)}


def speedup(fraction: float) -> float:
    """Training-time speed-up when communication (this fraction of an
    iteration) takes INA_COMM_FACTOR of its time: 1 / (1 - f (1 - factor))."""
    return 1.0 / (1.0 - fraction * (1.0 - INA_COMM_FACTOR))


def table_rows(models, rates):
    """One row per model and GPU with a throughput (a cell without a citable
    rate is left out, not guessed)."""
    out = []
    for m in models:
        for gpu, bps in GPUS:
            ips = m["p100"] if gpu == "P100" else rates.get((m["name"], gpu))
            if ips is None:
                continue
            comp = m["batch"] / ips
            comm = m["parameters"] * BYTES_PER_GRADIENT * 8 / bps
            frac = comm / (comm + comp)
            out.append({"model": m["name"], "gpu": gpu, "link_gbps": bps / 1e9, "parameters": m["parameters"],
                        "batch": m["batch"], "images_per_s": ips, "compute_s": comp, "comm_s": comm,
                        "comm_fraction": frac, "speedup": speedup(frac)})
    return out


def per_model_panel(fig, rows, models, key, title, ylabel, yunit):
    """Panels a and b: x = the model (1..5), one series per GPU generation."""
    panel = fig.plot.Figure(title, "DNN", ylabel, "model", yunit, legend_loc="upper right")
    index = {m["name"]: i + 1 for i, m in enumerate(models)}
    for gpu, bps in GPUS:
        mine = [r for r in rows if r["gpu"] == gpu]
        panel.line([index[r["model"]] for r in mine], [r[key] for r in mine], f"{gpu} @ {bps / 1e9:g} Gb/s",
                   linestyle="none", columns={"model": [r["model"] for r in mine]})
    return panel.xticks(list(index.values()), list(index))


def summary_panel(fig, rows, key, title, ylabel, yunit, with_mean, with_all):
    """Panels c and d: x = the GPU generation (1..3; 4 = all of them), the
    lowest and highest value of the models (and their mean)."""
    panel = fig.plot.Figure(title, "GPU and link", ylabel, "generation", yunit, legend_loc="upper right")
    groups = [[r for r in rows if r["gpu"] == gpu] for gpu, _ in GPUS] + ([rows] if with_all else [])
    xs = list(range(1, len(groups) + 1))
    stats = [("lowest", min), ("highest", max)]
    if with_mean:
        stats.append(("mean of the models", lambda v: sum(v) / len(v)))
    for name, fn in stats:
        panel.line(xs, [fn([r[key] for r in g]) for g in groups], f"{ylabel}, {name}", linestyle="none")
    labels = [f"{gpu}\n{bps / 1e9:g} Gb/s" for gpu, bps in GPUS] + (["all"] if with_all else [])
    return panel.xticks(xs, labels)


def draw(fig):
    try:
        models, rates = table_models(), gpu_rates()
    except (OSError, ValueError, KeyError) as e:
        print(f"{STEM}: {e}", file=sys.stderr)
        raise figscript.FigureExit(2) from None
    rows = table_rows(models, rates)
    for r in rows:
        print(f"{r['model']:12s} {r['gpu']} @ {r['link_gbps']:3g} Gb/s: compute {r['compute_s'] * 1e3:7.1f} ms, "
              f"communication {r['comm_s'] * 1e3:7.1f} ms, fraction {r['comm_fraction']:.3f}, "
              f"speed-up {r['speedup']:.3f}")
    panels = [per_model_panel(fig, rows, models, "comm_fraction", "communication / training time", "fraction", "ratio"),
              per_model_panel(fig, rows, models, "speedup", "expected speed-up of INA", "speed-up", "x"),
              summary_panel(fig, rows, "comm_fraction", "fraction per GPU", "fraction", "ratio", True, True),
              summary_panel(fig, rows, "speedup", "speed-up per GPU", "speed-up", "x", False, False)]
    return fig.save(panels, title="PANAMA Fig. 1: one iteration on one GPU, fp32 gradients over one link",
                    tables={"table": {k: [r[k] for r in rows] for k in rows[0]}})


main = figscript.entry(STEM, __doc__, "the same analytic computation (no simulation)", CONFIGS, draw)


if __name__ == "__main__":
    sys.exit(main())
