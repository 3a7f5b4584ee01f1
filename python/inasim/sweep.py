"""Parameter sweeps over INA-Sim scenarios (docs/SWEEPS.md).

A sweep file names a base scenario, fixed overrides, and a grid (cartesian
product) or an explicit list of points, each a set of `--set PATH=VALUE`
overrides; every point runs `repetitions` times with seeds seed, seed+1, ...
A point that sets `workload.protocol` gets that protocol's scenario
(inasim.compare.protocol_scenario), so the protocol can be a grid axis.
Every run is cached under OUT/cache/<key>/ (key = sha256 of the resolved
scenario and the simulator's identity: version and build), so an interrupted
or extended sweep only runs what is missing, and a rebuilt simulator runs
everything again. Runs go to local worker processes or to a Dask cluster;
the caller writes OUT/sweep.csv (one tidy row per point and repetition),
OUT/summary.csv (mean and 95 % CI per point and metric), OUT/sweep.json and,
when runs failed, OUT/failures.csv.

    python3 -m inasim.sweep SWEEP.json [--out DIR] [--jobs N]
        [--scheduler tcp://HOST:PORT] [--no-resume] [--progress auto|on|off]

    from inasim.sweep import run_sweep
    df = run_sweep("scenarios/sweeps/ring-small.json", jobs=2, progress="tqdm")

A script that calls run_sweep must do so under `if __name__ == "__main__":`:
the local workers are spawned processes, which re-import the script.

ns-3 is not thread-safe: a process runs one simulation at a time; parallelism
comes from processes (spawned workers, or Dask workers with --nthreads 1).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import copy
import dataclasses
import difflib
import functools
import hashlib
import itertools
import json
import math
import multiprocessing
import os
import signal
import sys
import threading
import time
import uuid
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import inasim
from inasim._outdir import make_out_dir, out_dir_problem, write_atomic

__all__ = [
    "SweepError",
    "SweepRunError",
    "Plan",
    "Run",
    "load_sweep",
    "plan_sweep",
    "run_sweep",
    "run_point",
    "cache_key",
    "simulator_identity",
    "flatten_metrics",
    "main",
]

#: Keys a sweep file may have (docs/SWEEPS.md).
SWEEP_KEYS = ("name", "description", "scenario", "set", "grid", "points", "repetitions", "seed", "out")

#: Columns every row of sweep.csv starts with.
FIXED_COLUMNS = ("point", "repetition", "seed", "key", "inasim_version", "build")
#: Statistics columns of summary.csv (after point, the swept paths and metric).
SUMMARY_COLUMNS = ("metric", "n", "missing", "mean", "std", "ci95_low", "ci95_high")
#: Files run_sweep writes into OUT.
OUT_FILES = ("sweep.csv", "sweep.json", "summary.csv", "failures.csv")
#: The file beside a cached run's results.json naming the simulator that made it.
IDENTITY_FILE = "identity.json"
#: Exit status of a worker process that found run_sweep called while it was
#: starting (an unguarded script): the parent turns it into MAIN_GUARD_MESSAGE.
MAIN_GUARD_EXIT = 87
MAIN_GUARD_MESSAGE = (
    "run_sweep was called while a worker process was starting: the script must guard its entry point with "
    '`if __name__ == "__main__":` because worker processes re-import it (they are spawned, not forked); '
    "call run_sweep under that guard"
)


class SweepError(ValueError):
    """Bad sweep input: unreadable or malformed sweep file, a point that fails
    scenario validation, bad options. Raised before anything runs; the CLI
    prints it on one line and exits 2."""


class SweepRunError(RuntimeError):
    """One or more runs raised (or their worker process died, or ran another
    build). The other runs' results are cached and written to the partial
    OUT/sweep.csv, the failed ones to OUT/failures.csv; running the sweep
    again resumes. CLI exit 1. `table`, `summary` and `failures` hold the
    three tables as DataFrames (None when the sweep was stopped before
    writing them)."""

    def __init__(self, message: str, table: Any = None, summary: Any = None, failures: Any = None):
        super().__init__(message)
        self.table, self.summary, self.failures = table, summary, failures


@dataclasses.dataclass
class Run:
    """One (point, repetition) of a sweep."""

    point: int  #: index of the point (0-based, in expansion order)
    repetition: int  #: 0 .. repetitions-1
    seed: int  #: the run's seed (base seed + repetition)
    key: str  #: cache key: sha256 of the resolved scenario and the simulator identity
    values: Dict[str, Any]  #: the point's overrides, path -> value as given
    resolved: Dict[str, Any]  #: the resolved scenario (every default filled in)
    #: the point's overrides not applied: under the section of a protocol the point does not use
    not_applied: List[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Plan:
    """A validated, expanded sweep: what run_sweep would run."""

    name: str
    definition: Dict[str, Any]  #: the sweep definition as given
    source: Optional[str]  #: absolute path of the sweep file (None for a dict)
    base_dir: str  #: directory the scenario's relative paths resolve against
    out: str  #: absolute output directory
    paths: List[str]  #: swept paths, in column order
    runs: List[Run]  #: one per (point, repetition), points outer
    identity: Dict[str, str]  #: simulator_identity() the keys were made with

    @property
    def cache_dir(self) -> str:
        return os.path.join(self.out, "cache")

    def result_dir(self, key: str) -> str:
        return os.path.join(self.out, "cache", key)


# ------------------------------------------------------------------ helpers


def _sha256_json(doc: Any) -> str:
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def simulator_identity() -> Dict[str, str]:
    """{"inasim_version", "build"} of the simulator this process loaded: the
    version names the commit, and build (inasim.build_id(), a hash of the
    extension's bytes) tells apart two builds of one dirty tree."""
    return {"inasim_version": inasim.version(), "build": inasim.build_id()}


def _identity_label(identity: Dict[str, Any]) -> str:
    return f'{identity.get("inasim_version") or "?"}/{identity.get("build") or "unknown build"}'


def cache_key(resolved: Dict[str, Any], identity: Optional[Dict[str, str]] = None) -> str:
    """sha256 of canonical JSON (sorted keys, no spaces) of {"scenario":
    resolved, "inasim_version", "build"} (default: this process's
    simulator_identity()). Results of another simulator build are other
    results: a rebuilt simulator must not be answered from the cache."""
    return _sha256_json({"scenario": resolved, **(identity if identity is not None else simulator_identity())})


def scenario_hash(resolved: Dict[str, Any]) -> str:
    """sha256 of the resolved scenario alone: the cache key before the key
    named the simulator, and what identity.json records to find a scenario's
    results of other builds."""
    return _sha256_json(resolved)


def flatten_metrics(results: Dict[str, Any]) -> Dict[str, Any]:
    """Scalar metrics of a results.json document: nested keys joined with '.',
    the top-level `scenario` echo skipped, lists and nulls skipped; numbers,
    bools and strings kept."""
    out: Dict[str, Any] = {}

    def walk(node: Dict[str, Any], prefix: str) -> None:
        for k, v in node.items():
            name = f"{prefix}{k}"
            if isinstance(v, dict):
                walk(v, name + ".")
            elif isinstance(v, (bool, int, float, str)):
                out[name] = v

    walk({k: v for k, v in results.items() if k != "scenario"}, "")
    return out


def _format_value(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def _describe(values: Dict[str, Any]) -> str:
    return ", ".join(f"{p}={_format_value(v)}" for p, v in values.items())


def _cell(v: Any) -> Any:
    """A swept value as a sweep.csv cell: scalars as given, JSON otherwise."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


def _read_json(path: str) -> Optional[Dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _read_cached(result_dir: str) -> Optional[Dict[str, Any]]:
    """Metrics of a finished run, or None when it is absent or unreadable.
    The directory's name (the key) already names the simulator build."""
    doc = _read_json(os.path.join(result_dir, "results.json"))
    return flatten_metrics(doc) if doc is not None else None


def _other_builds(plan: "Plan", exclude: "set[str] | None" = None) -> List[str]:
    """The identities (version/build) of the cached results in OUT/cache of
    this sweep's scenarios made by another simulator build, one per result:
    they are not used (their keys differ), and the caller says so. A result
    cached before keys named the simulator is found by its directory name
    (then the scenario's hash) and has no build."""
    try:
        names = os.listdir(plan.cache_dir)
    except OSError:
        return []
    ours = {r.key for r in plan.runs}
    hashes = {scenario_hash(r.resolved) for r in plan.runs}
    found = []
    for name in sorted(names):
        if name.startswith(".") or name in ours or name in (exclude or ()):
            continue
        d = plan.result_dir(name)
        stamp = _read_json(os.path.join(d, IDENTITY_FILE))
        if stamp is not None:
            other = {k: stamp.get(k) for k in plan.identity} != plan.identity
            if other and stamp.get("scenario_sha256") in hashes and os.path.isfile(os.path.join(d, "results.json")):
                found.append(_identity_label(stamp))
        elif name in hashes:
            results = _read_json(os.path.join(d, "results.json"))
            if results is not None:
                found.append(_identity_label({"inasim_version": results.get("inasim_version")}))
    return found


def _reuse(plan: "Plan", by_key: Dict[str, List["Run"]], metrics: Dict[str, Dict[str, Any]],
           builds: Sequence[str]) -> Dict[str, Tuple[str, Dict[str, str]]]:
    """Answers runs not cached from results of the same scenario by a build
    in `builds` (run_sweep's reuse_builds), into `metrics`; returns planned
    key -> (the result's directory name, its {inasim_version, build})."""
    for b in builds:
        if not isinstance(b, str) or len(b) != 16 or any(c not in "0123456789abcdef" for c in b):
            raise SweepError(f"reuse_builds: {b!r} is not a build id (16 hex digits, inasim.build_id())")
    if not builds:
        return {}
    try:
        names = sorted(os.listdir(plan.cache_dir))
    except OSError:
        return {}
    by_scenario: Dict[str, Tuple[str, Dict[str, str]]] = {}
    for name in names:
        stamp = _read_json(os.path.join(plan.result_dir(name), IDENTITY_FILE))
        if stamp is None or stamp.get("build") not in builds or stamp.get("scenario_sha256") in by_scenario:
            continue
        by_scenario[stamp["scenario_sha256"]] = (name, {k: stamp.get(k) for k in plan.identity})
    reused = {}
    for key, runs in by_key.items():
        hit = None if key in metrics else by_scenario.get(scenario_hash(runs[0].resolved))
        m = _read_cached(plan.result_dir(hit[0])) if hit else None
        if m is not None:
            metrics[key] = m
            reused[key] = hit
    if reused:
        labels = sorted({_identity_label(i) for _, i in reused.values()})
        print(f"sweep: {len(reused)} results of {', '.join(labels)} reused (reuse_builds)", file=sys.stderr, flush=True)
    return reused


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_path(where: str, path: Any) -> str:
    if not isinstance(path, str) or not path:
        raise SweepError(f"{where}: a path must be a non-empty string, got {json.dumps(path)}")
    if "=" in path or any(not seg for seg in path.split(".")):
        raise SweepError(f'{where}: "{path}" is not a scenario path like workload.bytes')
    if path == "seed":
        raise SweepError(f'{where}: "seed" cannot be swept; use the sweep\'s "seed" and "repetitions"')
    return path


# ----------------------------------------------------------------- planning


class _Pairs(list):
    """A JSON object as read, before duplicate keys are looked for."""


class _Constant(str):
    """NaN, Infinity or -Infinity in the file (Python's json accepts them; JSON does not)."""


def _json_tree(node: Any, path: str, where: str) -> Any:
    """The parsed file with every object a dict; SweepError on the first
    duplicate key or NaN/Infinity, naming its key path."""
    if isinstance(node, _Pairs):
        out: Dict[str, Any] = {}
        for k, v in node:
            if k in out:
                # json.load would keep the last silently: one of two grid
                # entries would vanish from the sweep without a word.
                raise SweepError(f'{where}: {path or "top level"}: duplicate key "{k}"')
            out[k] = _json_tree(v, inasim._key_path(path, k), where)
        return out
    if isinstance(node, list):
        return [_json_tree(v, f"{path}[{i}]", where) for i, v in enumerate(node)]
    if isinstance(node, _Constant):
        raise SweepError(f"{where}: {path or 'top level'}: {node} is not valid JSON (use a finite number)")
    return node


def load_sweep(path: "str | os.PathLike[str]") -> Dict[str, Any]:
    """Reads a sweep file (JSON object); raises SweepError."""
    where = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f, object_pairs_hook=_Pairs, parse_constant=_Constant)
    except OSError as e:
        raise SweepError(f"{where}: cannot read: {e.strerror or e}") from None
    except ValueError as e:
        raise SweepError(f"{where}: not valid JSON: {e}") from None
    doc = _json_tree(raw, "", where)
    if not isinstance(doc, dict):
        raise SweepError(f"{where}: a sweep file must be a JSON object")
    return doc


def _check_definition(d: Dict[str, Any], where: str) -> None:
    for k in d:
        if k not in SWEEP_KEYS:
            close = difflib.get_close_matches(k, SWEEP_KEYS, n=1)
            hint = f'did you mean "{close[0]}"? ' if close else ""
            raise SweepError(f'{where}: unknown key "{k}" ({hint}known keys: {", ".join(SWEEP_KEYS)})')
    if "scenario" not in d:
        raise SweepError(f'{where}: "scenario" is required (a scenario file path or an inline object)')
    if not isinstance(d["scenario"], (str, dict)) or d["scenario"] == "":
        raise SweepError(f'{where}: "scenario" must be a path (string) or an inline scenario object')
    if "name" in d:
        n = d["name"]
        if not isinstance(n, str) or not n or n in (".", "..") or "/" in n or "\\" in n:
            raise SweepError(f'{where}: "name" must be a non-empty string usable as a directory name')
    if "description" in d and not isinstance(d["description"], str):
        raise SweepError(f'{where}: "description" must be a string')
    if "set" in d:
        s = d["set"]
        if not isinstance(s, list) or not all(isinstance(x, str) for x in s):
            raise SweepError(f'{where}: "set" must be a list of "PATH=VALUE" strings')
    has_grid, has_points = "grid" in d, "points" in d
    if has_grid == has_points:
        raise SweepError(f'{where}: exactly one of "grid" and "points" is required')
    if has_grid:
        g = d["grid"]
        if not isinstance(g, dict) or not g:
            raise SweepError(f'{where}: "grid" must be a non-empty object: path -> list of values')
        for p, vals in g.items():
            _check_path(f"{where}: grid", p)
            if not isinstance(vals, list) or not vals:
                raise SweepError(f'{where}: grid "{p}" must be a non-empty list of values')
    else:
        pts = d["points"]
        if not isinstance(pts, list) or not pts:
            raise SweepError(f'{where}: "points" must be a non-empty list of objects (path -> value)')
        for i, pt in enumerate(pts):
            if not isinstance(pt, dict):
                raise SweepError(f"{where}: points[{i}] must be an object (path -> value)")
            for p in pt:
                _check_path(f"{where}: points[{i}]", p)
    if "repetitions" in d and (not _is_int(d["repetitions"]) or d["repetitions"] < 1):
        raise SweepError(f'{where}: "repetitions" must be an integer >= 1')
    if "seed" in d and (not _is_int(d["seed"]) or d["seed"] < 1):
        raise SweepError(f'{where}: "seed" must be a positive integer')
    if "out" in d and (not isinstance(d["out"], str) or not d["out"]):
        raise SweepError(f'{where}: "out" must be a non-empty path string')


def _expand(d: Dict[str, Any]) -> "tuple[List[str], List[Dict[str, Any]]]":
    """(swept paths in column order, one {path: value} per point)."""
    if "grid" in d:
        paths = list(d["grid"])
        return paths, [dict(zip(paths, combo)) for combo in itertools.product(*(d["grid"][p] for p in paths))]
    paths: List[str] = []
    for pt in d["points"]:
        paths.extend(p for p in pt if p not in paths)
    return paths, [dict(pt) for pt in d["points"]]


PROTOCOL_PATH = "workload.protocol"


@functools.lru_cache(maxsize=None)
def _protocol_sections() -> Dict[str, "frozenset[str]"]:
    """Registered protocol -> the workload sections it reads (its own and,
    e.g. PANAMA's workload.ring, those it also reads), from the build's
    protocol registry (protocols/<name>/protocol.json)."""
    from inasim import compare

    return {m["name"]: frozenset(s for s in [m.get("section"), *m.get("also_reads", [])] if s)
            for m in compare.registry()}


def _protocol_edit(doc: Dict[str, Any], protocol: Any, label: str) -> "tuple[Dict[str, Any], frozenset]":
    """(doc edited for `protocol` by inasim.compare.protocol_scenario, the
    sections that protocol reads). SweepError for a name that is not in
    compare.PROTOCOLS.

    protocol_scenario keeps the workload keys that are no protocol's section
    (workload.jobs, workload.job_split): they belong to the experiment, not
    to the protocol, so a grid over the protocol of a many-jobs scenario
    compares the protocols on the same jobs."""
    from inasim import compare

    if not isinstance(protocol, str) or protocol not in compare.PROTOCOLS:
        raise SweepError(f"{label}: {PROTOCOL_PATH}: unknown protocol {json.dumps(protocol)} "
                         f"(known protocols: {', '.join(compare.PROTOCOLS)})")
    sections = _protocol_sections()
    every_section = frozenset().union(*sections.values())
    edited = compare.protocol_scenario(doc, protocol)
    w = edited["workload"]
    # A variant registered by hand ("switchml-64") reads its base protocol's sections.
    return edited, sections.get(w.get("protocol"), frozenset()) | (every_section & set(w))


def _set_protocol(definition: Dict[str, Any], doc: Dict[str, Any], where: str) -> Optional[Dict[str, Any]]:
    """When the sweep's fixed `set` names workload.protocol: doc (the base
    after `set`) edited for it (see _point_document); else None."""
    if not any(s.split("=", 1)[0] == PROTOCOL_PATH for s in definition.get("set", [])):
        return None
    w = doc.get("workload") if isinstance(doc.get("workload"), dict) else {}
    edited, _ = _protocol_edit(doc, w.get("protocol"), f'{where}: "set"')
    return edited


def _point_document(
    doc: Dict[str, Any], values: Dict[str, Any], set_protocol: Optional[Dict[str, Any]], label: str
) -> "tuple[Dict[str, Any], List[str]]":
    """(the point's scenario document, its overrides not applied).

    A point that sets workload.protocol gets that protocol's scenario first
    (_protocol_edit: the other protocols' sections dropped, dtype and data
    made ones it accepts), then its other overrides, so that a point's own
    settings of its protocol survive; its overrides under the section of a
    protocol it does not use are not applied (a grid over workload.protocol
    and workload.switchml.pool_size gives the ring points no SwitchML
    section; they share one run), except null, which removes it anyway (the
    figure scripts' "workload.canary": null). Without the point naming it, a
    workload.protocol in the fixed `set` is applied the same way."""
    if PROTOCOL_PATH in values:
        point_doc, reads = _protocol_edit(doc, values[PROTOCOL_PATH], label)
        others = frozenset().union(*_protocol_sections().values()) - reads
    else:
        point_doc, others = copy.deepcopy(set_protocol if set_protocol is not None else doc), frozenset()
    not_applied = []
    try:
        for p, v in values.items():
            parts = p.split(".")
            if p == PROTOCOL_PATH:
                continue
            if v is not None and len(parts) >= 2 and parts[0] == "workload" and parts[1] in others:
                not_applied.append(p)
                continue
            inasim.apply_set(point_doc, f"{p}={json.dumps(v)}")
    except inasim.ScenarioError as e:
        raise SweepError(f"{label}: {e}") from None
    return point_doc, not_applied


def plan_sweep(
    sweep: "str | os.PathLike[str] | Dict[str, Any]",
    out: "str | os.PathLike[str] | None" = None,
    *,
    base_dir: "str | os.PathLike[str] | None" = None,
) -> Plan:
    """Loads, checks, expands and validates a sweep without running anything.

    `sweep` is a sweep file path or a dict. Relative paths inside a dict
    resolve against `base_dir` (default: the current directory); inside a
    file, against the file's directory. Raises SweepError naming the first
    problem (for a point: "point 3 (workload.bytes=1026): <scenario error>").
    """
    if isinstance(sweep, dict):
        try:
            definition = inasim.to_json_value(sweep, what="top level")  # a deep copy; no NaN, no sets
        except inasim.ScenarioError as e:
            raise SweepError(f"sweep: {e}") from None
        source = None
        sweep_dir = os.path.abspath(base_dir if base_dir is not None else os.getcwd())
        where = "sweep"
        default_name = "sweep"
    else:
        source = os.path.abspath(os.fspath(sweep))
        definition = load_sweep(source)
        sweep_dir = os.path.abspath(base_dir) if base_dir is not None else os.path.dirname(source)
        where = os.fspath(sweep)
        default_name = os.path.splitext(os.path.basename(source))[0]
    _check_definition(definition, where)

    name = definition.get("name", default_name)
    if out is not None:
        out_label = f"out {os.fspath(out)}"
    elif "out" in definition:
        out_label = f'{where}: "out" {definition["out"]}'
    else:
        out_label = f"output directory {os.path.join('out', 'sweeps', name)}"
    if out is None:
        out = definition.get("out", os.path.join("out", "sweeps", name))
    out = os.path.abspath(os.fspath(out))

    scenario = definition["scenario"]
    try:
        if isinstance(scenario, str):
            scenario_path = os.path.join(sweep_dir, scenario)
            doc = inasim.load(scenario_path)
            scenario_dir = os.path.dirname(os.path.abspath(scenario_path))
        else:
            doc = copy.deepcopy(scenario)
            scenario_dir = sweep_dir
        for s in definition.get("set", []):
            inasim.apply_set(doc, s)
    except inasim.ScenarioError as e:
        raise SweepError(f"{where}: scenario: {e}") from None

    paths, points = _expand(definition)
    reps = definition.get("repetitions", 1)
    identity = simulator_identity()
    set_protocol = _set_protocol(definition, doc, where)
    runs: List[Run] = []
    for i, values in enumerate(points):
        label = f"point {i} ({_describe(values)})" if values else f"point {i}"
        point_doc, not_applied = _point_document(doc, values, set_protocol, label)
        base_seed = definition.get("seed")
        first: Optional[Dict[str, Any]] = None
        if base_seed is None:
            try:
                first = inasim.validate(copy.deepcopy(point_doc), base_dir=scenario_dir)
            except inasim.ScenarioError as e:
                raise SweepError(f"{label}: {e}") from None
            base_seed = first["seed"]
        for r in range(reps):
            if r == 0 and first is not None:
                resolved = first
            else:
                try:
                    resolved = inasim.validate(copy.deepcopy(point_doc), seed=base_seed + r, base_dir=scenario_dir)
                except inasim.ScenarioError as e:
                    rep = f", repetition {r}" if reps > 1 else ""
                    raise SweepError(f"{label}{rep}: {e}") from None
            seed = int(resolved.get("seed", base_seed + r))
            runs.append(Run(i, r, seed, cache_key(resolved, identity), values, resolved, not_applied))

    # Last, as it is the cheapest to fix; still before anything is written.
    problem = out_dir_problem(out, files=OUT_FILES, dirs=("cache",))
    if problem:
        raise SweepError(f"{out_label}: {problem}")
    return Plan(name, definition, source, scenario_dir, out, paths, runs, identity)


# ---------------------------------------------------------------- execution

_RUN_LOCK = threading.Lock()  # ns-3 is not thread-safe: one simulation per process
#: Set in a worker whose setup check raised: the C++ runner leaves ns-3's
#: global state (scheduled events, nodes) behind on that path, so nothing
#: more may be simulated in this process.
_SETUP_FAILED = False
#: What check_point returns in such a process instead of checking.
SKIPPED = "skipped: an earlier setup in this worker failed"


def check_point(resolved: Dict[str, Any], base_dir: Optional[str] = None) -> Optional[str]:
    """Builds one resolved scenario's network and workload and simulates 1 ns
    (inasim.check): None if the setup succeeds, else the ScenarioError's
    message. The task of the check that precedes every sweep's runs."""
    global _SETUP_FAILED
    with _RUN_LOCK:
        if _SETUP_FAILED:
            return SKIPPED
        try:
            inasim.check(resolved, base_dir=base_dir)
        except inasim.ScenarioError as e:
            _SETUP_FAILED = True
            return str(e)
    return None


def _worker_name() -> str:
    """The Dask worker's address, or this local process."""
    distributed = sys.modules.get("distributed")  # imported in every Dask worker; never imported here for this
    if distributed is not None:
        try:
            return distributed.get_worker().address
        except Exception:  # noqa: BLE001 - not in a Dask worker (ValueError in every version so far)
            pass
    return f"local process {os.getpid()}"


def _mismatch(worker: str, theirs: Dict[str, Any], ours: Dict[str, Any]) -> str:
    return (f"worker {worker} runs build {_identity_label(theirs)}, this client build {_identity_label(ours)} "
            "(give every worker the same build: PYTHONPATH=REPO/python:REPO/build/python, docs/SWEEPS.md)")


def run_point(
    resolved: Dict[str, Any], out: str, base_dir: Optional[str] = None, expect: Optional[Dict[str, str]] = None
) -> Dict[str, Any]:
    """Runs one resolved scenario, writes its results to OUT/cache/<key>/
    (atomically: a temporary sibling renamed into place) with identity.json
    beside results.json, and returns {"metrics": flattened metrics,
    "identity": simulator_identity() it ran with, "worker": where}. This is
    the task local workers and Dask workers run; it only depends on its
    arguments. `expect`: the caller's identity; a worker with another build
    raises before simulating (its results would be another build's)."""
    identity = simulator_identity()
    worker = _worker_name()
    if expect is not None and identity != expect:
        raise RuntimeError(_mismatch(worker, identity, expect))
    target = os.path.join(out, "cache", cache_key(resolved, identity))
    with _RUN_LOCK:
        if _SETUP_FAILED:
            raise RuntimeError(SKIPPED)
        result = inasim.run(resolved, base_dir=base_dir)
    # The C++ writer replaces only a directory of its own files (--no-resume).
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(target, IDENTITY_FILE))
    result.write(target)
    stamp = dict(identity, scenario_sha256=scenario_hash(resolved))
    write_atomic(os.path.join(target, IDENTITY_FILE), json.dumps(stamp, indent=1, sort_keys=True) + "\n")
    return {"metrics": flatten_metrics(result.json), "identity": identity, "worker": worker}


def _fmt_time(s: float) -> str:
    s = int(max(0, s))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


class _Progress:
    """`[12/40] 30% elapsed 0:12 eta 0:28` on one stderr line, redrawn with \\r."""

    def __init__(self, total: int, done: int, enabled: bool, stream=None):
        self.total, self.done, self.start_done = total, done, done
        self.enabled = enabled and total > 0
        self.stream = stream if stream is not None else sys.stderr
        self.t0 = time.monotonic()
        self.lock = threading.Lock()
        self.width = 0
        self.stop = threading.Event()
        self.thread = None
        if self.enabled:
            self.draw()
            self.thread = threading.Thread(target=self._tick, name="inasim-sweep-progress", daemon=True)
            self.thread.start()

    def _tick(self) -> None:
        while not self.stop.wait(1.0):
            self.draw()

    def draw(self) -> None:
        if not self.enabled:
            return
        with self.lock:
            elapsed = time.monotonic() - self.t0
            ran = self.done - self.start_done
            left = self.total - self.done
            if left == 0:
                eta = "0:00"
            elif ran > 0:
                eta = _fmt_time(elapsed / ran * left)
            else:
                eta = "?"
            pct = 100 * self.done // self.total
            line = f"[{self.done}/{self.total}] {pct}% elapsed {_fmt_time(elapsed)} eta {eta}"
            pad = " " * max(0, self.width - len(line))
            self.width = len(line)
            self.stream.write("\r" + line + pad)
            self.stream.flush()

    def update(self, n: int = 1) -> None:
        with self.lock:
            self.done += n
        self.draw()

    def close(self) -> None:
        if self.enabled:
            self.stop.set()
            if self.thread is not None:
                self.thread.join()
            self.draw()
            self.stream.write("\n")
            self.stream.flush()
            self.enabled = False


class _Tracker:
    """Counts the finished runs (rows of the sweep: cached, ran, failed) and
    shows them: progress None/True/False is the stderr line of _Progress,
    "tqdm" a tqdm.auto bar (a widget in Jupyter), a callable is called after
    every finished run with {"done", "total", "ran", "cached", "failed",
    "elapsed_s", "eta_s"} (eta_s None until a run has finished)."""

    def __init__(self, total: int, cached: int, progress: Any, name: str):
        self.total, self.cached, self.ran, self.failed = total, cached, 0, 0
        self.t0 = time.monotonic()
        self.callback = progress if callable(progress) else None
        self.bar: Any = None
        self.line: Optional[_Progress] = None
        if isinstance(progress, str):
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, initial=cached, unit="run", desc=f"sweep {name}", dynamic_ncols=True)
        elif self.callback is None:
            if progress is None:
                progress = bool(getattr(sys.stderr, "isatty", lambda: False)())
            self.line = _Progress(total, cached, bool(progress))

    def finished(self, rows: int, ok: bool) -> None:
        if ok:
            self.ran += rows
        else:
            self.failed += rows
        if self.line is not None:
            self.line.update(rows)
        if self.bar is not None:
            self.bar.update(rows)
        if self.callback is not None:
            self.callback(self.state())

    def state(self) -> Dict[str, Any]:
        done = self.cached + self.ran + self.failed
        elapsed = time.monotonic() - self.t0
        finished = done - self.cached
        eta = elapsed / finished * (self.total - done) if finished > 0 else None
        return {"done": done, "total": self.total, "ran": self.ran, "cached": self.cached, "failed": self.failed,
                "elapsed_s": elapsed, "eta_s": eta}

    def close(self) -> None:
        if self.line is not None:
            self.line.close()
        if self.bar is not None:
            self.bar.close()


def _check_progress(progress: Any) -> None:
    if not (progress is None or isinstance(progress, bool) or progress == "tqdm" or callable(progress)):
        raise SweepError(f'progress: expected None, True, False, "tqdm" or a callable, got {progress!r}')
    if progress == "tqdm":
        try:
            import tqdm.auto  # noqa: F401 - here, so that a missing tqdm fails before anything runs
        except ImportError:
            raise SweepError('progress="tqdm" needs the Python package tqdm (apt-get install python3-tqdm)') from None


def _refuse_if_bootstrapping() -> None:
    """run_sweep called while this process is a spawned worker importing the
    caller's script (whose run_sweep call is not under `if __name__ ==
    "__main__":`): multiprocessing's own check would fail later with a long
    RuntimeError in every worker. Exits this worker with MAIN_GUARD_EXIT,
    which the parent's run_sweep turns into SweepError(MAIN_GUARD_MESSAGE):
    an exception here would only be printed, never seen by the parent."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        print(f"inasim sweep: worker process {os.getpid()}: {MAIN_GUARD_MESSAGE}", file=sys.stderr, flush=True)
        raise SystemExit(MAIN_GUARD_EXIT)


Todo = List[Run]
Done = Callable[[Run, "concurrent.futures.Future[Any] | Any"], None]


def _label(run: Run, reps: int) -> str:
    label = f"point {run.point}" + (f" ({_describe(run.values)})" if run.values else "")
    return label + (f", repetition {run.repetition}" if reps > 1 else "")


def _remove_partial_results(cache_dir: str, pids: Sequence[int]) -> None:
    """Removes what killed workers left of their results: the C++ writer
    builds cache/.<key>.tmp-<pid> and renames it into place, and moves a
    replaced result aside as .<key>.old-<pid> (results.cc)."""
    import glob
    import shutil

    for pid in pids:
        for kind in ("tmp", "old"):
            for d in glob.glob(os.path.join(glob.escape(cache_dir), f".*.{kind}-{pid}")):
                shutil.rmtree(d, ignore_errors=True)


@contextlib.contextmanager
def _local_pool(jobs: int, tasks: int, cache_dir: str):
    """A pool of spawned worker processes that never outlives the sweep: on
    any exception (Ctrl-C, SIGTERM, a failed check) the workers are killed,
    not waited for, since a worker inside a simulation sees no signal until
    it returns to Python, which can take hours."""
    ctx = multiprocessing.get_context("spawn")  # never fork a process that may hold ns-3 state
    pool = concurrent.futures.ProcessPoolExecutor(max_workers=max(1, min(jobs, tasks)), mp_context=ctx)
    try:
        yield pool
    except BaseException:
        # Python 3.11 has no public way to stop the workers (3.14: terminate_workers()).
        procs = list((getattr(pool, "_processes", None) or {}).values())
        for p in procs:
            p.terminate()
        for p in procs:
            p.join(5)
            if p.is_alive():
                p.kill()
                p.join()
        pool.shutdown(wait=True, cancel_futures=True)
        _remove_partial_results(cache_dir, [p.pid for p in procs])
        if any(p.exitcode == MAIN_GUARD_EXIT for p in procs):
            raise SweepError(MAIN_GUARD_MESSAGE) from None
        raise
    pool.shutdown(wait=True)


def _check_setups(submit: Callable[..., Any], wait: Callable[[Any], Any], todo: Todo, plan: Plan) -> None:
    """Builds every run's network and workload before any run starts (setup
    errors such as too many jobs for the selected hosts are not found by
    plan_sweep's validation), so that a bad point deep in a grid fails at
    once with exit 2, not after the points before it ran. SweepError names
    the first bad point in sweep order."""
    reps = plan.definition.get("repetitions", 1)
    futures = {submit(check_point, run.resolved, plan.base_dir): run for run in todo}
    bad: List[tuple] = []
    for fut in wait(list(futures)):
        run = futures[fut]
        try:
            msg = fut.result()
        except Exception as e:  # noqa: BLE001 - a crashed worker: no verdict on the input
            raise SweepRunError(f"{_label(run, reps)}: the setup check failed: {type(e).__name__}: {e}") from None
        if msg is not None and msg != SKIPPED:
            bad.append((run.point, run.repetition, f"{_label(run, reps)}: {msg}"))
    if bad:
        raise SweepError(min(bad)[2])


def _make_out(plan: Plan) -> None:
    problem = make_out_dir(plan.cache_dir)
    if problem:
        raise SweepError(f"out {plan.out}: {problem}")


def _execute_local(todo: Todo, plan: Plan, jobs: int, on_done: Done) -> None:
    as_completed = concurrent.futures.as_completed
    with _local_pool(jobs, len(todo), plan.cache_dir) as pool:
        _check_setups(pool.submit, as_completed, todo, plan)
        _make_out(plan)
        futures = {pool.submit(run_point, run.resolved, plan.out, plan.base_dir, plan.identity): run for run in todo}
        for fut in as_completed(futures):
            on_done(futures[fut], fut)


def check_local(todo: Todo, plan: Plan, jobs: int) -> None:
    """The setup check of _check_setups in local processes (for Dask sweeps
    and --dry-run): a worker whose setup failed is discarded with its pool."""
    if todo:
        with _local_pool(jobs, len(todo), plan.cache_dir) as pool:
            _check_setups(pool.submit, concurrent.futures.as_completed, todo, plan)


def _dask_client(scheduler: Any):
    """(client, whether this sweep opened it)."""
    try:
        import distributed
    except ImportError:
        raise SweepError("--scheduler needs the Python package distributed (apt-get install python3-distributed)") from None
    if isinstance(scheduler, distributed.Client):
        return scheduler, False
    if isinstance(scheduler, str) or hasattr(scheduler, "scheduler_address"):
        try:
            return distributed.Client(scheduler), True
        except (OSError, TimeoutError) as e:
            raise SweepError(f"--scheduler {scheduler}: cannot connect: {e}") from None
    raise SweepError(
        f"scheduler: expected an address like tcp://HOST:8786, a distributed.Client or a cluster, got {scheduler!r}"
    )


def _execute_dask(todo: Todo, plan: Plan, scheduler: Any, jobs: int, on_done: Done) -> None:
    import distributed

    client, own = _dask_client(scheduler)
    try:
        # Checked locally: a Dask worker whose setup failed would stay in the
        # cluster with ns-3 state left behind.
        check_local(todo, plan, jobs)
        _make_out(plan)
        tag = uuid.uuid4().hex[:8]
        futures = {}
        for run in todo:
            fut = client.submit(run_point, run.resolved, plan.out, plan.base_dir, plan.identity,
                                key=f"inasim-{run.key[:16]}-{tag}", pure=False)
            futures[fut.key] = (fut, run)
        try:
            for fut in distributed.as_completed([f for f, _ in futures.values()]):
                on_done(futures[fut.key][1], fut)
        except BaseException:
            client.cancel([f for f, _ in futures.values()])
            raise
    finally:
        if own:
            client.close()


def run_sweep(
    sweep: "str | os.PathLike[str] | Dict[str, Any]",
    out: "str | os.PathLike[str] | None" = None,
    jobs: Optional[int] = None,
    scheduler: Any = None,
    progress: Any = None,
    resume: bool = True,
    *,
    base_dir: "str | os.PathLike[str] | None" = None,
    reuse_builds: Sequence[str] = (),
):
    """Runs a sweep and returns its table (a pandas DataFrame, also written
    to OUT/sweep.csv).

    sweep: sweep file path or dict (docs/SWEEPS.md). out: output directory
    (default: the sweep's "out", else out/sweeps/<name>, relative to the
    current directory). jobs: local worker processes (default os.cpu_count()).
    scheduler: None (local processes), "tcp://HOST:PORT", a distributed.Client
    or a cluster object (e.g. distributed.LocalCluster). progress: None = a
    progress line when stderr is a terminal, True, False, "tqdm" (a
    tqdm.auto bar) or a callable called after every finished run with a
    dict (_Tracker). resume: skip runs whose OUT/cache/<key>/results.json
    exists. base_dir: where a dict sweep's relative scenario path resolves.
    reuse_builds: with resume, simulator builds (inasim.build_id() values)
    whose cached results of the same scenario are taken for runs this build
    has not cached: the caller vouches that they behave the same (e.g. the
    golden runs are identical); each such row keeps its own build and
    version and the key of the directory it came from.

    Raises SweepError (bad input; nothing has run) or SweepRunError (some runs
    raised; the others are cached and in the partial sweep.csv, the failed
    ones in OUT/failures.csv). DataFrame.attrs holds "out", "ran" and
    "cached" (lists of cache keys), "other_builds" (how many cached results
    of this sweep's scenarios by another simulator build were not used),
    "summary" (the summary.csv table), "workers" (key -> where it ran) and
    "reused" (the keys of runs answered by a build in reuse_builds).
    """
    import pandas  # noqa: F401 - here, so that a missing pandas fails before anything runs

    _refuse_if_bootstrapping()
    if jobs is None:
        jobs = os.cpu_count() or 1
    if not _is_int(jobs) or jobs < 1:
        raise SweepError(f"jobs: must be an integer >= 1, got {jobs!r}")
    _check_progress(progress)
    plan = plan_sweep(sweep, out, base_dir=base_dir)

    # Unique runs (two points may resolve to the same scenario: run it once).
    by_key: Dict[str, List[Run]] = {}
    for run in plan.runs:
        by_key.setdefault(run.key, []).append(run)

    metrics: Dict[str, Dict[str, Any]] = {}
    cached: List[str] = []
    if resume:
        for key in by_key:
            m = _read_cached(plan.result_dir(key))
            if m is not None:
                metrics[key] = m
                cached.append(key)
    reused = _reuse(plan, by_key, metrics, reuse_builds) if resume else {}
    todo = [runs[0] for key, runs in by_key.items() if key not in metrics]
    other = _other_builds(plan, exclude={name for name, _ in reused.values()})
    if other:
        print(f"sweep: {len(other)} cached results of other builds ignored ({', '.join(sorted(set(other)))}); "
              f"--reuse-build BUILD takes a build's that behaves the same (docs/SWEEPS.md)",
              file=sys.stderr, flush=True)

    tracker = _Tracker(len(plan.runs), sum(len(by_key[k]) for k in cached), progress, plan.name)
    failures: Dict[str, str] = {}
    workers: Dict[str, str] = {}

    def on_done(run: Run, fut: Any) -> None:
        error = _outcome(run, fut, plan.identity, metrics, workers)
        if error is not None:
            failures[run.key] = error
        tracker.finished(len(by_key[run.key]), error is None)

    try:
        if todo:
            if scheduler is None:
                _execute_local(todo, plan, jobs, on_done)
            else:
                _execute_dask(todo, plan, scheduler, jobs, on_done)
    finally:
        tracker.close()

    df, summary, failed = _write_outputs(plan, metrics, failures, reused)
    df.attrs.update({"out": plan.out, "ran": [r.key for r in todo if r.key not in failures], "cached": cached,
                     "other_builds": len(other), "summary": summary, "workers": workers, "reused": list(reused)})
    if failures:
        first = next(iter(failures.values()))
        more = f" (+{len(failures) - 1} more)" if len(failures) > 1 else ""
        raise SweepRunError(
            f"{len(failures)} of {len(todo)} runs failed, listed in {os.path.join(plan.out, 'failures.csv')}; "
            f"the others are in the partial sweep.csv and cached in {plan.cache_dir}, run again to resume: "
            f"{first}{more}", df, summary, failed)
    return df


def _outcome(run: Run, fut: Any, identity: Dict[str, str], metrics: Dict[str, Dict[str, Any]],
             workers: Dict[str, str]) -> Optional[str]:
    """Takes one finished task's metrics into `metrics` (and where it ran
    into `workers`); or returns why it failed, one line naming the point:
    the exception it raised, or the other build it ran with."""
    label = f"point {run.point}" + (f" ({_describe(run.values)})" if run.values else "") + f", seed {run.seed}"
    try:
        res = fut.result()
    except BaseException as e:  # noqa: BLE001 - reported by the caller, the sweep goes on
        if isinstance(e, KeyboardInterrupt):
            raise
        msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
        if isinstance(e, ImportError) and "inasim" in msg:
            msg += " (workers need PYTHONPATH=REPO/python:REPO/build/python, see docs/SWEEPS.md)"
        return f"{label}: {type(e).__name__}{': ' + msg if msg else ''}"
    if res.get("identity") != identity:
        return f"{label}: {_mismatch(res.get('worker', '?'), res.get('identity') or {}, identity)}"
    metrics[run.key] = res["metrics"]
    workers[run.key] = res["worker"]
    return None


def _rows(plan: Plan, metrics: Dict[str, Dict[str, Any]],
          reused: Optional[Dict[str, Tuple[str, Dict[str, str]]]] = None) -> "tuple[List[Dict[str, Any]], List[str]]":
    """(one sweep.csv row per run that has metrics, the sorted metric names);
    a reused result's row names its own directory and build."""
    rows = []
    metric_names = set()
    for run in plan.runs:
        if run.key not in metrics:
            continue
        key, identity = (reused or {}).get(run.key, (run.key, plan.identity))
        row: Dict[str, Any] = {"point": run.point, "repetition": run.repetition, "seed": run.seed, "key": key,
                               **identity}
        for p in plan.paths:
            row[p] = _cell(run.values[p]) if p in run.values else None
        for k, v in metrics[run.key].items():
            if k not in row:  # a swept path equal to a metric name keeps the swept value
                row[k] = v
                metric_names.add(k)
        rows.append(row)
    return rows, sorted(metric_names)


def _summary_rows(plan: Plan, metrics: Dict[str, Dict[str, Any]], names: List[str]) -> List[Dict[str, Any]]:
    """summary.csv: per point and numeric metric (bools and strings are not
    numbers) inasim.stats.summarize over the point's repetitions; a failed
    run, or one without the metric, counts as missing."""
    from inasim.stats import summarize

    numeric = [m for m in names if any(isinstance(metrics[k].get(m), (int, float))
                                       and not isinstance(metrics[k].get(m), bool) for k in metrics)]
    points: Dict[int, List[Run]] = {}
    for run in plan.runs:
        points.setdefault(run.point, []).append(run)
    out = []
    for point, runs in points.items():
        head = {"point": point, **{p: _cell(runs[0].values[p]) if p in runs[0].values else None for p in plan.paths}}
        for m in numeric:
            values = []
            for run in runs:
                v = metrics.get(run.key, {}).get(m)
                values.append(v if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan)
            out.append({**head, "metric": m, **summarize(values)})
    return out


def _write_outputs(plan: Plan, metrics: Dict[str, Dict[str, Any]], failures: Dict[str, str],
                   reused: Optional[Dict[str, Tuple[str, Dict[str, str]]]] = None):
    """OUT/sweep.csv (one row per run that has results: fixed columns, swept
    paths, sorted metrics), OUT/summary.csv, OUT/sweep.json and, when runs
    failed, OUT/failures.csv (else a stale one is removed); returns the
    three tables (failures None when none failed)."""
    import pandas as pd

    rows, names = _rows(plan, metrics, reused)
    df = pd.DataFrame(rows, columns=list(FIXED_COLUMNS) + plan.paths + names)
    summary = pd.DataFrame(_summary_rows(plan, metrics, names), columns=["point"] + plan.paths + list(SUMMARY_COLUMNS))
    failed_runs = [r for r in plan.runs if r.key in failures]
    failed = None
    if failed_runs:
        failed = pd.DataFrame(
            [{"point": r.point, "repetition": r.repetition, "seed": r.seed, "key": r.key,
              **{p: _cell(r.values[p]) if p in r.values else None for p in plan.paths}, "error": failures[r.key]}
             for r in failed_runs],
            columns=["point", "repetition", "seed", "key"] + plan.paths + ["error"])

    _make_out(plan)
    write_atomic(os.path.join(plan.out, "sweep.csv"), df.to_csv(index=False))
    write_atomic(os.path.join(plan.out, "summary.csv"), summary.to_csv(index=False))
    failures_csv = os.path.join(plan.out, "failures.csv")
    if failed is not None:
        write_atomic(failures_csv, failed.to_csv(index=False))
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(failures_csv)
    _write_echo(plan, failures, reused or {})
    return df, summary, failed


def _write_echo(plan: Plan, failures: Dict[str, str], reused: Dict[str, Tuple[str, Dict[str, str]]]) -> None:
    """OUT/sweep.json: the definition, the simulator, every run (with its
    error when it failed, or the result it reused from another build)."""
    def entry(r: Run) -> Dict[str, Any]:
        e = {"point": r.point, "repetition": r.repetition, "seed": r.seed, "key": r.key, "values": r.values}
        if r.key in reused:
            e["reused_from"] = {"key": reused[r.key][0], **reused[r.key][1]}
        if r.not_applied:
            e["not_applied"] = r.not_applied
        if r.key in failures:
            e["error"] = failures[r.key]
        return e

    echo = {
        "name": plan.name,
        **plan.identity,
        "sweep_file": plan.source,
        "scenario_base_dir": plan.base_dir,
        "sweep": plan.definition,
        "swept": plan.paths,
        "points": [entry(r) for r in plan.runs if r.key not in failures],
        "failed": [entry(r) for r in plan.runs if r.key in failures],
    }
    write_atomic(os.path.join(plan.out, "sweep.json"), json.dumps(echo, indent=2) + "\n")


# ---------------------------------------------------------------------- CLI


class Terminated(KeyboardInterrupt):
    """SIGTERM (kill, timeout, batch schedulers), raised in the main thread so
    that the sweep unwinds exactly as on Ctrl-C: workers killed, finished
    runs kept in the cache."""


def _on_sigterm(signum, frame) -> None:
    # One unwinding is enough: a second SIGTERM must not interrupt the
    # cleanup that kills the workers (it is bounded: terminate, 5 s, kill).
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated()


@contextlib.contextmanager
def _sigterm_unwinds():
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return
    old = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="inasim sweep",
        description="Run a parameter sweep over a scenario (docs/SWEEPS.md).",
    )
    parser.add_argument("sweep", metavar="SWEEP.json", help="sweep file")
    parser.add_argument("--out", metavar="DIR", help="output directory (default: the sweep's out, else out/sweeps/NAME)")
    parser.add_argument("--jobs", "-j", metavar="N", type=int, help="local worker processes (default: CPU count)")
    parser.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run on a Dask cluster instead")
    parser.add_argument("--no-resume", action="store_true", help="re-run points whose results are cached")
    parser.add_argument("--reuse-build", action="append", default=[], metavar="BUILD",
                        help="also take cached results of this simulator build (inasim.build_id(), 16 hex digits; "
                        "repeatable), vouched to behave the same; their rows keep their build")
    parser.add_argument("--progress", choices=("auto", "on", "off"), default="auto", help="progress bar on stderr")
    parser.add_argument("--dry-run", action="store_true",
                        help="validate, build every point's network and workload, list the runs; run nothing")
    return parser


def _dry_run(args: argparse.Namespace) -> int:
    plan = plan_sweep(args.sweep, args.out)
    jobs = (os.cpu_count() or 1) if args.jobs is None else args.jobs
    if jobs < 1:
        raise SweepError(f"--jobs: must be an integer >= 1, got {jobs}")
    unique = list({r.key: r for r in reversed(plan.runs)}.values())[::-1]  # first run of each key
    cached = {r.key for r in unique if _read_cached(plan.result_dir(r.key)) is not None}
    check_local([r for r in unique if r.key not in cached], plan, jobs)
    other = _other_builds(plan)
    if other:
        print(f"sweep: {len(other)} cached results of other builds will be ignored ({', '.join(sorted(set(other)))})",
              file=sys.stderr)
    for r in plan.runs:
        vals = f" {_describe(r.values)}" if r.values else ""
        skip = f" (not applied: {', '.join(r.not_applied)})" if r.not_applied else ""
        print(f"point {r.point} repetition {r.repetition} seed {r.seed} key {r.key[:12]}{vals}{skip}")
    print(f"sweep {plan.name}: {len(plan.runs)} runs, {len(unique)} distinct, {len(cached)} cached -> {plan.out}")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """`inasim sweep` / `python3 -m inasim.sweep`. Returns the exit status:
    0 ok, 1 a run failed or some result is not correct, 2 bad input,
    130 interrupted (Ctrl-C), 143 terminated (SIGTERM)."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:  # argparse: usage errors are 2, --help is 0
        return e.code if isinstance(e.code, int) else 2

    def fail(msg: str, status: int) -> int:
        print(f"inasim sweep: {msg}", file=sys.stderr)
        return status

    try:
        with _sigterm_unwinds():
            if args.dry_run:
                return _dry_run(args)
            df = run_sweep(
                args.sweep,
                out=args.out,
                jobs=args.jobs,
                scheduler=args.scheduler,
                progress={"auto": None, "on": True, "off": False}[args.progress],
                resume=not args.no_resume,
                reuse_builds=args.reuse_build,
            )
    except SweepError as e:
        return fail(str(e), 2)
    except SweepRunError as e:
        return fail(str(e), 1)
    except Terminated:
        return fail("terminated (finished runs are cached; run again to resume)", 143)
    except KeyboardInterrupt:
        return fail("interrupted (finished runs are cached; run again to resume)", 130)

    out = df.attrs["out"]
    print(
        f"sweep: {len(df)} runs ({len(df.attrs['ran'])} ran, {len(df.attrs['cached'])} cached) "
        f"-> {os.path.join(out, 'sweep.csv')}"
    )
    if "correct" in df.columns:
        bad = df[df["correct"].map(lambda v: not v == True)]  # noqa: E712 (numpy bools; NaN = missing)
        if len(bad):
            which = ", ".join(f"point {p} repetition {r}" for p, r in zip(bad["point"], bad["repetition"]))
            return fail(f"{len(bad)} run(s) not correct: {which}", 1)
    return 0


if __name__ == "__main__":
    # Re-import under the package name so that pickled tasks refer to
    # inasim.sweep.run_point (importable on workers), not __main__.run_point.
    from inasim.sweep import main as _main

    sys.exit(_main())
