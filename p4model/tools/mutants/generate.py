#!/usr/bin/env python3
"""Generates one-line mutants of an upstream P4 program for the checker's
mutation score (p4model/tools/mutants/README.md).

Reads the upstream file (never copied here), finds every site each mutation
operator applies to, and draws a fixed number per operator with a fixed seed,
so the list is reproducible from the same source. Writes JSON: each mutant is
a file, a line, a column, the text there and its replacement; the runner
(run.py) applies it to a temporary copy of the checkout.

  generate.py --p4-src DIR --file p4/p4fpga.p4 --program p4sgd --out p4sgd.json \
      --repo https://github.com/RC4ML/P4FPGA --commit 6dfbdf224f37ab71aef0a9a7455ff6e82d3331f3

A program in several files takes --file once per file; each file's sites are
drawn from on their own (--per-operator per operator and file).
"""
import argparse
import json
import random
import re
import sys

# Operator -> (regex of the text to replace, function giving the replacement).
# Lines are read outside comments and #include lines only.
NUMBER = re.compile(r"(?<![\w.])(\d+)(?![\w.])")
RELATIONAL = re.compile(r"(==|!=|>=|<=)")
LOGICAL = re.compile(r"((?<!&)&&(?!&)|\|\|)")
ARITHMETIC = re.compile(r"(?<=\s)([+%|&])(?=\s)")
BOOLEAN = re.compile(r"\b(true|false)\b")
# Per program: a name and the sibling it is swapped with (either way).
SWAPS_OF = {}
SWAPS_OF["p4sgd"] = [
    ("status0", "status1"), ("add_0", "add_1"), ("clr_0", "clr_1"),
    ("map_state", "counter_state"), ("parse_load", "parse_ethernet"),
    ("node_map_merge_0", "node_map_clear_0"), ("node_map_merge_1", "node_map_clear_1"),
    ("count_0", "get_counter_0"), ("count_1", "get_counter_1"),
    ("ingress_port", "ingress_mac_tstamp"), ("multicast", "send"),
    ("value1", "value2"), ("value3", "value4"), ("value5", "value6"), ("value7", "value8"),
    ("slot_state", "slot"), ("bitmap", "seq_no"),
]
# SwitchML: the pairs its passes and headers are built of.
SWAPS_OF["switchml"] = [
    ("d0", "d1"), ("e0", "e1"), ("first", "second"), ("src_port", "dst_port"), ("src_addr", "dst_addr"),
    ("read0_action", "read1_action"), ("value0", "value1"), ("value0_out", "value1_out"),
    ("first_packet", "last_packet"), ("worker_bitmap", "worker_bitmap_before"),
    ("CONSUME1", "CONSUME2"), ("HARVEST1", "HARVEST2"), ("HARVEST5", "HARVEST6"),
    ("count_broadcast", "count_retransmit"), ("count_consume", "count_recirculate"),
    ("ingress_port", "ingress_mac_tstamp"), ("mgid", "job_number"), ("tsi", "msg_id"),
]


def swap_operator(program):
    """The name-swap regex and table of `program` (none when it has no list)."""
    swaps = SWAPS_OF.get(program, [])
    if not swaps:
        return None, {}
    regex = re.compile(r"\b(" + "|".join(re.escape(a) for pair in swaps for a in pair) + r")\b")
    return regex, {a: b for x, y in swaps for a, b in ((x, y), (y, x))}
STATEMENT = re.compile(r"^(\s*)([A-Za-z_][\w.]*\s*(=[^=].*)?(\(.*\))?\s*;)\s*$")
TABLE_SIZE = re.compile(r"^\s*size\s*=\s*[\w +*]+;\s*$")
REL_TO = {"==": "!=", "!=": "==", ">=": ">", "<=": "<"}
ARITH_TO = {"+": "-", "%": "/", "|": "&", "&": "|"}


def code_lines(text):
    """(line number, text) of each line, with // and /* */ comments blanked."""
    out, in_block = [], False
    for n, line in enumerate(text.split("\n"), 1):
        clean, i = "", 0
        while i < len(line):
            if in_block:
                end = line.find("*/", i)
                if end < 0:
                    clean += " " * (len(line) - i)
                    i = len(line)
                else:
                    clean += " " * (end + 2 - i)
                    i, in_block = end + 2, False
            elif line.startswith("/*", i):
                in_block = True
            elif line.startswith("//", i):
                clean += " " * (len(line) - i)
                i = len(line)
            else:
                clean += line[i]
                i += 1
        if clean.strip() and not clean.lstrip().startswith("#include"):
            out.append((n, clean))
    return out


def dead_state_lines(lines):
    """Lines of parser states no transition from `start` reaches: a mutant
    there cannot change what any packet does, so none is generated."""
    states, current, depth, parser = {}, None, 0, None
    for n, line in lines:
        m = re.match(r"\s*parser\s+(\w+)", line)
        if m:
            parser = m.group(1)
        m = re.match(r"\s*state\s+(\w+)", line)
        if m and current is None:
            current, depth = (parser, m.group(1)), 0
            states[current] = {"lines": [], "next": set()}
        if current is not None:
            states[current]["lines"].append(n)
            for t in re.finditer(r"\btransition\s+(\w+)\s*;|:\s*(\w+)\s*;", line):
                states[current]["next"].add(t.group(1) or t.group(2))
            depth += line.count("{") - line.count("}")
            if depth <= 0 and "}" in line:
                current = None
    dead = set()
    for p in {p for p, _ in states}:
        seen, todo = set(), ["start"]
        while todo:
            st = todo.pop()
            if st in seen or (p, st) not in states:
                continue
            seen.add(st)
            todo.extend(states[(p, st)]["next"])
        for (q, st), info in states.items():
            if q == p and st not in seen:
                dead.update(info["lines"])
    return dead


def sites(lines, all_lines, swap=(None, {})):
    """Every (operator, line, column, from, to) the operators apply to, on
    `lines`; `all_lines` gives the headers an extract may name; `swap` the
    program's name swaps (swap_operator)."""
    # Each parser's own states: a transition goes to a state of its parser.
    parser_of, states_of, current = {}, {}, None
    for n, line in lines:
        m = re.match(r"\s*parser\s+(\w+)", line)
        current = m.group(1) if m else (None if re.match(r"\s*control\b", line) else current)
        parser_of[n] = current
        for m in re.finditer(r"\bstate\s+(\w+)", line):
            states_of.setdefault(current, {"accept", "reject"}).add(m.group(1))
    headers = sorted({m.group(1) for _, line in all_lines for m in re.finditer(r"extract\((hdr\.\w+)\)", line)})
    for n, line in lines:
        # A table's `size` is its capacity: the entries installed, fewer,
        # decide every packet, so a mutant there cannot change one.
        if TABLE_SIZE.match(line):
            continue
        states = sorted(states_of.get(parser_of[n], set()))
        for m in re.finditer(r"\btransition\s+(\w+)\s*;|^\s*[\w ,&()]+:\s*(\w+)\s*;", line):
            target = m.group(1) or m.group(2)
            if target in states:
                col = m.start(1) if m.group(1) else m.start(2)
                yield "transition", n, col, target, states[(states.index(target) + 1) % len(states)]
        for m in re.finditer(r"extract\((hdr\.\w+)\)", line):
            if len(headers) > 1:
                yield "extract", n, m.start(1), m.group(1), headers[(headers.index(m.group(1)) + 1) % len(headers)]
        for m in NUMBER.finditer(line):
            v = int(m.group(1))
            yield "number", n, m.start(1), m.group(1), str(v + 1)
        if re.search(r"\bif\s*\(|select|result|\?", line):
            for m in RELATIONAL.finditer(line):
                yield "relational", n, m.start(1), m.group(1), REL_TO[m.group(1)]
            for m in re.finditer(r"(?<![<>=!&|])([<>])(?![<>=])", line):
                if not re.search(r"\b(bit|int)\s*$", line[:m.start()]) and "bit<" not in line:
                    yield "relational", n, m.start(1), m.group(1), m.group(1) + "="
        for m in LOGICAL.finditer(line):
            yield "logical", n, m.start(1), m.group(1), "||" if m.group(1) == "&&" else "&&"
        for m in ARITHMETIC.finditer(line):
            yield "arithmetic", n, m.start(1), m.group(1), ARITH_TO[m.group(1)]
        for m in BOOLEAN.finditer(line):
            yield "boolean", n, m.start(1), m.group(1), "false" if m.group(1) == "true" else "true"
        if swap[0] is not None:
            for m in swap[0].finditer(line):
                yield "name", n, m.start(1), m.group(1), swap[1][m.group(1)]
        m = STATEMENT.match(line)
        if m and not re.match(r"\s*(transition|return|exit|typedef|const|#)", line):
            yield "delete", n, m.start(2), m.group(2), ";"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--p4-src", required=True)
    ap.add_argument("--file", required=True, action="append", help="a file of the program, under --p4-src; repeatable")
    ap.add_argument("--program", required=True)
    ap.add_argument("--out", required=True, help="the list; its \"named\" mutants and \"survives\" reasons are kept")
    ap.add_argument("--repo", required=True, help="the upstream repository's URL (run.py --fetch clones it)")
    ap.add_argument("--commit", required=True, help="the commit the list is made for")
    ap.add_argument("--per-operator", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    swap = swap_operator(a.program)
    mutants, all_sites, dead_lines = [], {}, 0
    for path in a.file:
        try:
            text = open(f"{a.p4_src}/{path}", encoding="utf-8").read()
        except OSError as e:
            print(f"generate.py: {e}", file=sys.stderr)
            return 2
        lines = code_lines(text)
        dead = dead_state_lines(lines)
        dead_lines += len(dead)
        by_op = {}
        for s in sites([(n, line) for n, line in lines if n not in dead], lines, swap):
            by_op.setdefault(s[0], []).append(s)
        for op in sorted(by_op):
            all_sites[op] = all_sites.get(op, 0) + len(by_op[op])
            chosen = sorted(rng.sample(by_op[op], min(a.per_operator, len(by_op[op]))), key=lambda s: (s[1], s[2]))
            for _, line, col, old, new in chosen:
                mutants.append({"operator": op, "file": path, "line": line, "column": col, "from": old, "to": new})
    # Mutants named by hand (operator "named", e.g. the cases an issue lists)
    # are kept from the existing list, with their "survives" reasons.
    try:
        with open(a.out, encoding="utf-8") as f:
            old = json.load(f)
        mutants += [m for m in old.get("mutants", []) if m.get("operator") == "named"]
        floor = {k: old[k] for k in ("min_score", "min_score_note") if k in old}
        kept = {(m["file"], m["line"], m["column"], m["to"]): m.get("survives") for m in old.get("mutants", [])}
        for m in mutants:
            if kept.get((m["file"], m["line"], m["column"], m["to"])):
                m["survives"] = kept[(m["file"], m["line"], m["column"], m["to"])]
    except (OSError, ValueError):
        floor = {}
    order = {path: i for i, path in enumerate(a.file)}
    mutants.sort(key=lambda m: (order.get(m["file"], len(order)), m["line"], m["column"], m["operator"]))
    for i, m in enumerate(mutants, 1):
        m["id"] = f"{a.program}-{i:03d}"
    doc = {"program": a.program, "file": a.file[0] if len(a.file) == 1 else a.file,
           "upstream": {"repo": a.repo, "commit": a.commit}, "seed": a.seed, "per_operator": a.per_operator,
           "unreachable_parser_lines": dead_lines, "sites": dict(sorted(all_sites.items())),
           **floor, "mutants": mutants}
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"wrote {a.out}: {len(mutants)} mutants from " + ", ".join(f"{op} {n}" for op, n in sorted(all_sites.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
