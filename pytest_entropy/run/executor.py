"""Where the map-merge-finalize runs: this process, a process pool, or a Dask cluster.

:func:`map_merge` is the generic, ordered map-merge: every item is mapped independently
(on any worker), and the results are folded into one accumulator strictly in item order,
each as soon as every earlier one has been folded. Results that finish early wait in a
bounded window, so the client holds at most ``window`` results however large the input is.

The corpus pipeline (:func:`~pytest_entropy.run.corpus.read_corpus`) is its user: each
session file maps to a small part of mergeable accumulators, and the parts merge in file
order, so every engine yields the bytes of one sequential pass. Dask is an optional extra,
imported only when ``engine="dask"``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.typing_lite import Generic, TypedDict, TypeVar
from pytest_entropy.sources.urls import EXTRA_HINT

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from concurrent.futures import Future
    from typing import Any, Unpack

    from pytest_entropy.run.progress import ProgressSink

ENGINES = ("local", "processes", "dask")

# Tasks held per worker while an earlier, slower one is still running. Large enough that one
# file several times bigger than its neighbours does not idle the other workers, small
# enough that held results (a few kB to a few MB each) stay minor next to the interpreter.
WINDOW_PER_WORKER = 8
MIN_WINDOW = 32
# Automatic batching aims at this many tasks per worker (load balance: a slow task delays
# the end by at most ~1/16 of the run) and caps a task at this many items (granularity).
TASKS_PER_WORKER = 16
MAX_BATCH = 64
# Seconds to wait for a Dask scheduler before giving up with a usage error.
SCHEDULER_TIMEOUT = 10.0

ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")
AccumulatorT = TypeVar("AccumulatorT")


class EngineSettings(TypedDict, total=False):
    """Where and how :func:`map_ordered` runs; :func:`map_merge` passes them on as given."""

    engine: str
    jobs: int
    scheduler: str | None
    window: int | None
    batch: int | None
    scheduler_timeout: float
    progress: ProgressSink | None


class EngineUnavailableError(EntropyInputError):
    """The requested engine cannot run: its optional extra is missing or its scheduler is
    unreachable (a usage error, exit status 2)."""


# ----------------------------------------------------------------------- ordering


class _InOrder(Generic[ResultT]):
    """Releases results strictly by index, holding those that arrive early."""

    __slots__ = ("held", "next_index")

    def __init__(self) -> None:
        self.held: dict[int, ResultT] = {}
        self.next_index = 0

    def put(self, index: int, result: ResultT) -> Iterator[ResultT]:
        """Accept result ``index``; yield every result that is now next in line."""
        self.held[index] = result
        while self.next_index in self.held:
            yield self.held.pop(self.next_index)
            self.next_index += 1


def _window(window: int | None, workers: int) -> int:
    if window is not None:
        if window < 1:
            raise ValueError("window must be at least 1")
        return window
    return max(MIN_WINDOW, WINDOW_PER_WORKER * workers)


def _batch_size(batch: int | None, items: int, workers: int) -> int:
    if batch is not None:
        if batch < 1:
            raise ValueError("batch must be at least 1")
        return batch
    return max(1, min(MAX_BATCH, items // (TASKS_PER_WORKER * max(1, workers))))


def _fold_batch(
    map_fn: Callable[[ItemT], ResultT],
    combine: Callable[[ResultT, ResultT], ResultT],
    group: Sequence[ItemT],
) -> ResultT:
    """Map consecutive items on a worker and combine their results in order."""
    return functools.reduce(combine, map(map_fn, group))


def _tasks(
    items: Sequence[ItemT],
    map_fn: Callable[[ItemT], ResultT],
    combine: Callable[[ResultT, ResultT], ResultT] | None,
    batch: int | None,
    workers: int,
) -> tuple[Sequence[Any], Callable[[Any], ResultT]]:
    """The units of work: single items, or runs of consecutive items folded on the worker
    by ``combine`` (fewer, larger tasks: less per-task overhead on scheduler and client)."""
    if combine is None:
        return items, map_fn
    size = _batch_size(batch, len(items), workers)
    if size <= 1:
        return items, map_fn
    groups = [tuple(items[start : start + size]) for start in range(0, len(items), size)]
    return groups, functools.partial(_fold_batch, map_fn, combine)


def _start_method() -> str:
    """``fork`` when it is safe (POSIX, no other threads): workers start instantly with the
    parent's imports. Otherwise ``spawn``, which never inherits a lock held by a thread."""
    import multiprocessing  # here, not at import: a one-process run never starts a pool
    import threading

    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        return "fork"
    return "spawn"


def _fill(
    pending: Iterator[tuple[int, ItemT]],
    running: dict[Any, int],
    in_order: _InOrder[Any],
    window: int,
    start: Callable[[int, ItemT], Any],
) -> None:
    """Start the next tasks until ``window`` are running or held (or none is left);
    ``start(index, task)`` submits one and returns its future."""
    while len(running) + len(in_order.held) < window:
        following = next(pending, None)
        if following is None:
            return
        index, task = following
        running[start(index, task)] = index


def _pool_ordered(
    tasks: Sequence[ItemT],
    task_fn: Callable[[ItemT], ResultT],
    jobs: int,
    window: int,
) -> Iterator[ResultT]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context(_start_method())
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        try:
            yield from _ordered(tasks, pool.submit, task_fn, window)
        except BaseException:
            # A failed task or merge (or Ctrl-C) ends the run: drop the queued tasks instead
            # of finishing them before the error surfaces.
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _ordered(
    tasks: Sequence[ItemT],
    submit: Callable[[Callable[[ItemT], ResultT], ItemT], Future[ResultT]],
    task_fn: Callable[[ItemT], ResultT],
    window: int,
) -> Iterator[ResultT]:
    """Run ``task_fn`` through a :mod:`concurrent.futures` ``submit`` with at most ``window``
    tasks submitted or held at once; yield results in task order."""
    from concurrent.futures import FIRST_COMPLETED, wait

    pending = iter(enumerate(tasks))
    running: dict[Future[ResultT], int] = {}
    in_order: _InOrder[ResultT] = _InOrder()

    def start(index: int, task: ItemT) -> Future[ResultT]:
        return submit(task_fn, task)

    _fill(pending, running, in_order, window, start)
    while running:
        done, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in done:
            yield from in_order.put(running.pop(future), future.result())
        _fill(pending, running, in_order, window, start)


# ------------------------------------------------------------------------------ Dask


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise EngineUnavailableError(
            f"the dask engine needs the optional dask extra: {EXTRA_HINT}"
        ) from None
    return distributed


@contextmanager
def _dask_client(
    scheduler: str | None,
    jobs: int,
    timeout: float = SCHEDULER_TIMEOUT,
    *,
    dashboard: bool = False,
) -> Iterator[Any]:
    """A client of the scheduler at ``scheduler`` (given up on after ``timeout`` seconds),
    or of a new local cluster of ``jobs`` single-threaded worker processes (closed again on
    exit), with a dashboard on a free loopback port when ``dashboard`` asks for one."""
    distributed = _distributed()
    if scheduler:
        try:
            client = distributed.Client(scheduler, timeout=timeout, set_as_default=False)
        except (OSError, TimeoutError, ValueError, TypeError) as error:
            raise EngineUnavailableError(
                f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s: {error}"
            ) from None
        with client:
            yield client
        return
    # Loopback only: a local cluster is a private pool, not a service. The scheduler's small
    # HTTP endpoint (health, metrics) always starts; a free loopback port keeps it off the
    # network and away from another cluster's default port. The dashboard (which needs
    # bokeh) starts only for someone watching a terminal.
    with (
        distributed.LocalCluster(
            n_workers=jobs,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            scheduler_kwargs={"dashboard": dashboard},
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as client,
    ):
        yield client


@contextmanager
def _dask_errors(scheduler: str | None) -> Iterator[None]:
    """Turn a cluster that failed under a run into an error naming what was lost.

    A worker lost in the middle of a run is Dask's to handle: the scheduler reruns its
    tasks on the others (every task is a pure read), and the merge order does not depend on
    who ran what, so the bytes are the same. A task whose every worker died
    (``KilledWorker``, which names the last one) or a scheduler that went away ends the run
    with a usage-level error instead of a traceback.
    """
    distributed = _distributed()
    where = f"the Dask cluster at {scheduler}" if scheduler else "the local Dask cluster"
    try:
        yield
    except distributed.KilledWorker as error:
        raise EngineUnavailableError(
            f"{where} lost every worker that ran a task, so the run stopped: {error}"
        ) from None
    except distributed.comm.CommClosedError as error:
        raise EngineUnavailableError(
            f"{where} closed the connection in the middle of the run: {error}"
        ) from None


def _dashboard_link(client: Any) -> str | None:
    """The dashboard's address, when the scheduler runs one."""
    try:
        services = client.scheduler_info().get("services", {})
    except Exception:
        return None
    if "dashboard" not in services:
        return None
    try:
        return str(client.dashboard_link)
    except Exception:
        return None


def _dask_workers(client: Any) -> int:
    return max(1, int(sum(client.nthreads().values())))


def _settled(future: Any, result: Any) -> Any:
    """A finished future's result as ``as_completed(with_results=True)`` handed it over.

    ``as_completed`` raises a task's error only if the future still says "error" when the
    result is taken; when the scheduler has moved the key on meanwhile (a lost worker, a
    rescheduled gather under load) it hands over the error triple ``(type, exception,
    traceback)`` as if it were the result. Our tasks never return such a triple, so one
    means: ask the future itself, which raises the error or waits for the rerun's value.
    """
    if type(result) is tuple and len(result) == 3 and isinstance(result[1], BaseException):
        return future.result()
    return result


def _dask_ordered(
    tasks: Sequence[ItemT],
    task_fn: Callable[[ItemT], ResultT],
    client: Any,
    window: int,
) -> Iterator[ResultT]:
    distributed = _distributed()
    pending = iter(enumerate(tasks))
    running: dict[Any, int] = {}
    in_order: _InOrder[ResultT] = _InOrder()
    # with_results: results are gathered in the background as tasks finish; batches() hands
    # over everything finished so far at once, instead of one round trip per task.
    completed = distributed.as_completed(with_results=True, loop=client.loop)

    def start(index: int, task: ItemT) -> Any:
        # pure=False: the same file listed twice is measured twice, never deduplicated.
        # Earlier tasks get higher priority, so the head of the line is never starved.
        future = client.submit(task_fn, task, pure=False, priority=-index)
        completed.add(future)
        return future

    _fill(pending, running, in_order, window, start)
    for finished in completed.batches():
        arrived = [(running.pop(future), _settled(future, result)) for future, result in finished]
        # These were the last references to the futures: their results leave the workers.
        del finished
        for index, result in arrived:
            yield from in_order.put(index, result)
        del arrived
        _fill(pending, running, in_order, window, start)


# -------------------------------------------------------------------------- generic


def map_ordered(
    items: Sequence[ItemT],
    map_fn: Callable[[ItemT], ResultT],
    *,
    combine: Callable[[ResultT, ResultT], ResultT] | None = None,
    engine: str = "local",
    jobs: int = 1,
    scheduler: str | None = None,
    window: int | None = None,
    batch: int | None = None,
    scheduler_timeout: float = SCHEDULER_TIMEOUT,
    progress: ProgressSink | None = None,
) -> Iterator[ResultT]:
    """``map_fn`` over ``items`` on an engine; results come back in item order.

    ``local`` maps in this process; ``processes`` in a pool of ``jobs`` processes;
    ``dask`` on the cluster at ``scheduler`` (or a local cluster of ``jobs`` workers).
    For the last two, ``map_fn``, ``combine`` and the items must pickle (module-level
    functions, or :func:`functools.partial` of them).

    With ``combine`` (an ordered merge: ``combine(a, b)`` is the result of ``a``'s items
    followed by ``b``'s), runs of ``batch`` consecutive items become one task and the
    worker yields their combined result; ``batch=None`` picks a size from the number of
    items and workers. At most ``window`` tasks are in flight or held at once. A scheduler
    that does not answer within ``scheduler_timeout`` seconds is an
    :class:`EngineUnavailableError`. ``progress`` hears how many Dask workers run and where
    the dashboard of a cluster started here is (it then gets one, on loopback).
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}")
    if engine == "dask":
        if items:
            dashboard = progress is not None
            with (
                _dask_client(scheduler, jobs, scheduler_timeout, dashboard=dashboard) as client,
                _dask_errors(scheduler),
            ):
                workers = _dask_workers(client)
                if progress is not None:
                    progress.cluster(workers, _dashboard_link(client))
                tasks, task_fn = _tasks(items, map_fn, combine, batch, workers)
                yield from _dask_ordered(tasks, task_fn, client, _window(window, workers))
        return
    if engine == "local" or jobs <= 1 or len(items) <= 1:
        for item in items:
            yield map_fn(item)
        return
    tasks, task_fn = _tasks(items, map_fn, combine, batch, jobs)
    yield from _pool_ordered(tasks, task_fn, jobs, _window(window, jobs))


def map_merge(
    items: Sequence[ItemT],
    map_fn: Callable[[ItemT], ResultT],
    merge_fn: Callable[[AccumulatorT, ResultT], AccumulatorT],
    initial: AccumulatorT,
    *,
    combine: Callable[[ResultT, ResultT], ResultT] | None = None,
    **settings: Unpack[EngineSettings],
) -> AccumulatorT:
    """Fold ``merge_fn(accumulator, map_fn(item))`` over ``items`` in item order.

    The maps run wherever the :class:`EngineSettings` say (see :func:`map_ordered`, also
    for ``combine`` and ``batch``; the defaults are its own); the merges run here, one
    result at a time as soon as it is next in line, so the answer is the same on every
    engine whenever ``merge_fn`` and ``combine`` are ordered (associative) merges.

    >>> map_merge(["a", "bb", "ccc"], len, lambda total, n: total + n, 0)
    6
    """
    accumulator = initial
    for result in map_ordered(items, map_fn, combine=combine, **settings):
        accumulator = merge_fn(accumulator, result)
    return accumulator
