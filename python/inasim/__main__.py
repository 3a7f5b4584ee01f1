"""`python3 -m inasim sweep|compare ...` (what `inasim sweep` and `inasim compare` run)."""
import sys


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in ("sweep", "compare"):
        print("usage: python3 -m inasim sweep SWEEP.json [...] | compare SCENARIO.json --protocols ring[,...] [...]",
              file=sys.stderr)
        return 2
    if argv[0] == "sweep":
        from inasim import sweep as mod
    else:
        from inasim import compare as mod
    return mod.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
