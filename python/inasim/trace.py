"""Reading `trace.csv`, the structured event trace (scenario `outputs.trace`).

One row per packet event, in simulated-time order (docs/SCENARIO.md,
"outputs.trace", lists the columns and events). A frame the running protocol
knows carries its key: `protocol`, `job`, `id` (the unit a user follows: a
SwitchML packet id, a Canary block, a PANAMA packet number, a P4SGD slot),
`aux` and `kind`.

    import inasim, inasim.trace
    r = inasim.run("scenarios/canary/small-64.json", sets=['outputs.trace={"ids": [3]}'])
    t = inasim.trace.read(r)                 # or read("out/run/trace.csv[.gz]")
    block = inasim.trace.follow(t, id=3)     # one block, end to end
    inasim.trace.per_node(block)             # first and last event at each node
    inasim.trace.waits(block)                # each hop's time in a transmit queue
"""
from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Union

COLUMNS = ["time_ps", "event", "node", "port", "link", "queue_bytes", "frame_bytes", "protocol", "job", "id",
           "aux", "kind", "detail"]
EVENTS = ["enqueue", "dequeue", "receive", "drop", "mark", "pause", "resume", "program_in", "program_out",
          "program_timer", "timeout"]
_INTS = ["time_ps", "port", "link", "queue_bytes", "frame_bytes", "job", "id", "aux"]


def read(source: Union[str, os.PathLike, "object"]):
    """trace.csv (or trace.csv.gz, or a results directory holding one, or an
    inasim.Result) as a pandas DataFrame: integer columns as nullable Int64
    (empty cells are <NA>), text columns as strings (empty cells ""), in the
    file's row order. Raises ValueError naming the file if its header is not
    trace.csv's."""
    import pandas as pd

    if hasattr(source, "csv"):  # an inasim.Result
        if "trace.csv" not in source.csv:
            raise ValueError("this run has no trace.csv: give the scenario an outputs.trace section")
        text, where = source.csv["trace.csv"], "trace.csv"
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    else:
        path = Path(source)
        if path.is_dir():
            found = [p for p in (path / "trace.csv", path / "trace.csv.gz") if p.exists()]
            if not found:
                raise ValueError(f"{path}: no trace.csv or trace.csv.gz (outputs.trace not given?)")
            path = found[0]
        where = str(path)
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    if list(frame.columns) != COLUMNS:
        raise ValueError(f"{where}: not a trace.csv (columns {list(frame.columns)}, expected {COLUMNS})")
    for column in _INTS:
        # mask, not replace("", None): older pandas read a None value there as "pad" (fill forward).
        frame[column] = pd.to_numeric(frame[column].mask(frame[column] == "")).astype("Int64")
    return frame


def follow(trace, id: int, job: int | None = None, protocol: str | None = None, kind: str | None = None):
    """The rows of one unit of work (a block, packet or slot), in time order:
    every frame keyed with `id` (and `job`, `protocol`, `kind` when given),
    and its timeouts."""
    mask = trace["id"] == id
    if job is not None:
        mask &= trace["job"] == job
    if protocol is not None:
        mask &= trace["protocol"] == protocol
    if kind is not None:
        mask &= trace["kind"] == kind
    return trace[mask.fillna(False)]


def per_node(rows):
    """For each node in `rows`: its first and last event time, the number of
    rows, and the events seen, ordered by first time. A quick view of where a
    block spent its time."""
    grouped = rows.groupby("node", sort=False)
    out = grouped.agg(first_ps=("time_ps", "min"), last_ps=("time_ps", "max"), rows=("event", "size"),
                      events=("event", lambda e: ",".join(dict.fromkeys(e))))
    return out.sort_values("first_ps")


_KEY = ["node", "port", "link", "protocol", "job", "id", "aux", "kind"]
_INT_KEYS = ["port", "link", "job", "id", "aux"]


def _numbered(rows, event, time_column):
    """`event`'s rows of `rows`: the key (empty integers as -1), the n-th
    time this key occurs ("nth"), and the time."""
    sub = rows[rows.event == event]
    out = sub[_KEY].copy()
    for c in _INT_KEYS:
        out[c] = out[c].fillna(-1).astype("int64")
    out["nth"] = out.groupby(_KEY, sort=False).cumcount()
    out[time_column] = sub["time_ps"].astype("int64")
    return out


def waits(rows):
    """Each frame's wait in a transmit queue: its enqueue row paired with its
    dequeue row at the same device (node, port, link) with the same key
    (protocol, job, id, aux, kind), in order (a device's queues are FIFO for
    one kind of frame). Returns node, port, link, protocol, job, id, aux,
    kind, enqueue_ps, dequeue_ps, wait_ps, in enqueue order; a frame not yet
    dequeued when the trace ends (or dropped) has no row."""
    out = _numbered(rows, "enqueue", "enqueue_ps").merge(
        _numbered(rows, "dequeue", "dequeue_ps"), on=_KEY + ["nth"], how="inner", sort=False)
    for c in _INT_KEYS:
        out[c] = out[c].astype("Int64").mask(out[c] == -1)
    out["wait_ps"] = out.dequeue_ps - out.enqueue_ps
    return out.drop(columns="nth").reset_index(drop=True)
