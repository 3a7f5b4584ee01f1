"""INA-Sim from Python: load, validate and run scenarios in-process, get the
results as a dict and as pandas DataFrames, and inspect topologies and
aggregation trees.

    import inasim
    r = inasim.run("scenarios/default.json", sets=["workload.bytes=262144"])
    r.correct, r.json["workload"]["mean_duration_s"], r.tables["links.csv"]

The scenario parser, the simulator and the results writer are the C++ ones the
`inasim` command uses (extension module `_inasim`), so errors, results.json and
the CSV files are the same as on the command line. ns-3's global state is torn
down after every run, so one process can run many scenarios one after another
(not concurrently: use processes for parallel runs, as `inasim.sweep` does).
"""

from __future__ import annotations

import io
import json
import math
import numbers
import os
from pathlib import Path
from typing import Iterable, Mapping, Union

import _inasim


def _check_extension() -> None:
    """ImportError unless `_inasim` was built from this package's checkout.

    The package (python/inasim) and the extension (build/python/_inasim) are
    one program: a package of one checkout running another checkout's
    simulator would silently mix versions. Each build records its checkout
    (`_inasim.build_paths()`); a mismatch is refused, naming both and the
    command that gives the right pair. INASIM_ALLOW_FOREIGN_BUILD=1 accepts
    it on purpose (a worktree testing Python changes against a main build)."""
    here = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    paths = getattr(_inasim, "build_paths", None)
    if paths is None:
        source = "(an older build that does not record its checkout)"
    else:
        source = os.path.realpath(paths().split(":")[0])
        if source == here:
            return
    if os.environ.get("INASIM_ALLOW_FOREIGN_BUILD") == "1":
        return
    checkout = os.path.dirname(here)
    raise ImportError(
        f"inasim: the package at {here} is not the one the simulator extension {_inasim.__file__} was built "
        f"for (its package: {source}). Use the checkout's own environment: {checkout}/build/venv/bin/python "
        f"(made by {checkout}/scripts/setup.sh), or PYTHONPATH={here}:{checkout}/build/python; "
        f"INASIM_ALLOW_FOREIGN_BUILD=1 mixes them on purpose.")


_check_extension()

ScenarioError = _inasim.ScenarioError
ScenarioError.__doc__ = "Bad scenario input; the message names the JSON path and the problem, as the CLI does."

__all__ = ["ScenarioError", "Result", "Topology", "load", "apply_set", "validate", "check", "run", "topology",
           "version", "build_id", "to_json_value"]

Scenario = Union[str, os.PathLike, Mapping]


def version() -> str:
    """The version string echoed in every results.json."""
    return _inasim.version()


_BUILD_ID = None


def build_id() -> str:
    """sha256 (hex, 16 digits) of the simulator extension this process loaded.

    `version()` names the commit, and every uncommitted tree reads
    "...-dirty": two different builds of one dirty tree share it. The
    extension's own bytes tell them apart, so sweep caches key on both."""
    global _BUILD_ID
    if _BUILD_ID is None:
        import hashlib

        h = hashlib.sha256()
        with open(_inasim.__file__, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        _BUILD_ID = h.hexdigest()[:16]
    return _BUILD_ID


def load(path: Union[str, os.PathLike]) -> dict:
    """Reads a scenario file (ScenarioError if it is missing or not JSON)."""
    return json.loads(_inasim.load(str(path)))


def _key_path(path: str, key: str) -> str:
    """`workload.bytes`, `jobs[0].hosts`; a key that has dots itself (a sweep
    grid's "workload.bytes") is quoted: `grid["workload.bytes"][1]`."""
    if not key or any(c in key for c in '.[]"'):
        return f"{path}[{json.dumps(key)}]"
    return f"{path}.{key}" if path else key


def to_json_value(value, path: str = "", what: str = "scenario"):
    """A copy of `value` made of JSON types only (dict with string keys, list,
    str, int, float, bool, None), or ScenarioError naming the key path.

    JSON has no NaN or Infinity, and json.dumps would write them anyway (the
    C++ parser then rejects the whole text with no key to point at), so they
    are caught here, where the Python objects are still walked with their
    keys. Integral and real numbers of other types (numpy scalars) become int
    and float; tuples become lists."""
    where = path or what
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        x = float(value)
        if not math.isfinite(x):
            raise ScenarioError(f"{where}: must be a finite number, got {x!r} (JSON has no NaN or Infinity)")
        return x
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ScenarioError(f"{where}: keys must be strings, got {k!r}")
            out[k] = to_json_value(v, _key_path(path, k), what)
        return out
    if isinstance(value, (list, tuple)):
        return [to_json_value(v, f"{path}[{i}]", what) for i, v in enumerate(value)]
    raise ScenarioError(f"{where}: {type(value).__name__} is not a JSON value (use dict, list, str, number, bool, None)")


def _dumps(doc) -> str:
    return json.dumps(to_json_value(doc))


def apply_set(doc: dict, assignment: str) -> None:
    """Applies one `--set PATH=VALUE` override to `doc`, in place, exactly as the CLI does."""
    if not isinstance(assignment, str):
        raise ScenarioError(f"--set: must be a \"PATH=VALUE\" string, got {assignment!r}")
    new = json.loads(_inasim.apply_set(_dumps(doc), assignment))
    doc.clear()
    doc.update(new)


def _document(scenario: Scenario, sets: Iterable[str], seed, base_dir) -> tuple[str, str]:
    if isinstance(scenario, (str, os.PathLike)):
        path = Path(scenario)
        doc = load(path)
        if base_dir is None:
            base_dir = str(path.parent)
    elif isinstance(scenario, Mapping):
        doc = to_json_value(scenario)  # a deep copy, JSON values only (no NaN: ScenarioError with the key)
    else:
        raise TypeError(f"scenario must be a path or a dict, not {type(scenario).__name__}")
    if isinstance(sets, str):
        sets = [sets]
    for s in sets:
        apply_set(doc, s)
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 1:
            raise ScenarioError(f"seed: must be a positive integer, got {seed!r}")
        doc["seed"] = seed
    return _dumps(doc), "" if base_dir is None else str(base_dir)


def validate(scenario: Scenario, sets: Iterable[str] = (), seed: int | None = None, base_dir=None) -> dict:
    """The resolved scenario (every default filled in), or ScenarioError.

    `scenario` is a file (relative files inside it are resolved against its
    directory) or a dict (against `base_dir`, default the working directory).
    """
    text, base = _document(scenario, sets, seed, base_dir)
    return json.loads(_inasim.validate(text, base))


#: How far check() simulates: the shortest stop the scenario format allows
#: (1 ns), so a check costs the network and workload setup and not the run.
_CHECK_STOP = "stop.max_sim_time_ms=1e-6"


def check(scenario: Scenario, sets: Iterable[str] = (), seed: int | None = None, base_dir=None) -> dict:
    """validate(), then build the network and the workload as run() does and
    simulate 1 ns: catches the errors only the setup finds (e.g. more jobs
    than the selected hosts allow, a SwitchML pool too large), which validate()
    cannot see. Returns the resolved scenario, or raises ScenarioError.

    Costs the setup of a run (up to a few seconds on a 1,024-host network).
    A setup that raises leaves ns-3 clean for the next run in this process
    (the runner destroys the simulator on that path too)."""
    resolved = validate(scenario, sets, seed, base_dir)
    if isinstance(sets, str):
        sets = [sets]
    text, base = _document(scenario, [*sets, _CHECK_STOP], seed, base_dir)
    _inasim.run(text, base, False)
    return resolved


class Result:
    """One run: `json` is results.json, `csv` the CSV tables as text,
    `tables` the same as pandas DataFrames, `correct` whether every checked
    aggregate was exact (and every flow delivered), `summary` the CLI's text."""

    def __init__(self, raw):
        self._raw = raw
        self.json: dict = json.loads(raw.json_text)
        self.csv: dict[str, str] = dict(zip(raw.csv_names, raw.csv_texts))
        # Binary outputs by name under the results directory (outputs.pcap: "pcap/link-0-h0-s0.pcap").
        self.files: dict[str, bytes] = dict(raw.files)
        self.correct: bool = raw.correct
        self.summary: str = raw.summary
        self._tables = None

    @property
    def tables(self) -> dict:
        if self._tables is None:
            import pandas as pd

            self._tables = {name: pd.read_csv(io.StringIO(text)) for name, text in self.csv.items()}
        return self._tables

    def frame(self, name: str):
        """One table as a DataFrame, by file name with or without `.csv`."""
        return self.tables[name if name.endswith(".csv") else name + ".csv"]

    @property
    def trace(self):
        """trace.csv (outputs.trace) as a typed DataFrame (inasim.trace.read)."""
        from . import trace

        return trace.read(self)

    def write(self, directory: Union[str, os.PathLike]) -> Path:
        """Writes results.json, the CSVs and summary.txt into `directory`,
        atomically (as `inasim run --out`). Like the CLI, it replaces only an
        earlier results directory, never anything else (ScenarioError)."""
        self._raw.write(str(directory))
        return Path(directory)

    def __repr__(self) -> str:
        return f"<inasim.Result {self.json['scenario']['name']!r} correct={self.correct} tables={sorted(self.csv)}>"


def _progress_callback(progress):
    """(stderr line wanted, tick callback or None, closer(finished)) for run()'s `progress`."""
    if progress is None or isinstance(progress, bool):
        return bool(progress), None, lambda finished: None
    if callable(progress):
        return False, progress, lambda finished: None
    if progress == "tqdm":
        from tqdm.auto import tqdm  # renders as a widget in Jupyter, as a line on a terminal

        bar = tqdm(total=100.0, unit="%", bar_format="{l_bar}{bar}| {n:.1f}/100 % [{elapsed}<{remaining}{postfix}]")

        def tick(p):
            bar.n = round(100.0 * p["fraction"], 1)
            bar.set_postfix_str(f"sim {p['sim_time_s'] * 1e3:.3f} ms, {p['events'] / 1e6:.2f} M events", refresh=False)
            bar.refresh()

        def close(finished):
            if finished:
                bar.n = 100.0
            bar.close()

        return False, tick, close
    raise ValueError(f'progress: must be True, False, "tqdm" or a callable taking one dict, got {progress!r}')


def run(scenario: Scenario, sets: Iterable[str] = (), seed: int | None = None, base_dir=None,
        progress=False) -> Result:
    """Runs a scenario in this process and returns its Result.

    progress: False (nothing), True (the CLI's line on stderr), "tqdm" (a
    tqdm bar, a widget in Jupyter) or a callable, called every 0.1-0.4 s of
    wall time with {"sim_time_s", "fraction", "events", "elapsed_s", "eta_s"}.
    Ctrl-C stops the simulation within a second and raises KeyboardInterrupt
    (the process can run again); so does an exception the callable raises."""
    text, base = _document(scenario, sets, seed, base_dir)
    line, tick, close = _progress_callback(progress)
    finished = False
    try:
        result = Result(_inasim.run(text, base, line, tick))
        finished = True
        return result
    finally:
        close(finished)


def _count(name: str, value, least: int) -> int:
    """An integer argument >= least (a vertex, a tree count); NaN, 2.5 or "3"
    get a ScenarioError naming the argument instead of int()'s bare ValueError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
        raise ScenarioError(f"{name}: must be an integer >= {least}, got {value!r}")
    return int(value)


class Topology:
    """The network a scenario describes: `nodes` and `links` as DataFrames
    (ids are vertex numbers: hosts first, then switches), plus aggregation trees."""

    def __init__(self, scenario: Scenario, sets: Iterable[str] = (), base_dir=None):
        self._text, self._base = _document(scenario, sets, None, base_dir)
        info = json.loads(_inasim.topology(self._text, self._base))
        self.description: str = info["description"]
        self.num_hosts: int = info["hosts"]
        self.num_switches: int = info["switches"]
        self._nodes, self._links = info["nodes"], info["links"]

    @property
    def nodes(self):
        import pandas as pd

        return pd.DataFrame(self._nodes)

    @property
    def links(self):
        import pandas as pd

        return pd.DataFrame(self._links)

    @property
    def hosts(self) -> list[int]:
        return list(range(self.num_hosts))

    @property
    def switches(self) -> list[int]:
        return list(range(self.num_hosts, self.num_hosts + self.num_switches))

    def name(self, vertex: int) -> str:
        return self._nodes[vertex]["name"]

    def vertex(self, name: str) -> int:
        for n in self._nodes:
            if n["name"] == name:
                return n["id"]
        raise KeyError(name)

    def tree(self, root: Union[int, str], hosts: Iterable[int] | None = None) -> dict:
        """The aggregation tree rooted at switch `root` (vertex or name) over
        `hosts` (default all): root, hosts, depth, vertices, edges (child, parent, port)."""
        r = self.vertex(root) if isinstance(root, str) else _count("root", root, 0)
        h = self.hosts if hosts is None else [_count(f"hosts[{i}]", x, 0) for i, x in enumerate(hosts)]
        return json.loads(_inasim.tree(self._text, self._base, r, h))

    def trees(self, n: int, hosts: Iterable[int] | None = None) -> list[dict]:
        """n trees with distinct roots (static multi-tree baselines, PANAMA)."""
        h = self.hosts if hosts is None else [_count(f"hosts[{i}]", x, 0) for i, x in enumerate(hosts)]
        return json.loads(_inasim.trees(self._text, self._base, h, _count("n", n, 1)))

    def __repr__(self) -> str:
        return f"<inasim.Topology {self.description}: {self.num_hosts} hosts, {self.num_switches} switches>"


def topology(scenario: Scenario, sets: Iterable[str] = (), base_dir=None) -> Topology:
    return Topology(scenario, sets, base_dir)
