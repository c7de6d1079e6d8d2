"""Short leases, renewed while their work runs.

A claimed turn, a scope's decision lock and a maintenance pass's hold on a user are leases in the store: whoever
holds one may die without letting go, and then the lease running out is what frees the work for another process.
A long lease hides that work for as long (300 s was what a crashed server's turns waited). So leases are short, and
the live holder renews its own on a heartbeat for as long as the work takes, however slow it is.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import Executor
from contextlib import asynccontextmanager
from typing import Any

log = logging.getLogger(__name__)

# The heartbeat renews a lease this many times per lease: two renewals may fail or come late before it runs out.
BEATS_PER_LEASE = 3


@asynccontextmanager
async def renewed(renew: Callable[[], Awaitable[object]], lease: float, what: str) -> AsyncIterator[None]:
    """Await `renew()` every `lease` / BEATS_PER_LEASE seconds while the block runs; the heartbeat is a task owned by
    the block, stopped when it ends. `renew` must leave alone a lease that was let go (a renewal still running when
    the block ends may land after it). A renewal that fails is logged and tried again at the next beat."""

    async def beat() -> None:
        while True:
            await asyncio.sleep(lease / BEATS_PER_LEASE)
            try:
                await renew()
            except Exception:  # the store is failing: the next beat tries again, the lease may run out meanwhile
                log.warning("could not renew the lease of %s", what, exc_info=True)

    heartbeat = asyncio.get_running_loop().create_task(beat(), name=f"jiyi-lease {what}")
    try:
        yield
    finally:
        heartbeat.cancel()
        try:
            await heartbeat
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():  # the block's own task is being cancelled: pass it on
                raise


async def let_go(release: Callable[..., Any], *args: Any, executor: Executor | None = None) -> None:
    """Run a lease's `release(*args)` on a worker thread to its end, also when the awaiting task is cancelled
    meanwhile. Cancelling the wait would cancel the call while it is still queued for a thread — as when asyncio.run
    ends and cancels the tasks left, one of them just asking to let go of a scope's decision lock — and the lease would
    stay held in the store, for every process, until it ran out (20 adds at once, then asyncio.run returning: one run
    in three waited out the 10 s decision lock). The call is a future, not a task, so the loop's end does not cancel
    it either; the caller still sees its CancelledError."""
    call = functools.partial(contextvars.copy_context().run, release, *args)
    await asyncio.shield(asyncio.get_running_loop().run_in_executor(executor, call))
