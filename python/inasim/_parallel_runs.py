"""Independent simulations in spawned worker processes, with their progress
relayed to the parent: what `inasim compare --jobs N` runs its protocols and
repetitions with (a sweep has its own cache-keyed runner, inasim.sweep).

Every run is one process's `inasim.run` of a fully resolved scenario with its
own seed, so its results do not depend on how many run at once or in which
order they finish: `--jobs` changes the wall time only.
"""

from __future__ import annotations

import concurrent.futures
import functools
import queue as queue_module
import sys
import threading
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional

import inasim


class Task(NamedTuple):
    """One run: `doc` with `seed`, results written to `out` (a directory)."""
    name: str
    doc: Dict[str, Any]
    seed: int
    base_dir: Optional[str]
    out: str


def _forward(channel: Any, name: str, tick: Dict[str, Any]) -> None:
    channel.put((name, tick))


def run_task(task: Task, progress: Any = False):
    """Runs one task (here or in a worker process); returns (results.json
    dict, links.csv text or None). progress: as inasim.run's."""
    r = inasim.run(task.doc, seed=task.seed, base_dir=task.base_dir, progress=progress)
    r.write(task.out)
    return r.json, r.csv.get("links.csv")


class _Relay:
    """Shows the workers' progress ticks in the parent. progress: False
    (nothing), True (one stderr line: runs done, each running run's %),
    "tqdm" (a bar over the runs) or a callable, called with each tick's dict
    (inasim.run's keys) plus "run": the run's name."""

    def __init__(self, progress: Any, total: int, ctx):
        self.progress, self.total, self.done = progress, total, 0
        self.running: Dict[str, float] = {}
        self.t0 = time.monotonic()
        self.width = 0
        self.bar = None
        self.manager = self.channel = self.thread = None
        if progress == "tqdm":
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, unit="run", desc="compare", dynamic_ncols=True)
        elif progress:
            self.manager = ctx.Manager()
            self.channel = self.manager.Queue()
            self.thread = threading.Thread(target=self._drain, name="inasim-compare-progress", daemon=True)
            self.thread.start()

    def _drain(self) -> None:
        while True:
            try:
                item = self.channel.get(timeout=1.0)
            except queue_module.Empty:
                continue
            except (EOFError, OSError):  # the manager is gone
                return
            if item is None:
                return
            name, tick = item
            if callable(self.progress):
                self.progress(dict(tick, run=name))
            else:
                self.running[name] = tick["fraction"]
                self._draw()

    def _draw(self) -> None:
        runs = ", ".join(f"{n} {100 * f:.0f} %" for n, f in sorted(self.running.items()))
        line = f"[{self.done}/{self.total} runs] {runs} elapsed {time.monotonic() - self.t0:.0f} s"
        sys.stderr.write("\r" + line + " " * max(0, self.width - len(line)))
        sys.stderr.flush()
        self.width = len(line)

    def tick_for(self, name: str) -> Any:
        """The progress argument of run `name`'s worker: a picklable callable
        putting its ticks on the relay's queue, or False."""
        return False if self.channel is None else functools.partial(_forward, self.channel, name)

    def finished(self, name: str) -> None:
        self.done += 1
        self.running.pop(name, None)
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.thread is not None:
            self.channel.put(None)
            self.thread.join()
            self.manager.shutdown()
            if self.width:
                sys.stderr.write("\n")
        if self.bar is not None:
            self.bar.close()


def run_parallel(tasks: List[Task], jobs: int, progress: Any, out_dir: str,
                 on_done: Callable[[Task, Any], None]) -> None:
    """Runs `tasks` (each writing a directory in `out_dir`) in up to `jobs`
    spawned processes and calls on_done(task, (results.json dict, links.csv
    text)) in the parent as each finishes. A failed run raises here, after the
    pool's workers are stopped; so does Ctrl-C (inasim.sweep's pool kills its
    workers, not waiting for them, and removes what they left half written)."""
    import multiprocessing

    from inasim import sweep

    sweep._refuse_if_bootstrapping()
    relay = _Relay(progress, len(tasks), multiprocessing.get_context("spawn"))
    try:
        with sweep._local_pool(jobs, len(tasks), out_dir) as pool:
            futures = {pool.submit(run_task, t, relay.tick_for(t.name)): t for t in tasks}
            for fut in concurrent.futures.as_completed(futures):
                relay.finished(futures[fut].name)
                on_done(futures[fut], fut.result())
    finally:
        relay.close()
