#!/usr/bin/env python3
"""The checker's mutation score: applies each one-line mutant of the upstream
P4 source (a JSON list written by generate.py) to a temporary copy of the
checkout, runs `inasim-p4 check PROGRAM --p4-src COPY --no-drift`, and counts
the mutants the check catches (exit 1: a mismatch between the model and the
mutated source; exit 2: the reader refuses the mutated source). A mutant the
reader finds is not valid P4 (exit 2, "not valid P4": P4_16's grammar or
width rules, p4model/tools/p4types.h) is stillborn: no compiler accepts it,
so it stands for no program and is left out of the score, which is caught /
(mutants - stillborn). A survivor (exit 0) must carry a written reason
("survives") saying why it cannot matter; a reason on a mutant that is caught
or stillborn is stale. See README.md here.

  run.py --mutants p4sgd.json --inasim-p4 build/inasim-p4 [--p4-src DIR] [--fetch DIR]

The source: --p4-src, else $INASIM_P4_SRC/PROGRAM, else a clone in --fetch.

Exit: 0 score >= --min-score and every survivor explained; 1 otherwise;
2 bad input; 77 the upstream source is not available (a skip for CTest).
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def fail(msg):
    print(f"run.py: {msg}", file=sys.stderr)
    sys.exit(2)


def fetch(upstream, into):
    """A checkout of upstream["repo"] at upstream["commit"] in `into` (cloned once), or SKIP."""
    if os.path.isdir(os.path.join(into, ".git")):
        return into
    os.makedirs(os.path.dirname(os.path.abspath(into)), exist_ok=True)
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0")
    try:
        subprocess.run(["git", "clone", "--quiet", "--no-checkout", upstream["repo"], into], check=True, env=env,
                       timeout=300, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        subprocess.run(["git", "-C", into, "checkout", "--quiet", upstream["commit"]], check=True, env=env, timeout=120,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as e:
        shutil.rmtree(into, ignore_errors=True)
        err = getattr(e, "stderr", b"") or b""
        return skipped(f"run.py: cannot fetch {upstream['repo']} at {upstream['commit']}: "
                       f"{err.decode(errors='replace').strip() or e}; skipped")
    return into


def apply(src_root, m, into):
    """Copies the checkout's file tree (not .git) to `into` and applies mutant m."""
    shutil.copytree(src_root, into, ignore=shutil.ignore_patterns(".git"))
    path = os.path.join(into, m["file"])
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    line = lines[m["line"] - 1]
    col = m["column"]
    if line[col:col + len(m["from"])] != m["from"]:
        fail(f"{m['id']}: line {m['line']} column {col} is not {m['from']!r} (a list for another commit?)")
    lines[m["line"] - 1] = line[:col] + m["to"] + line[col + len(m["from"]):]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def run_one(args, doc, src_root, m):
    with tempfile.TemporaryDirectory(prefix="inasim-mutant-") as tmp:
        copy = os.path.join(tmp, "src")
        apply(src_root, m, copy)
        p = subprocess.run([args.inasim_p4, "check", doc["program"], "--p4-src", copy, "--no-drift",
                            "--inputs", str(args.inputs)], capture_output=True, text=True, timeout=900)
    verdict = {0: "survived", 1: "caught", 2: "refused"}.get(p.returncode, f"error {p.returncode}")
    if p.returncode == 2 and "not valid P4" in p.stderr:
        verdict = "stillborn"
    why = ""
    if p.returncode == 1:
        why = next((l.strip() for l in p.stdout.splitlines() if l.strip().startswith("MISMATCH")), "")
    elif verdict == "stillborn":
        why = next(l.strip() for l in p.stderr.splitlines() if "not valid P4" in l)
    elif p.returncode != 0:
        why = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
    return m, verdict, why


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mutants", required=True)
    ap.add_argument("--inasim-p4", required=True)
    ap.add_argument("--p4-src", help="the upstream checkout at the list's commit")
    ap.add_argument("--fetch", help="without --p4-src or INASIM_P4_SRC: clone the upstream here when missing "
                                    "(needs network; a failed clone is a skip)")
    ap.add_argument("--inputs", type=int, default=50000, help="inasim-p4 check --inputs per mutant")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--min-score", type=float, default=None,
                    help="the floor (default: the list's min_score, else 0.9)")
    ap.add_argument("--score-file", help="also write the score line (or why there is none) here")
    args = ap.parse_args()
    status = run(args)
    if args.score_file and _SCORE:
        with open(args.score_file, "w", encoding="utf-8") as f:
            f.write(_SCORE[-1] + "\n")
    return status


_SCORE = []  # the last line worth keeping: the score, or why it was skipped


def skipped(msg):
    print(msg, file=sys.stderr)
    _SCORE.append(msg)
    return SKIP


def run(args):
    try:
        with open(args.mutants, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{args.mutants}: {e}")
    if args.p4_src:
        src_root = args.p4_src
    elif os.environ.get("INASIM_P4_SRC"):
        src_root = os.path.join(os.environ["INASIM_P4_SRC"], doc["program"])
    elif args.fetch:
        src_root = fetch(doc["upstream"], args.fetch)
        if src_root == SKIP:
            return SKIP
    else:
        return skipped(f"run.py: {doc['program']}: no upstream source (--p4-src, --fetch or INASIM_P4_SRC); skipped")
    files = doc["file"] if isinstance(doc["file"], list) else [doc["file"]]
    missing = [f for f in files if not os.path.isfile(os.path.join(src_root, f))]
    if missing:
        return skipped(f"run.py: {src_root}/{missing[0]} not found; skipped")
    if not os.access(args.inasim_p4, os.X_OK):
        fail(f"--inasim-p4 {args.inasim_p4}: not an executable")
    # The unmutated source must pass, or every mutant would look caught.
    base = subprocess.run([args.inasim_p4, "check", doc["program"], "--p4-src", src_root, "--no-drift",
                           "--inputs", str(args.inputs)], capture_output=True, text=True)
    if base.returncode != 0:
        print(base.stdout + base.stderr)
        print("run.py: the unmutated source does not pass; no score", file=sys.stderr)
        _SCORE.append(f"{doc['program']}: the unmutated source does not pass the check; no score")
        return 1
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda m: run_one(args, doc, src_root, m), doc["mutants"]))
    caught = sum(1 for _, v, _ in results if v in ("caught", "refused"))
    stillborn = sum(1 for _, v, _ in results if v == "stillborn")
    valid = len(results) - stillborn
    unexplained, stale = [], []
    where = files[0] if len(files) == 1 else f"{len(files)} files"
    print(f"mutation score of inasim-p4 check {doc['program']} against {where} "
          f"({doc['upstream']['commit'][:7]}), {len(results)} one-line mutants, --inputs {args.inputs}:")
    for m, verdict, why in results:
        text = f"{m['from']!r} -> {m['to']!r}"
        place = f"line {m['line']:>4}" if len(files) == 1 else f"{os.path.basename(m['file'])}:{m['line']}"
        print(f"  {m['id']}  {m['operator']:<10} {place}  {text:<44} {verdict}")
        if verdict == "stillborn":
            print(f"        {why.removeprefix('inasim-p4: ')}")
        if verdict == "survived":
            if m.get("survives"):
                print(f"        survives: {m['survives']}")
            else:
                unexplained.append(m["id"])
        elif m.get("survives"):
            stale.append(m["id"])
        if verdict.startswith("error"):
            unexplained.append(m["id"])
    score = caught / valid if valid else 0.0
    survivors = valid - caught
    line = (f"{doc['program']}: {caught} of {valid} valid mutants caught ({100 * score:.1f} %); {survivors} survive, "
            f"{survivors - len([i for i in unexplained])} of them with a written reason; {stillborn} stillborn "
            f"(not valid P4, left out); over all {len(results)}: {100 * caught / max(1, len(results)):.1f} %")
    print(line)
    _SCORE.append(line)
    if args.min_score is None:
        args.min_score = float(doc.get("min_score", 0.9))
        if "min_score_note" in doc:
            print(f"  floor {100 * args.min_score:.1f} %: {doc['min_score_note']}")
    ok = score >= args.min_score and not unexplained and not stale
    if unexplained:
        print(f"  survivors without a reason (add \"survives\" to {args.mutants}): {', '.join(unexplained)}")
    if stale:
        print(f"  caught but marked \"survives\" (drop the reason): {', '.join(stale)}")
    if score < args.min_score:
        print(f"  score below {100 * args.min_score:.1f} %")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
