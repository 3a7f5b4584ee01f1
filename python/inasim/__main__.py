"""`python3 -m inasim sweep|compare|fidelity ...` (what `inasim sweep`, `inasim compare` and
`inasim fidelity` run)."""
import sys

USAGE = """usage: python3 -m inasim sweep SWEEP.json [--out DIR] [--jobs N] [...]
       python3 -m inasim compare SCENARIO.json [--protocols all|ring,...] [--repetitions N] [...]
       python3 -m inasim fidelity [--small] [--protocol P] [--run none|missing|all] [...]
       python3 -m inasim --help | COMMAND --help
(`inasim sweep`, `compare` and `fidelity` run these; docs/SWEEPS.md, docs/PAPER-CLAIMS.md)
"""


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # --help is a request, not a mistake: usage on stdout and 0, as argparse
    # does for the subcommands; a missing or unknown command stays exit 2.
    if argv and argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    if not argv or argv[0] not in ("sweep", "compare", "fidelity"):
        what = f'unknown command "{argv[0]}"\n' if argv else ""
        sys.stderr.write(f"python3 -m inasim: {what}" if what else "")
        sys.stderr.write(USAGE)
        return 2
    if argv[0] == "sweep":
        from inasim import sweep as mod
    elif argv[0] == "compare":
        from inasim import compare as mod
    else:
        from inasim import fidelity as mod
    return mod.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
