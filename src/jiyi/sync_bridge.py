"""How the synchronous facade calls the asynchronous one: a private event loop on a daemon thread (so `Memory`
works inside programs that already run an event loop), sync methods made from their async twins (one signature,
written once), and the exit hook that finishes the work a never-closed facade left running."""

from __future__ import annotations

import asyncio
import atexit
import functools
import logging
import threading
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from jiyi.daemon_pool import DaemonThreadPool

log = logging.getLogger(__name__)
T = TypeVar("T")
P = ParamSpec("P")
A = TypeVar("A")
A_co = TypeVar("A_co", covariant=True)


class LoopThread:
    """A private event loop on a daemon thread: lets sync code call async code from anywhere.

    `settle`: the work to finish at interpreter exit if the loop was not stopped first (for at most
    `settle_seconds`): a script written for mem0 never closes its Memory (mem0's has no close()), so the process
    would end while the messages of its last adds were still being embedded as evidence, leaving them unsearchable
    until a worker took the turns up.

    How that works with public APIs only: the loop's default executor (asyncio.to_thread) is a DaemonThreadPool, as
    are the read and write paths' pools and e5's thread, so the work still runs once concurrent.futures has refused
    new work to its own pools at exit; and the hook is a plain `atexit` one, which runs while daemon threads (this
    loop's, the pools') still do, and before daemon_pool's own hook waits for the pools' last work."""

    def __init__(self, settle: Callable[[], Coroutine[Any, Any, None]] | None = None,
                 settle_seconds: float = 30.0) -> None:
        self.loop = asyncio.new_event_loop()
        self._executor = DaemonThreadPool(thread_name_prefix="jiyi-sync-io")
        self.loop.set_default_executor(self._executor)
        self._thread = threading.Thread(target=self.loop.run_forever, name="jiyi-sync", daemon=True)
        self._thread.start()
        self._settle, self._settle_seconds = settle, settle_seconds
        self._stopped = False
        # Held weakly: a facade that was collected (and so closed or abandoned) is not kept alive for the exit.
        self._exit_hook = functools.partial(_settle_if_alive, weakref.ref(self))
        if settle is not None:
            atexit.register(self._exit_hook)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        self._stopped = True
        atexit.unregister(self._exit_hook)  # a process that makes many Memories does not keep a hook for each
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        self._executor.shutdown(wait=False)

    def settle_at_exit(self) -> None:
        if self._stopped or self._settle is None:
            return
        try:
            self.run(asyncio.wait_for(self._settle(), self._settle_seconds))
        except Exception as exc:  # the turns stay leased: a worker (or the next process_pending) finishes them
            log.warning("at exit, the last adds' evidence was not finished (%s: %s)", type(exc).__name__, exc)


def _settle_if_alive(loop_ref: weakref.ref[LoopThread]) -> None:
    loop = loop_ref()
    if loop is not None:
        loop.settle_at_exit()


class Bridged(Protocol[A_co]):
    """A sync facade: its async twin and the loop thread its calls run on."""

    @property
    def aio(self) -> A_co: ...

    @property
    def _loop(self) -> LoopThread: ...


def sync_of(method: Callable[Concatenate[A, P], Coroutine[Any, Any, T]]) -> Callable[Concatenate[Bridged[A], P], T]:
    """The sync twin of an async method: its parameters (type checkers and IDEs see them through P; help() and
    inspect.signature through __wrapped__), run to completion on the facade's loop thread."""

    @functools.wraps(method)
    def call(self: Bridged[A], /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._loop.run(method(self.aio, *args, **kwargs))

    call.__qualname__ = f"Memory.{method.__name__}"
    return call
