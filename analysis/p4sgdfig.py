"""What the P4SGD figure scripts (analysis/fig_p4sgd_*.py) share on top of
figscript.py: the two ways P4SGD trains, as they are compared.

    from p4sgdfig import MODES
    points = [{"workload.p4sgd.parallelism": mode} for mode, _ in MODES]
"""

from __future__ import annotations

#: workload.p4sgd.parallelism and its label: P4SGD's model-parallel training
#: (features split over the workers, activations allreduced) vs data-parallel
#: (samples split, every gradient word allreduced).
MODES = (("model", "model-parallel (P4SGD)"), ("data", "data-parallel"))
