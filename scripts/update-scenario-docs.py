#!/usr/bin/env python3
"""Writes docs/SCENARIO.md's key tables from the scenario's declarations.

    /usr/bin/python3 scripts/update-scenario-docs.py [--check] [--inasim build/inasim] [docs/SCENARIO.md]

Each key of a scenario is declared once in C++ (spec::Section: the scenario
core's in src/ina/scenario-sections*.cc and scenario-workload.cc, each
protocol's in protocols/<name>/host/spec.cc). `inasim schema --markdown`
prints every declared section's table in a region

    <!-- generated: NAME -->
    | key | type | unit | default | allowed | meaning |
    ...
    <!-- end generated -->

and this script replaces the body of each such region of the docs with it;
the prose around the regions stays as written. With --check it writes
nothing and exits 1 naming every region that differs, is missing from the
docs, or names no section (tests/python/test_scenario_schema.py runs it).
"""

import argparse
import re
import subprocess
import sys
from pathlib import Path

REGION = re.compile(r"<!-- generated: (?P<name>[^ ]+) -->\n(?P<body>.*?)<!-- end generated -->\n", re.S)


def regions(text):
    """{name: body} of every generated region, in order of appearance."""
    found = {}
    for m in REGION.finditer(text):
        if m.group("name") in found:
            raise ValueError(f"region {m.group('name')} appears twice")
        found[m.group("name")] = m.group("body")
    return found


def generated(inasim):
    """{name: table} as the code declares them (`inasim schema --markdown`)."""
    out = subprocess.run([inasim, "schema", "--markdown"], capture_output=True, text=True, check=True).stdout
    return regions(out)


def problems(doc_text, tables):
    """What differs between the docs' regions and the declared tables."""
    have = regions(doc_text)
    found = [f"{name}: missing from the docs (add a <!-- generated: {name} --> region)"
             for name in tables if name not in have]
    found += [f"{name}: no section is declared with this name" for name in have if name not in tables]
    found += [f"{name}: differs from the declaration" for name in have
              if name in tables and have[name] != tables[name]]
    return found


def splice(doc_text, tables):
    """The docs with every known region's body replaced by its table."""
    def body(m):
        name = m.group("name")
        return f"<!-- generated: {name} -->\n{tables.get(name, m.group('body'))}<!-- end generated -->\n"
    return REGION.sub(body, doc_text)


def main():
    root = Path(__file__).resolve().parents[1]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if the docs are out of date")
    ap.add_argument("--inasim", default=str(root / "build" / "inasim"), help="the built inasim (default build/inasim)")
    ap.add_argument("doc", nargs="?", default=str(root / "docs" / "SCENARIO.md"))
    args = ap.parse_args()
    doc = Path(args.doc)
    text = doc.read_text(encoding="utf-8")
    tables = generated(args.inasim)
    if args.check:
        found = problems(text, tables)
        for p in found:
            print(f"{doc}: {p}", file=sys.stderr)
        return 1 if found else 0
    new = splice(text, tables)
    if new != text:
        doc.write_text(new, encoding="utf-8")
    missing = [p for p in problems(new, tables)]
    for p in missing:
        print(f"{doc}: {p}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
