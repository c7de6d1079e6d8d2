"""How the synchronous facade calls the asynchronous one: a private event loop on a daemon thread (so `Memory`
works inside programs that already run an event loop), sync methods made from their async twins (one signature,
written once), and the exit hook that finishes a never-closed Memory's work."""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures.thread  # noqa: F401  # its exit hook registered before ours: ours runs first (see below)
import contextlib
import threading
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
Owner = TypeVar("Owner")


class LoopThread:
    """A private event loop on a daemon thread: lets sync code call async code from anywhere."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="jiyi-sync", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)


def at_exit(owner: Owner, finish: Callable[[Owner], None]) -> None:
    """Call `finish(owner)` when the interpreter exits, unless the owner was collected first (held weakly)."""
    register = getattr(threading, "_register_atexit", atexit.register)
    with contextlib.suppress(RuntimeError):  # the interpreter is already shutting down
        register(_finish_if_alive, weakref.ref(owner), finish)


def _finish_if_alive(owner_ref: weakref.ref[Owner], finish: Callable[[Owner], None]) -> None:
    owner = owner_ref()
    if owner is not None:
        finish(owner)
