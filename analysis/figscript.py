"""What every figure script in analysis/ shares: its command line, reading
sweep metrics, and SwitchML's packet framing.

    from figscript import parse_figure_args, num, switchml_wire_bytes
    args = parse_figure_args("fig_x.py", __doc__, "the reduced sweep (4 points, a few seconds)", argv)
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Optional, Sequence

__all__ = ["parse_figure_args", "num", "SWITCHML_FRAMING", "switchml_wire_bytes"]


def parse_figure_args(prog: str, doc: Optional[str], small_help: str,
                      argv: Optional[Sequence[str]], repetitions: bool = False) -> argparse.Namespace:
    """--small, --out DIR, --jobs N (>= 1), --resume: the figure scripts' options;
    with `repetitions`, also --repetitions N (>= 1; None when not given)."""
    ap = argparse.ArgumentParser(prog=prog, description=(doc or "").split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help=small_help)
    ap.add_argument("--out", type=Path, default=None, help="output directory (default out/figures, "
                    "out/figures/small with --small)")
    ap.add_argument("--jobs", type=int, default=None, help="parallel simulation processes (default: CPU count)")
    ap.add_argument("--resume", action="store_true",
                    help="reuse runs already cached under OUT/sweeps/ (default: run everything again)")
    if repetitions:
        ap.add_argument("--repetitions", type=int, default=None,
                        help="runs per point, seeds seed .. seed + N - 1 (default: the figure's own, "
                        "5 placements at full size as the paper)")
    args = ap.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        ap.error("--jobs must be >= 1")
    if getattr(args, "repetitions", None) is not None and args.repetitions < 1:
        ap.error("--repetitions must be >= 1")
    return args


def num(v: Any) -> float:
    """A sweep metric as a float; NaN when it is missing or not a number."""
    try:
        return float("nan") if v is None else float(v)
    except (TypeError, ValueError):
        return float("nan")


#: Bytes around a SwitchML packet's 4k bytes of data on the wire (section 5).
SWITCHML_FRAMING = {"switchml": 10, "udp": 8, "ipv4": 20, "ethernet": 14, "preamble_fcs_ifg": 24}


def switchml_wire_bytes(k: int) -> int:
    """Wire bytes of a packet of k int32 elements: 4k + 76 (1100 for k = 256)."""
    return 4 * k + sum(SWITCHML_FRAMING.values())
