#!/usr/bin/python3
"""Fig. 4's scale check: one model's speed-up over NCCL-RDMA (P100 step) at
every size and time x 1, x 0.1 (the figure's full size) and x 0.01 (its
--small), the same rebuild as analysis/fig_switchml_fig4.py.

    PYTHONPATH=python:build/python /usr/bin/python3 analysis/switchml_fig4_scales.py MODEL [MODEL ...]

MODEL: a Table 1 name (data/models/switchml-table1.csv), e.g. ResNet-50 NCF SSD.
Prints one line per model and scale: both steps and their ratio.
"""

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT / "python", ROOT / "build" / "python"):
    sys.path.append(str(p))
_spec = importlib.util.spec_from_file_location("fig4", ROOT / "analysis" / "fig_switchml_fig4.py")
fig4 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fig4)


def main(models):
    import inasim

    rows = {r["model"]: r for r in fig4.table1()}
    for model in models:
        if model not in rows:
            print(f"switchml_fig4_scales: no model {model!r} (one of {', '.join(rows)})", file=sys.stderr)
            return 2
        for scale in (1.0, 0.1, 0.01):
            steps = {}
            for proto, sets in fig4.PROTOCOLS:
                sched = fig4.step_schedule(rows[model], 1.0, scale)
                r = inasim.run(fig4.CONFIGS["full"]["scenario"], sets + ["workload.schedule=" + json.dumps(sched)])
                if not r.correct:
                    print(f"switchml_fig4_scales: {model} x{scale} on {proto}: not correct", file=sys.stderr)
                    return 1
                steps[proto] = r.json["workload"]["step"]["mean_s"]
            print(f"{model} x{scale:g}: SwitchML {steps['switchml'] * 1e3:.4f} ms, NCCL {steps['nccl'] * 1e3:.4f} ms, "
                  f"speed-up {steps['nccl'] / steps['switchml']:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]) if len(sys.argv) > 1 else (print(__doc__), 2)[1])
