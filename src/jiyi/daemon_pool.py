"""A thread pool that still takes work while the interpreter exits.

A sync `Memory` that is never closed (mem0's has no close()) finishes its last adds' work from an `atexit` hook
(sync_bridge.py). That work runs on thread pools: the event loop's default executor (asyncio.to_thread), the read
and write paths' pools, e5's model thread. A `concurrent.futures.ThreadPoolExecutor` refuses new work from the
moment concurrent.futures' own exit hook has run, which is before any `atexit` hook, so jiyi's pools are this class
instead: daemon worker threads (they keep running while `atexit` hooks run, where non-daemon ones would already have
been joined) and no global shutdown flag. One `atexit` hook, registered when this module is imported and so run
after every hook registered later (a Memory's settle), waits for the work the pools were given, as
concurrent.futures does for its own pools at exit.

It subclasses ThreadPoolExecutor only because asyncio's `loop.set_default_executor` accepts nothing else (Python
3.11); none of the base class's machinery or state is used, and no private name of concurrent.futures is touched.
Workers start as work arrives; an `atexit` hook may start one on 3.11 and 3.13 (tried), not on 3.12.1, which refuses
new threads from then on: there the exit's settle fails with a warning if it needs a new worker, and the next
process takes the turns up.
"""

from __future__ import annotations

import atexit
import os
import queue
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

T = TypeVar("T")
P = ParamSpec("P")

_Job = tuple[Future[Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]]
# asyncio's default executor has this many threads at most (ThreadPoolExecutor's default): the sync facade's loop
# keeps it.
DEFAULT_WORKERS = min(32, (os.cpu_count() or 1) + 4)


class DaemonThreadPool(ThreadPoolExecutor):
    """`max_workers` daemon threads, started as work arrives while none is idle, kept until shutdown() or until the
    pool is garbage-collected."""

    def __init__(self, max_workers: int = DEFAULT_WORKERS, thread_name_prefix: str = "jiyi-pool") -> None:
        # The base class's __init__ is not called: its queue, threads and locks would be dead state (see above).
        if max_workers <= 0:
            raise ValueError("max_workers must be greater than 0")
        self.max_workers = max_workers
        self.thread_name_prefix = thread_name_prefix
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()  # None: the workers stop
        self._idle_workers = threading.Semaphore(0)  # released by a worker each time it finishes a job
        self._workers: list[threading.Thread] = []
        self._accepting = threading.Lock()
        self._closed = False
        # The workers hold the queue, not the pool: a pool nobody holds any more is collected, and its workers stop.
        # Not at exit (the atexit hook below finishes the pools' work first).
        weakref.finalize(self, self._jobs.put, None).atexit = False
        _pools.add(self)

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()
        with self._accepting:
            if self._closed:
                raise RuntimeError(f"{self.thread_name_prefix}: cannot take new work after shutdown")
            self._jobs.put((future, fn, args, kwargs))
            # A worker that has finished a job is waiting for the next (as ThreadPoolExecutor decides it).
            if not self._idle_workers.acquire(blocking=False) and len(self._workers) < self.max_workers:
                worker = threading.Thread(target=_work, args=(self._jobs, self._idle_workers), daemon=True,
                                          name=f"{self.thread_name_prefix}_{len(self._workers)}")
                worker.start()
                self._workers.append(worker)
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Take no more work; the workers stop once the jobs queued before are done (`cancel_futures`: those not
        started are cancelled instead). `wait`: until they have."""
        with self._accepting:
            self._closed = True
            if cancel_futures:
                while True:
                    try:
                        job = self._jobs.get_nowait()
                    except queue.Empty:
                        break
                    if job is not None:
                        job[0].cancel()
            self._jobs.put(None)
            workers = list(self._workers)
        if wait:
            for worker in workers:
                if worker is not threading.current_thread():
                    worker.join()


def _work(jobs: queue.SimpleQueue[_Job | None], idle: threading.Semaphore) -> None:
    while (job := jobs.get()) is not None:
        _run(*job)
        del job  # nothing of a finished job is kept alive while the worker waits for the next
        idle.release()
    jobs.put(None)  # the next worker stops too


def _run(future: Future[Any], fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if not future.set_running_or_notify_cancel():
        return
    try:
        result = fn(*args, **kwargs)
    except BaseException as exc:  # as ThreadPoolExecutor: the caller sees it through the future
        future.set_exception(exc)
    else:
        future.set_result(result)


_pools: weakref.WeakSet[DaemonThreadPool] = weakref.WeakSet()


@atexit.register
def _finish_every_pool() -> None:
    """At exit, after the hooks that gave the pools their last work: wait for it, as concurrent.futures waits for
    the work of its pools."""
    for pool in list(_pools):
        pool.shutdown(wait=True)
